import Foundation
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// The two callers of the Braintree emulator over real HTTP: the app's SDK (client API, a tokenization key or a
/// client token's fingerprint) and the merchant's server (GraphQL, Basic auth and `Braintree-Version`), with
/// documents valid against Braintree's published schema.
struct BraintreeTestClient {
    let emulator: Emulator
    var port: UInt16 { emulator.port }

    static let basicAuth =
        "Basic "
        + Data("\(TestCredentials.braintreePublicKey):\(TestCredentials.braintreePrivateKey)".utf8)
        .base64EncodedString()
    static let graphQLHeaders = [
        ("Authorization", basicAuth), ("Braintree-Version", "2019-01-01"), ("Content-Type", "application/json"),
    ]
    static let merchant = TestCredentials.braintreeMerchantID
    static let key = TestCredentials.braintreeTokenizationKey

    // MARK: Client API

    func configuration(
        merchant: String = merchant, key: String? = key, fingerprint: String? = nil
    ) throws -> RawResponse {
        var path = "/braintree/merchants/\(merchant)/client_api/v1/configuration?configVersion=3"
        if let fingerprint {
            path +=
                "&authorization_fingerprint=" + fingerprint.addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics)!
        }
        return try rawRequest(port: port, method: "GET", path: path, headers: key.map { [("Client-Key", $0)] } ?? [])
    }

    static func tokenizationBody(_ bytes: Data, transactionIdentifier: String?) -> [String: Any] {
        var token: [String: Any] = [
            "paymentData": bytes.base64EncodedString(), "paymentInstrumentName": "Visa 4242", "paymentNetwork": "Visa",
        ]
        if let transactionIdentifier { token["transactionIdentifier"] = transactionIdentifier }
        return [
            "applePaymentToken": token,
            "_meta": [
                "integration": "custom", "source": "app", "platform": "checkout-driver", "sessionId": UUID().uuidString,
            ],
        ]
    }

    func tokenize(
        _ token: TestApplePayToken, key: String? = key, fingerprint: String? = nil, merchant: String = merchant
    ) throws -> RawResponse {
        try tokenize(
            body: Self.tokenizationBody(token.bytes, transactionIdentifier: token.transactionId.uppercased()),
            key: key, fingerprint: fingerprint, merchant: merchant)
    }

    func tokenize(
        body: [String: Any], key: String? = key, fingerprint: String? = nil, merchant: String = merchant
    ) throws -> RawResponse {
        var body = body
        if let fingerprint { body["authorization_fingerprint"] = fingerprint }
        var headers = [("Content-Type", "application/json; charset=utf-8"), ("Accept", "application/json")]
        if let key { headers.append(("Client-Key", key)) }
        return try rawRequest(
            port: port, method: "POST",
            path: "/braintree/merchants/\(merchant)/client_api/v1/payment_methods/apple_payment_tokens",
            headers: headers, body: try JSONSerialization.data(withJSONObject: body))
    }

    /// A fresh Apple Pay token tokenized into a nonce.
    func nonce(amount: Int = 1000, currency: String = "840", pan: String = "4817499999994242") throws -> String {
        let response = try tokenize(try TestApplePayToken.make(amount: amount, currency: currency, pan: pan))
        #expect(response.status == 201)
        return try #require((response.json["applePayCards"] as? [[String: Any]])?.first?["nonce"] as? String)
    }

    // MARK: GraphQL

    func post(
        _ query: String, _ variables: [String: Any] = [:], headers: [(String, String)] = graphQLHeaders
    ) throws -> RawResponse {
        try rawRequest(
            port: port, method: "POST", path: "/braintree/graphql", headers: headers,
            body: try JSONSerialization.data(withJSONObject: ["query": query, "variables": variables]))
    }

    /// A GraphQL call: HTTP 200 always, with the envelope's requestId.
    func graphQL(_ query: String, _ variables: [String: Any] = [:]) throws -> [String: Any] {
        let response = try post(query, variables)
        #expect(response.status == 200)
        let json = response.json
        #expect((json["extensions"] as? [String: Any])?["requestId"] is String)
        return json
    }

    static let transactionParts = """
        fragment TransactionParts on Transaction {
          id legacyId status orderId createdAt merchantAccountId
          amount { value currencyCode }
          paymentMethodSnapshot { __typename ... on CreditCardDetails { brandCode last4 origin { type } } }
        }
        """

    static let charge =
        "mutation Charge($input: ChargePaymentMethodInput!) { chargePaymentMethod(input: $input) { transaction { ...TransactionParts } } }\n"
        + transactionParts
    static let authorize =
        "mutation Authorize($input: AuthorizePaymentMethodInput!) { authorizePaymentMethod(input: $input) { transaction { ...TransactionParts } } }\n"
        + transactionParts
    static let capture =
        "mutation Capture($input: CaptureTransactionInput!) { captureTransaction(input: $input) { transaction { ...TransactionParts } } }\n"
        + transactionParts
    static let reverse =
        "mutation Void($input: ReverseTransactionInput!) { reverseTransaction(input: $input) { reversal { __typename ... on Transaction { ...TransactionParts } } } }\n"
        + transactionParts
    static let search =
        "query Find($input: TransactionSearchInput!, $first: Int) { search { transactions(input: $input, first: $first) { edges { cursor node { ...TransactionParts } } pageInfo { hasNextPage } } } }\n"
        + transactionParts
    static let clientToken =
        "mutation Token($input: CreateClientTokenInput) { createClientToken(input: $input) { clientToken } }"

    /// Charges (or authorizes) `nonce`; the whole response.
    func pay(_ nonce: String, _ amount: Any, orderID: String? = nil, authorize: Bool = false) throws -> [String: Any] {
        var transaction: [String: Any] = ["amount": amount]
        if let orderID { transaction["orderId"] = orderID }
        return try graphQL(
            authorize ? Self.authorize : Self.charge, ["input": ["paymentMethodId": nonce, "transaction": transaction]])
    }

    /// The transaction of a successful charge or authorization.
    func transaction(of response: [String: Any]) throws -> [String: Any] {
        let payload = try #require(Self.data(response).values.first as? [String: Any], "no payload in \(response)")
        return try #require(payload["transaction"] as? [String: Any])
    }

    func authorized(_ amount: String = "10.00") throws -> [String: Any] {
        try transaction(of: try pay("fake-apple-pay-visa-nonce", amount, authorize: true))
    }

    func capture(_ id: String, amount: String? = nil) throws -> [String: Any] {
        var input: [String: Any] = ["transactionId": id]
        if let amount { input["transaction"] = ["amount": amount] }
        return try graphQL(Self.capture, ["input": input])
    }

    func reverse(_ id: String) throws -> [String: Any] { try graphQL(Self.reverse, ["input": ["transactionId": id]]) }

    func search(orderID: String, first: Int? = nil) throws -> [[String: Any]] {
        var variables: [String: Any] = ["input": ["orderId": ["is": orderID]]]
        if let first { variables["first"] = first }
        let response = try graphQL(Self.search, variables)
        let edges =
            ((Self.data(response)["search"] as? [String: Any])?["transactions"] as? [String: Any])?["edges"]
            as? [[String: Any]]
        return (edges ?? []).compactMap { $0["node"] as? [String: Any] }
    }

    func createClientToken() throws -> [String: Any] {
        let response = try graphQL(Self.clientToken, ["input": ["clientToken": [:] as [String: Any]]])
        let token = try #require(
            (Self.data(response)["createClientToken"] as? [String: Any])?["clientToken"] as? String)
        let json = try JSONSerialization.jsonObject(with: try #require(Data(base64Encoded: token)))
        return try #require(json as? [String: Any])
    }

    func setConfiguration(_ settings: [String: Any]) throws -> RawResponse {
        try rawRequest(
            port: port, method: "PUT", path: "/_sandbox/braintree/configuration",
            headers: [("Content-Type", "application/json")],
            body: try JSONSerialization.data(withJSONObject: settings))
    }

    func ledger() -> [Ledger.Entry] { emulator.ledger.entries().filter { $0.provider == "braintree" } }

    // MARK: Reading answers

    static func data(_ response: [String: Any]) -> [String: Any] { response["data"] as? [String: Any] ?? [:] }

    static func errors(_ response: [String: Any]) -> [[String: Any]] { response["errors"] as? [[String: Any]] ?? [] }

    /// The first error's message and extensions.
    static func firstError(
        _ response: [String: Any]
    ) -> (message: String?, errorClass: String?, legacyCode: String?, inputPath: [String]?) {
        let error = errors(response).first
        let extensions = error?["extensions"] as? [String: Any]
        return (
            error?["message"] as? String, extensions?["errorClass"] as? String, extensions?["legacyCode"] as? String,
            extensions?["inputPath"] as? [String]
        )
    }
}

extension RawResponse {
    /// The client API's `error.message`.
    var braintreeMessage: String? { (json["error"] as? [String: Any])?["message"] as? String }
}

/// Runs `body` against a started emulator and shuts it down afterwards.
func withBraintree<T>(_ body: (BraintreeTestClient) throws -> T) throws -> T {
    let emulator = try Emulator()
    emulator.start()
    defer { emulator.shutdown() }
    return try body(BraintreeTestClient(emulator: emulator))
}
