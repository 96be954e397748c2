import Crypto
import Foundation
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// The three callers of the Afterpay + Cash App emulator over real HTTP: a merchant server (v2, Basic auth), the SDK
/// (api-plus, no auth) and Pay Kit (Cash App, Client auth), plus the sandbox customer.
struct CashAppTestClient {
    let emulator: Emulator
    var port: UInt16 { emulator.port }

    static let basicAuth =
        "Basic "
        + Data("\(TestCredentials.afterpayMerchantID):\(TestCredentials.afterpaySecretKey)".utf8).base64EncodedString()
    static let clientAuth = "Client " + TestCredentials.cashAppClientID
    static let userAgent = "checkout-driver/test (Swift; Linux) Merchant/\(TestCredentials.afterpayMerchantID)"

    private func send(_ method: String, _ path: String, _ body: Any?, headers: [(String, String)]) throws -> RawResponse
    {
        var all = headers
        var data = Data()
        if let body {
            data = try JSONSerialization.data(withJSONObject: body)
            all.append(("Content-Type", "application/json"))
        }
        return try rawRequest(port: port, method: method, path: path, headers: all, body: data)
    }

    /// Afterpay v2, with Basic auth and a User-Agent unless `headers` says otherwise.
    func afterpay(
        _ method: String, _ path: String, _ body: Any? = nil,
        headers: [(String, String)] = [("Authorization", basicAuth), ("User-Agent", userAgent)]
    ) throws -> RawResponse {
        try send(method, "/afterpay/v2" + path, body, headers: headers)
    }

    func plus(_ path: String, _ body: Any, headers: [(String, String)] = []) throws -> RawResponse {
        try send("POST", "/afterpay-plus" + path, body, headers: headers)
    }

    func cashApp(
        _ method: String, _ path: String = "", _ body: Any? = nil,
        headers: [(String, String)] = [("Authorization", clientAuth)]
    ) throws -> RawResponse {
        try send(method, "/cashapp/customer-request/v1/requests" + path, body, headers: headers)
    }

    func sandbox(_ method: String, _ path: String, _ body: Any? = nil) throws -> RawResponse {
        try send(method, "/_sandbox/cashapp" + path, body, headers: [])
    }

    // MARK: Steps

    static func checkoutBody(_ amount: String) -> [String: Any] {
        [
            "amount": ["amount": amount, "currency": "USD"], "consumer": ["email": "ada@example.com"],
            "merchant": [
                "redirectConfirmUrl": "https://shop.example/confirm",
                "redirectCancelUrl": "https://shop.example/cancel",
            ],
            "isCashAppPay": true,
        ]
    }

    func checkout(_ amount: String = "50.00") throws -> String {
        let response = try afterpay("POST", "/checkouts", Self.checkoutBody(amount))
        #expect(response.status == 201)
        return try #require(response.json["token"] as? String)
    }

    /// sign-payment: the JWT and its decoded payload.
    func sign(_ token: String) throws -> (jwt: String, payload: [String: Any]) {
        let response = try plus("/v2/payments/sign-payment", ["token": token])
        #expect(response.status == 200)
        let jwt = try #require(response.json["jwtToken"] as? String)
        return (jwt, try Self.decodePart(jwt, 1))
    }

    static func decodePart(_ jwt: String, _ index: Int) throws -> [String: Any] {
        let part = jwt.split(separator: ".", omittingEmptySubsequences: false)[index]
        let data = try #require(Data(base64URLEncoded: String(part)))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func requestBody(
        cents: Any, key: String = UUID().uuidString, scope: String = TestCredentials.afterpayExternalBrandID,
        redirect: String? = "https://shop.example/confirm"
    ) -> [String: Any] {
        var request: [String: Any] = [
            "actions": [["type": "ONE_TIME_PAYMENT", "scope_id": scope, "amount": cents, "currency": "USD"]],
            "channel": "IN_APP",
        ]
        if let redirect { request["redirect_url"] = redirect }
        return ["request": request, "idempotency_key": key]
    }

    /// Creates a customer request; the `request` object of the answer.
    func createRequest(cents: Int) throws -> [String: Any] {
        let response = try cashApp("POST", "", Self.requestBody(cents: cents))
        #expect(response.status == 201)
        return try #require(response.json["request"] as? [String: Any])
    }

    func poll(_ id: String) throws -> [String: Any] {
        let response = try cashApp("GET", "/" + id)
        #expect(response.status == 200)
        return try #require(response.json["request"] as? [String: Any])
    }

    /// A request the customer approved (auto approval: the second poll decides it).
    func approvedRequest(cents: Int) throws -> (customer: String, grant: String, request: [String: Any]) {
        let id = try #require(try createRequest(cents: cents)["id"] as? String)
        _ = try poll(id)
        let request = try poll(id)
        let grant = try #require((request["grants"] as? [[String: Any]])?.first)
        return (try #require(grant["customer_id"] as? String), try #require(grant["id"] as? String), request)
    }

    func validate(_ jwt: String, customer: String, grant: String) throws -> RawResponse {
        try plus(
            "/v2/payments/validate-payment", ["jwt": jwt, "externalCustomerId": customer, "externalGrantId": grant])
    }

    /// A checkout taken through sign, an approved request and a SUCCESS validate: ready to capture or auth.
    func validatedCheckout(_ amount: String, cents: Int) throws -> String {
        let token = try checkout(amount)
        let (jwt, _) = try sign(token)
        let approved = try approvedRequest(cents: cents)
        let response = try validate(jwt, customer: approved.customer, grant: approved.grant)
        #expect(response.json["status"] as? String == "SUCCESS")
        return token
    }

    func setSettings(_ settings: [String: Any]) throws {
        let response = try sandbox("PUT", "/settings", settings)
        #expect(response.status == 200)
    }

    func afterpayLedger() -> [Ledger.Entry] { emulator.ledger.entries().filter { $0.provider == "afterpay" } }
}

extension RawResponse {
    /// Afterpay's `errorCode`, checked to come with the rest of its error shape.
    var afterpayError: String? {
        let json = self.json
        guard json["errorId"] is String, json["message"] is String, json["httpStatusCode"] as? Int == status else {
            return nil
        }
        return json["errorCode"] as? String
    }

    /// Cash App's first error: (category, code, field).
    var cashAppError: (category: String?, code: String?, field: String?) {
        let first = (json["errors"] as? [[String: Any]])?.first
        return (first?["category"] as? String, first?["code"] as? String, first?["field"] as? String)
    }

    var request: [String: Any] { json["request"] as? [String: Any] ?? [:] }
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Runs `body` against a started emulator and shuts it down afterwards.
func withCashApp<T>(_ body: (CashAppTestClient) throws -> T) throws -> T {
    let emulator = try Emulator()
    emulator.start()
    defer { emulator.shutdown() }
    return try body(CashAppTestClient(emulator: emulator))
}
