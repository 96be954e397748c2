import Foundation

/// Talks to the Cash App Customer Request API as Pay Kit does: `Authorization: Client <client id>`, JSON in snake_case,
/// a 5 s timeout per request, and an error body (`errors[]`) read as a failure whatever the HTTP status.
struct CashAppClient: Sendable {
    let context: OperationContext
    let baseURL: String
    let clientID: String

    static let requiredConfiguration = ["CASHAPP_API_URL", "CASHAPP_CLIENT_ID"]

    init(_ context: OperationContext) throws(Diagnostic) {
        let config = context.configuration
        try config.require(Self.requiredConfiguration, for: "Cash App customer requests")
        self.context = context
        baseURL = HTTPURL.base(config.value("CASHAPP_API_URL")!)
        clientID = try config.headerValue("CASHAPP_CLIENT_ID")!
    }

    /// Creates the customer request. The body carries its idempotency key, so a repeat after a lost answer gets the
    /// same request back rather than a second one.
    func create(_ body: JSON) async throws(Diagnostic) -> CustomerRequest {
        try await send("POST", CashAppProtocol.requestsPath, body: body, idempotent: true).request(
            "creating the customer request")
    }

    func retrieve(_ id: String) async throws(Diagnostic) -> CustomerRequest {
        try await send("GET", CashAppProtocol.requestPath(id), body: nil, idempotent: false).request(
            "reading customer request \(id)")
    }

    func update(_ id: String, _ body: JSON) async throws(Diagnostic) -> CustomerRequest {
        try await send("PATCH", CashAppProtocol.requestPath(id), body: body, idempotent: false).request(
            "updating customer request \(id)")
    }

    private func send(
        _ method: String, _ path: String, body: JSON?, idempotent: Bool
    ) async throws(Diagnostic) -> CashAppResponse {
        let url = baseURL + path
        let data = body.map(\.data)
        let authorization = "Client \(clientID)"
        let timeout = min(context.requestTimeout, CashAppProtocol.cashAppRequestTimeout)
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            var headers: HTTPHeaders = ["Authorization": authorization, "Accept": "application/json"]
            if data != nil { headers["Content-Type"] = "application/json" }
            return HTTPClientRequest(
                method: method, url: url, headers: headers, body: data, timeout: timeout, idempotent: idempotent)
        }
        return try CashAppResponse(response, hint: context.garbledHint(endpoint: CashAppResponse.endpointHint))
    }
}

/// A customer request as the API returns it (`{"request": {…}}`), with what the approval loop reads from it.
struct CustomerRequest: Sendable {
    let document: JSON
    /// The HTTP status of the answer it came in.
    let status: Int
    var json: JSON { document["request"] ?? .null }
    var id: String? { json["id"]?.stringValue }
    var state: String? { json["status"]?.stringValue }
    var mobileURL: String? { json["auth_flow_triggers"]?["mobile_url"]?.stringValue }
    var refreshesAt: String? { json["auth_flow_triggers"]?["refreshes_at"]?.stringValue }
    var customerID: String? { json["customer_profile"]?["id"]?.stringValue }
    var grants: [JSON] { json["grants"]?.arrayValue ?? [] }
    /// The grant to pay with: the first active one (Pay Kit hands the integrator `grants`; the integration guide takes
    /// the first, see docs/protocols/cashapp-afterpay.md).
    var grant: JSON? { grants.first { $0["status"]?.stringValue ?? "ACTIVE" == "ACTIVE" } }
}

/// A Cash App answer: an `errors` array is a failure whatever the status (the SDK ignores the status, too).
struct CashAppResponse: Sendable {
    let status: Int
    let document: JSON
    let outcomeOpen: Bool

    static let endpointHint = "check CASHAPP_API_URL points at the Customer Request API (see the answer with -v)"

    init(_ response: HTTPClientResponse, hint: String) throws(Diagnostic) {
        status = response.status
        outcomeOpen = response.outcomeOpen
        document = try response.jsonDocument(service: "Cash App", hint: hint)
    }

    /// The first error's category and code, when the body has `errors`.
    var error: (category: String, code: String, detail: String, field: String?)? {
        guard let first = document["errors"]?.arrayValue?.first else { return nil }
        return (
            first["category"]?.stringValue ?? "?", first["code"]?.stringValue ?? "?",
            first["detail"]?.stringValue ?? "",
            first["field"]?.stringValue
        )
    }

    func request(_ what: String) throws(Diagnostic) -> CustomerRequest {
        if let e = error {
            let field = e.field.map { " (field \($0))" } ?? ""
            let message = "\(what) failed: Cash App answered \(status) \(e.category) \(e.code)\(field): \(e.detail)"
            switch (e.category, e.code) {
            case ("AUTHENTICATION_ERROR", _):
                throw .configuration(
                    message, hint: "check CASHAPP_CLIENT_ID (the sandbox Pay Kit client id is CAS-CI_AFTERPAY)")
            case (_, "IDEMPOTENCY_KEY_REUSED"):
                throw .failure(
                    message,
                    hint:
                        "this idempotency key went out with another body; `checkout-driver cashapp request` makes a new key when the request changes"
                )
            case (_, "NOT_FOUND"):
                throw .failure(
                    message,
                    hint:
                        "check the request id; under --env local each command's embedded emulator forgets its requests: run `checkout-driver sandbox serve` to chain commands"
                )
            case ("RATE_LIMIT_ERROR", _), ("API_ERROR", _):
                throw .unavailable(message, hint: "Cash App is not available right now; try again later")
            default:
                throw .failure(message, hint: "see the request and answer with -v")
            }
        }
        guard (200..<300).contains(status), let request = document["request"], request["id"]?.stringValue != nil else {
            let message =
                "\(what) failed: Cash App answered \(status) without a request: \(document.serialized().prefix(200))"
            throw status >= 500
                ? .unavailable(message, hint: "try again later")
                : .failure(message, hint: "check CASHAPP_API_URL (see the answer with -v)")
        }
        return CustomerRequest(document: document, status: status)
    }
}
