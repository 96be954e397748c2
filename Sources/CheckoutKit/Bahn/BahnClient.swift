import Crypto
import Foundation
import Synchronization

/// Talks to Bahn for one step: signs bodies as compact JWS, sets the headers, sends through the step's
/// context (so retries, deadline, trace and HAR are the engine's), and turns Bahn errors into diagnostics
/// carrying the integration guide's hints.
struct BahnClient: Sendable {
    let context: OperationContext
    let baseURL: String
    let apiKey: String
    let signingKey: SigningKey
    let keyID: String?
    /// Bahn's public key, when configured: a JWS answer must verify with it.
    let responseKey: VerifyingKey?

    static let requiredConfiguration = ["BAHN_API_URL", "BAHN_API_KEY", "BAHN_SIGNING_KEY"]

    init(_ context: OperationContext) throws(Diagnostic) {
        let config = context.configuration
        try config.require(Self.requiredConfiguration, for: "Bahn requests")
        self.context = context
        baseURL = HTTPURL.base(config.value("BAHN_API_URL")!)
        apiKey = try config.headerValue("BAHN_API_KEY")!
        keyID = config.value("BAHN_KEY_ID")
        signingKey = try Self.loadSigningKey(config.value("BAHN_SIGNING_KEY")!)
        responseKey = try config.value("BAHN_RESPONSE_KEY").map(Self.loadResponseKey)
    }

    /// `BAHN_RESPONSE_KEY` is a path to Bahn's public key (or a certificate holding it) in PEM, or the PEM itself. Read
    /// once per process.
    static func loadResponseKey(_ value: String) throws(Diagnostic) -> VerifyingKey {
        try readOnce(value, in: responseKeys) { () throws(Diagnostic) in try readResponseKey(value) }
    }

    private static func readResponseKey(_ value: String) throws(Diagnostic) -> VerifyingKey {
        var pem = value
        if !value.contains("-----BEGIN") {
            guard let text = try? String(contentsOfFile: value, encoding: .utf8) else {
                throw .configuration(
                    "cannot read BAHN_RESPONSE_KEY file \(value)",
                    hint: "set BAHN_RESPONSE_KEY to the path of Bahn's public key (PEM), or unset it")
            }
            pem = text
        }
        do { return try VerifyingKey(pem: pem) } catch {
            throw .configuration(
                "BAHN_RESPONSE_KEY is not a usable public key: \(error)",
                hint: "use Bahn's P-256 (ES256) or RSA (RS256) public key in PEM")
        }
    }

    /// `BAHN_SIGNING_KEY` is a path to a PEM file, or (handy for CI secrets) the PEM text itself. A path is named in an
    /// error (it is no secret); a PEM given inline never is. Read once per process.
    static func loadSigningKey(_ value: String) throws(Diagnostic) -> SigningKey {
        try readOnce(value, in: signingKeys) { () throws(Diagnostic) in try readSigningKey(value) }
    }

    private static func readSigningKey(_ value: String) throws(Diagnostic) -> SigningKey {
        let pem: String
        if value.contains("-----BEGIN") {
            pem = value
        } else {
            switch FileIO.read(value) {
            case .success(let bytes): pem = String(decoding: bytes, as: UTF8.self)
            case .failure(let error):
                throw .configuration(
                    "cannot read BAHN_SIGNING_KEY's file \(value): \(error.reason)",
                    hint:
                        "set BAHN_SIGNING_KEY to the path of the PEM private key that signs JWS bodies (or to the PEM itself)"
                )
            }
        }
        do { return try SigningKey(pem: pem) } catch {
            let which = value.contains("-----BEGIN") ? "BAHN_SIGNING_KEY" : "BAHN_SIGNING_KEY's file \(value)"
            throw .configuration(
                "\(which) is not a usable private key: \(error)",
                hint: "use a PEM P-256 (ES256) or RSA (RS256) private key")
        }
    }

    /// Keys by the configuration value they were read from: parsed once per process, not once per request.
    private static let signingKeys = Mutex<[String: SigningKey]>([:])
    private static let responseKeys = Mutex<[String: VerifyingKey]>([:])

    /// The key `value` names: from `cache` when it was read before, else `read` (kept unless it fails, and while the
    /// cache holds fewer than 16).
    private static func readOnce<Key: Sendable>(
        _ value: String, in cache: borrowing Mutex<[String: Key]>, _ read: () throws(Diagnostic) -> Key
    ) throws(Diagnostic) -> Key {
        if let known = cache.withLock({ $0[value] }) { return known }
        let key = try read()
        cache.withLock { if $0.count < 16 { $0[value] = key } }
        return key
    }

    /// The operations' check before a flow's first request: the keys the configuration names can be read and used, so
    /// that a bad one stops the run before a token is made or anything is sent.
    @Sendable static func keysCheck<Arguments>(_: Arguments, configuration: Configuration) throws(Diagnostic) {
        if let value = configuration.value("BAHN_SIGNING_KEY") { _ = try loadSigningKey(value) }
        if let value = configuration.value("BAHN_RESPONSE_KEY") { _ = try loadResponseKey(value) }
    }

    /// A compact JWS (RFC 7515) of `payload`.
    func jws(_ payload: Data) throws(Diagnostic) -> String {
        let header = BahnProtocol.jwsHeader(algorithm: signingKey.algorithm, keyID: keyID).data
        let signingInput = header.base64URLEncodedString() + "." + payload.base64URLEncodedString()
        let signature: Data
        do { signature = try signingKey.sign(Data(signingInput.utf8)) } catch {
            throw .internalError("signing the request body failed: \(error)")
        }
        return signingInput + "." + signature.base64URLEncodedString()
    }

    /// POSTs `body` as a signed JWS with an idempotency key. The request id is fresh on every attempt; the
    /// key and the payload stay the same, so a retry after a lost response replays instead of re-charging.
    func post(_ path: String, body: JSON, idempotencyKey: String) async throws(Diagnostic) -> BahnResponse {
        let payload = body.data
        let url = baseURL + path
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            var headers: HTTPHeaders = [:]
            headers["Content-Type"] = BahnProtocol.joseContentType
            headers["Accept"] = "application/json"
            headers[BahnProtocol.apiKeyHeader] = apiKey
            headers[BahnProtocol.joseMethodHeader] = "jws"
            headers[BahnProtocol.requestIDHeader] = UUID.random().uuidString.lowercased()
            headers[BahnProtocol.idempotencyHeader] = idempotencyKey
            return HTTPClientRequest(
                method: "POST", url: url, headers: headers, body: Data(try jws(payload).utf8),
                timeout: context.requestTimeout)
        }
        return try BahnResponse(response, verifying: responseKey)
    }

    func get(_ path: String) async throws(Diagnostic) -> BahnResponse {
        let url = baseURL + path
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            var headers: HTTPHeaders = [:]
            headers["Accept"] = "application/json"
            headers[BahnProtocol.apiKeyHeader] = apiKey
            headers[BahnProtocol.requestIDHeader] = UUID.random().uuidString.lowercased()
            return HTTPClientRequest(method: "GET", url: url, headers: headers, timeout: context.requestTimeout)
        }
        return try BahnResponse(response, verifying: responseKey)
    }
}

/// A Bahn response: its JSON document (a JWS response is opened), its status, and its error if any.
struct BahnResponse: Sendable {
    /// A compact JWS signed with `key` under the algorithm its protected header names.
    static func verifies(_ parts: [Substring], with key: VerifyingKey) -> Bool {
        guard let header = Data(base64URLEncoded: String(parts[0])).flatMap({ try? JSON.parse($0) }),
            header["alg"]?.stringValue == key.algorithm,
            let signature = Data(base64URLEncoded: String(parts[2]))
        else { return false }
        return key.verify(signature: signature, message: Data((parts[0] + "." + parts[1]).utf8))
    }

    let status: Int
    let document: JSON
    let replayed: Bool
    /// The answer does not settle what the request did (see `HTTPClientResponse.outcomeOpen`).
    let outcomeOpen: Bool

    init(_ response: HTTPClientResponse, verifying key: VerifyingKey? = nil) throws(Diagnostic) {
        status = response.status
        replayed = response.headers[BahnProtocol.replayedHeader] == "true"
        outcomeOpen = response.outcomeOpen
        var body = response.body
        // Responses are plain JSON; one that arrives as a JWS is opened, and verified when Bahn's key is configured
        // (docs/protocols/bahn.md, "Endpoints and authentication"). One that does not verify is no answer to trust.
        if response.headers["Content-Type"]?.lowercased().hasPrefix(BahnProtocol.joseContentType) == true,
            let text = String(data: body, encoding: .utf8)
        {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, let payload = Data(base64URLEncoded: String(parts[1])) {
                if let key, !Self.verifies(parts, with: key) {
                    throw .uncertain(
                        "Bahn answered \(response.status) with a JWS that does not verify with BAHN_RESPONSE_KEY",
                        hint:
                            "check that BAHN_RESPONSE_KEY is Bahn's current public key; until it verifies, the answer settles nothing"
                    )
                }
                body = payload
            }
        }
        if body.isEmpty {
            document = .null
        } else {
            // Not an answer to trust: what the request did is unknown (a call that moves money reads back).
            do { document = try JSON.parse(body) } catch {
                let garbled = "Bahn answered \(response.status) with a body that is not JSON: \(error)"
                throw .uncertain(garbled, hint: "check BAHN_API_URL points at Bahn's API")
            }
        }
    }

    var error: (type: String?, code: String?, message: String?, declineCode: String?)? {
        guard let e = document["error"]?.objectValue else { return nil }
        return (
            e["type"]?.stringValue, e["code"]?.stringValue, e["message"]?.stringValue,
            e["decline_code"]?.stringValue
                ?? document["payment_intent"]?["last_payment_error"]?["decline_code"]?.stringValue
        )
    }

    /// The intent the answer carries: at the top, or inside the error of a decline.
    var intent: JSON? { document["payment_intent"] ?? document["error"]?["payment_intent"] }

    /// The document, or a diagnostic carrying Bahn's message and the integration guide's hint for its code.
    /// The document, or a diagnostic mapped on Bahn's error code; `intent` names the intent in the hint.
    func requireSuccess(_ what: String, intent: String? = nil) throws(Diagnostic) -> JSON {
        if (200..<300).contains(status) { return document }
        let e = error
        let code = e?.code.map { " (\($0)\(e?.declineCode.map { ", \($0)" } ?? ""))" } ?? ""
        let message = "\(what) failed: Bahn answered \(status)\(code): \(e?.message ?? document.serialized())"
        let hint = BahnProtocol.hint(forCode: e?.code, type: e?.type, intent: intent)
        if outcomeOpen || e?.code == BahnProtocol.idempotencyInProgressCode {
            throw .uncertain(message, hint: hint ?? "try again with the same idempotency key")
        }
        switch status {
        case 401, 403: throw .configuration(message, hint: hint)
        case 500...:
            throw .unavailable(
                message, hint: hint ?? "Bahn had a problem; try again later with the same idempotency key")
        default: throw .failure(message, hint: hint)
        }
    }
}
