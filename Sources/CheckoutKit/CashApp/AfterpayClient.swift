import Foundation

/// Talks to Afterpay for one step, through the step's context (so retries, deadline, trace and HAR are the engine's):
/// the Online API v2 with Basic auth and the required User-Agent, and the api-plus host (sign, validate, the v3
/// button) with no Authorization header, as the iOS SDK calls it.
struct AfterpayClient: Sendable {
    let context: OperationContext
    let apiURL: String
    let plusURL: String

    static let serverConfiguration = ["AFTERPAY_API_URL", "AFTERPAY_MERCHANT_ID", "AFTERPAY_SECRET_KEY"]
    static let plusConfiguration = ["AFTERPAY_PLUS_URL"]
    static let buttonConfiguration = ["AFTERPAY_PLUS_URL", "AFTERPAY_SHOP_MERCHANT_ID"]

    init(_ context: OperationContext) {
        self.context = context
        apiURL = HTTPURL.base(context.configuration.value("AFTERPAY_API_URL") ?? "")
        plusURL = HTTPURL.base(context.configuration.value("AFTERPAY_PLUS_URL") ?? "")
    }

    /// A v2 call as the merchant's server makes it. `idempotent`: Afterpay answers a repeat with the first outcome
    /// (a capture on its token, a call with a requestId), so the engine may repeat it after a lost answer.
    func server(
        _ method: String, _ path: String, body: JSON? = nil, idempotent: Bool = false
    ) async throws(Diagnostic) -> AfterpayResponse {
        let config = context.configuration
        try config.require(Self.serverConfiguration, for: "Afterpay server calls")
        let merchant = try config.headerValue("AFTERPAY_MERCHANT_ID")!
        let secret = try config.headerValue("AFTERPAY_SECRET_KEY")!
        let authorization = "Basic " + Data("\(merchant):\(secret)".utf8).base64EncodedString()
        var headers: HTTPHeaders = [
            "Authorization": authorization, "Accept": "application/json",
            "User-Agent": CashAppProtocol.userAgent(merchantID: merchant),
        ]
        if body != nil { headers["Content-Type"] = "application/json" }
        return try await send(method, apiURL + path, headers: headers, body: body, idempotent: idempotent)
    }

    /// An api-plus call: no credentials; the v3 button calls name the SDK version instead.
    func plus(_ path: String, body: JSON, sdkHeader: Bool = false) async throws(Diagnostic) -> AfterpayResponse {
        try context.configuration.require(Self.plusConfiguration, for: "Afterpay's sign, validate and button calls")
        var headers: HTTPHeaders = ["Accept": "application/json", "Content-Type": "application/json"]
        if sdkHeader { headers["X-Afterpay-SDK"] = DriverVersion.current }
        return try await send("POST", plusURL + path, headers: headers, body: body, idempotent: false)
    }

    private func send(
        _ method: String, _ url: String, headers: HTTPHeaders, body: JSON?, idempotent: Bool
    ) async throws(Diagnostic) -> AfterpayResponse {
        let data = body.map(\.data)
        let timeout = context.requestTimeout
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(
                method: method, url: url, headers: headers, body: data, timeout: timeout, idempotent: idempotent)
        }
        return try AfterpayResponse(response, hint: context.garbledHint(endpoint: AfterpayResponse.endpointHint))
    }
}

/// An Afterpay answer: its document and status, and its error — any body that decodes as
/// `{errorCode, errorId, message, httpStatusCode}` is one, whatever the HTTP status said.
struct AfterpayResponse: Sendable {
    let status: Int
    let document: JSON
    let outcomeOpen: Bool

    static let endpointHint = "check AFTERPAY_API_URL and AFTERPAY_PLUS_URL point at Afterpay (see the answer with -v)"

    init(_ response: HTTPClientResponse, hint: String) throws(Diagnostic) {
        status = response.status
        outcomeOpen = response.outcomeOpen
        document = try response.jsonDocument(service: "Afterpay", hint: hint)
    }

    var errorCode: String? { document["errorCode"]?.stringValue }

    /// The document, or a diagnostic naming Afterpay's error code (mapped on the code and status, never the message).
    func requireSuccess(_ what: String) throws(Diagnostic) -> JSON {
        if let code = errorCode {
            let id = document["errorId"]?.stringValue.map { ", errorId \($0)" } ?? ""
            let message =
                "\(what) failed: Afterpay answered \(status) \(code)\(id): \(document["message"]?.stringValue ?? "")"
            if outcomeOpen {
                throw .uncertain(
                    message, hint: "the request may have been applied; read the payment back before trying again")
            }
            switch (status, code) {
            case (401, _), (403, _), (_, "unauthorized"):
                throw .configuration(
                    message,
                    hint:
                        "check AFTERPAY_MERCHANT_ID and AFTERPAY_SECRET_KEY (the v2 Basic auth pair), or AFTERPAY_SHOP_MERCHANT_ID for the button"
                )
            case (500..., _), (_, "service_unavailable"):
                throw .unavailable(message, hint: "Afterpay had a problem; try again later")
            case (_, "invalid_token"):
                throw .failure(
                    message,
                    hint:
                        "the checkout token is unknown, expired or not approved: approve and validate it (`checkout-driver cashapp poll`, `cashapp validate`), or start a new checkout"
                )
            case (_, "invalid_order_transaction_status"):
                throw .failure(
                    message,
                    hint:
                        "the payment is not in a state that allows this (already captured, or authorised and waiting for `checkout-driver cashapp capture`)"
                )
            default:
                throw .failure(message, hint: "see the request and answer with -v")
            }
        }
        if (200..<300).contains(status) || CashAppProtocol.isDecline(document) { return document }
        let message = "\(what) failed: Afterpay answered \(status): \(document.serialized())"
        if outcomeOpen || RetryPolicy.indeterminateStatuses.contains(status) {
            throw .uncertain(message, hint: "read the payment back before trying again")
        }
        throw status >= 500 ? .unavailable(message, hint: "Afterpay had a problem; try again later") : .failure(message)
    }
}
