import Foundation

/// Talks to Braintree for one step, through the step's context (retries, deadline, trace, HAR are the engine's): the
/// client API as the iOS SDK calls it (the configuration, Apple Pay tokenization) with a tokenization key in
/// `Client-Key` or a client token's fingerprint in the body, and the GraphQL API as a merchant server calls it (Basic
/// auth, `Braintree-Version`), where failures come as `errors[]` in an HTTP 200 answer.
struct BraintreeClient: Sendable {
    let context: OperationContext

    init(_ context: OperationContext) { self.context = context }

    static let clientConfiguration = ["BRAINTREE_CLIENT_API_URL", "BRAINTREE_TOKENIZATION_KEY"]
    static let serverConfiguration = ["BRAINTREE_GRAPHQL_URL", "BRAINTREE_PUBLIC_KEY", "BRAINTREE_PRIVATE_KEY"]

    /// How the client API is authorised: the tokenization key, or a client token given instead.
    enum Authorization {
        case tokenizationKey(String, merchantID: String)
        case clientToken(BraintreeProtocol.ClientToken)
    }

    func authorization(clientToken: String?) throws(Diagnostic) -> Authorization {
        if let clientToken {
            context.redactor.register(clientToken)
            let token = try BraintreeProtocol.ClientToken(clientToken)
            context.redactor.register(token.fingerprint)
            return .clientToken(token)
        }
        try context.configuration.require(Self.clientConfiguration, for: "Braintree's client API")
        let key = try context.configuration.headerValue("BRAINTREE_TOKENIZATION_KEY")!
        guard let merchant = BraintreeProtocol.merchantID(tokenizationKey: key) else {
            throw .configuration(
                "BRAINTREE_TOKENIZATION_KEY is not a tokenization key (<environment>_<random>_<merchant id>)",
                hint: "copy it from the Control Panel (Settings → API → Tokenization Keys)")
        }
        return .tokenizationKey(key, merchantID: merchant)
    }

    /// `GET …/merchants/<id>/client_api/v1/configuration?configVersion=3`.
    func configuration(_ auth: Authorization) async throws(Diagnostic) -> JSON {
        var url: String
        var headers: HTTPHeaders = ["Accept": "application/json"]
        switch auth {
        case .tokenizationKey(let key, let merchant):
            url =
                HTTPURL.base(context.configuration.value("BRAINTREE_CLIENT_API_URL")!)
                + BraintreeProtocol.configurationPath(merchantID: merchant)
            headers["Client-Key"] = key
        case .clientToken(let token):
            let encoded =
                token.fingerprint.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token.fingerprint
            context.redactor.register(encoded)  // the URL form, which the redactor's own encodings may not cover
            url =
                token.configURL + (token.configURL.contains("?") ? "&" : "?")
                + "configVersion=3&authorization_fingerprint=" + encoded
        }
        let timeout = context.requestTimeout
        let (fixedURL, fixedHeaders) = (url, headers)
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(method: "GET", url: fixedURL, headers: fixedHeaders, timeout: timeout)
        }
        return try Self.clientAnswer(response, what: "reading the gateway configuration")
    }

    /// `POST {clientApiUrl}/v1/payment_methods/apple_payment_tokens`: the token file's exact bytes, base64, with the
    /// PassKit fields beside them. Answers the first Apple Pay card (its nonce registered as a secret).
    func tokenize(
        _ token: PaymentTokenFile, clientAPIURL: String, auth: Authorization, instrumentName: String,
        network: String
    ) async throws(Diagnostic) -> JSON {
        var body: JSON.Object = [
            "applePaymentToken": [
                "paymentData": .string(token.bytes.base64EncodedString()),
                "transactionIdentifier": .string(token.transactionId),
                "paymentInstrumentName": .string(instrumentName), "paymentNetwork": .string(network),
            ],
            "_meta": BraintreeProtocol.meta(sessionID: UUID.random().uuidString.lowercased()),
        ]
        var headers: HTTPHeaders = ["Content-Type": "application/json; charset=utf-8", "Accept": "application/json"]
        switch auth {
        case .tokenizationKey(let key, _): headers["Client-Key"] = key
        case .clientToken(let clientToken): body["authorization_fingerprint"] = .string(clientToken.fingerprint)
        }
        let url = HTTPURL.base(clientAPIURL) + BraintreeProtocol.applePayTokensPath
        let data = JSON.object(body).data
        let timeout = context.requestTimeout
        let fixedHeaders = headers
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(method: "POST", url: url, headers: fixedHeaders, body: data, timeout: timeout)
        }
        let answer = try Self.clientAnswer(response, what: "tokenizing the Apple Pay token")
        guard let card = answer["applePayCards"]?.arrayValue?.first, let nonce = card["nonce"]?.stringValue else {
            throw .unavailable(
                "Braintree's tokenization answer has no applePayCards[0].nonce",
                hint: "check BRAINTREE_CLIENT_API_URL (see the answer with -v)")
        }
        context.redactor.register(nonce)
        return card
    }

    /// A client API answer: HTTP ≥ 400 is an error carrying `error.message`.
    static func clientAnswer(_ response: HTTPClientResponse, what: String) throws(Diagnostic) -> JSON {
        let document = response.json ?? .null
        guard (200..<300).contains(response.status) else {
            let message =
                "\(what) failed: Braintree answered \(response.status): \(document["error"]?["message"]?.stringValue ?? String(decoding: response.body.prefix(200), as: UTF8.self))"
            switch response.status {
            case 401, 403:
                throw .configuration(
                    message,
                    hint: "check BRAINTREE_TOKENIZATION_KEY (or the client token) and the merchant it belongs to")
            case 429: throw .unavailable(message, hint: "Braintree is rate limiting; try again later")
            case 500...: throw .unavailable(message, hint: "Braintree had a problem; try again later")
            default: throw .failure(message, hint: "see the request and answer with -v")
            }
        }
        guard case .object = document else {
            throw .unavailable(
                "\(what) failed: Braintree answered \(response.status) with a body that is not a JSON object",
                hint: "check BRAINTREE_CLIENT_API_URL (see the answer with -v)")
        }
        return document
    }

    /// A GraphQL call as the merchant's server makes it. A mutation is never repeated once it may have reached
    /// Braintree (it has no idempotency key); a query may be.
    func graphQL(
        _ document: GraphQLDocument, _ variables: JSON.Object = [:]
    ) async throws(Diagnostic) -> GraphQLResponse {
        let config = context.configuration
        try config.require(Self.serverConfiguration, for: "Braintree's GraphQL API")
        let url = config.value("BRAINTREE_GRAPHQL_URL")!
        let credentials =
            "\(try config.headerValue("BRAINTREE_PUBLIC_KEY")!):\(try config.headerValue("BRAINTREE_PRIVATE_KEY")!)"
        let authorization = "Basic " + Data(credentials.utf8).base64EncodedString()
        let request = document.request(variables)
        let body = request.body
        let timeout = context.requestTimeout
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(
                method: "POST", url: url,
                headers: [
                    "Content-Type": "application/json", "Accept": "application/json", "Authorization": authorization,
                    BraintreeProtocol.versionHeader: BraintreeProtocol.version,
                ],
                body: body, timeout: timeout, readOnly: !request.isMutation)
        }
        if response.status == 401 || response.status == 403 {
            throw .configuration(
                "Braintree refused the API keys (HTTP \(response.status))",
                hint: "check BRAINTREE_PUBLIC_KEY and BRAINTREE_PRIVATE_KEY (Settings → API → API Keys)")
        }
        return try GraphQLResponse(
            response, service: "Braintree", mutation: request.isMutation,
            hint: context.garbledHint(
                endpoint: "check BRAINTREE_GRAPHQL_URL points at Braintree's GraphQL API (see it with -v)"))
    }

    /// Error classes that say Braintree itself failed, not the request: after a mutation the money may have moved.
    static let uncertainErrorClasses: Set<String> = ["INTERNAL", "SERVICE_AVAILABILITY", "UNKNOWN"]

    /// The payload at `field`, or exit 1 with Braintree's errors, each with its `legacyCode` and `inputPath`. For a
    /// mutation (`movesMoney`), an answer that does not settle what it did — a lost or cut-short exchange, a 5xx, an
    /// internal error class — is uncertain, so the caller reads back instead of reporting a failure.
    static func payload(
        _ response: GraphQLResponse, _ field: String, what: String, movesMoney: Bool = false
    ) throws(Diagnostic) -> JSON {
        let classes = Set(response.errors.compactMap { $0.extensions["errorClass"]?.stringValue })
        if movesMoney && (response.settlesNothing || !classes.isDisjoint(with: uncertainErrorClasses)) {
            throw .uncertain(
                "\(what) got no answer that settles it (HTTP \(response.status)\(classes.isEmpty ? "" : ", " + classes.sorted().joined(separator: ", ")))",
                hint: "the transaction may have been made; look it up before paying again")
        }
        if classes.contains("AUTHENTICATION") || classes.contains("AUTHORIZATION") {
            throw .configuration(
                "\(what) failed: Braintree refused the credentials: \(response.errors.map(\.message).joined(separator: "; "))",
                hint: "check BRAINTREE_PUBLIC_KEY and BRAINTREE_PRIVATE_KEY and the merchant they belong to")
        }
        if !response.errors.isEmpty {
            let texts = response.errors.map { error -> String in
                var parts: [String] = []
                if let code = error.extensions["legacyCode"]?.interpolationText { parts.append("legacyCode \(code)") }
                if let path = error.extensions["inputPath"]?.arrayValue {
                    parts.append("inputPath \(path.map(\.interpolationText).joined(separator: "."))")
                }
                return error.message + (parts.isEmpty ? "" : " (\(parts.joined(separator: ", ")))")
            }
            throw .failure(
                "\(what) failed: \(texts.joined(separator: "; "))",
                hint: hint(for: response.errors.first?.extensions["legacyCode"]?.interpolationText))
        }
        guard let payload = response.data[field], payload != .null else {
            throw .failure(
                "\(what) failed: Braintree's answer has no \(field)",
                hint: "check BRAINTREE_GRAPHQL_URL (see the answer with -v)")
        }
        return payload
    }

    /// Whether the answer is Braintree refusing the payment itself (the processor's or the gateway's legacy codes).
    static func isRefusal(_ response: GraphQLResponse) -> Bool {
        response.errors.contains { error in
            guard let code = error.extensions["legacyCode"].flatMap({ Int($0.interpolationText) }) else { return false }
            return (2000...3999).contains(code) || code == 5001
        }
    }

    /// What to do about a legacy code: the processor's (2xxx, 3xxx) and the gateway's (5001) rejections, a bad nonce.
    static func hint(for legacyCode: String?) -> String {
        switch legacyCode.flatMap({ Int($0) }) {
        case .some(2000...2999): "the processor declined it: nothing was charged; try another card"
        case .some(3000...3999): "the processor could not be reached: nothing was charged; try again later"
        case .some(5001): "the gateway rejected it: nothing was charged; see the reason in the message"
        case .some(91565):
            "a nonce is single-use: make a fresh one from a new Apple Pay token (`checkout-driver braintree apple-pay --token-file FILE --amount AMOUNT` tokenizes it)"
        default: "see the request and answer with -v"
        }
    }
}
