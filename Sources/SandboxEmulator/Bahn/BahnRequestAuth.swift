import Crypto
import Foundation
import LoopbackHTTP
import WireTypes

/// A request the Bahn emulator refuses, carrying the reply in Bahn's error shape.
struct BahnFailure: Error {
    var reply: HTTPReply
    var response: HTTPResponse? { if case .respond(let r) = reply { r } else { nil } }

    init(
        _ status: Int, type: String = "invalid_request_error", code: String, message: String, param: String? = nil,
        extra: JSON.Object = [:]
    ) {
        reply = .respond(
            BahnFailure.response(status, type: type, code: code, message: message, param: param, extra: extra))
    }

    /// `{"error":{"type","code","message","param"}}`; param is always present (null when none applies).
    static func response(
        _ status: Int, type: String, code: String, message: String, param: String?,
        extra: JSON.Object = [:]
    ) -> HTTPResponse {
        var error: JSON.Object = [
            "type": .string(type), "code": .string(code), "message": .string(message), "param": JSON(param),
        ]
        error.merge(extra) { $1 }
        return .json(status, EmulatorResponse.encode(["error": .object(error)]))
    }
}

/// The checks every `/api` request passes before a handler runs: API key, request id, and for POSTs the
/// content type, JOSE method and the compact JWS body signed with the registered client key.
enum BahnRequestAuth {
    /// The registered client key; loaded once (the PEM is a constant, so failure is a build defect).
    static let clientKey: VerifyingKey = {
        do { return try VerifyingKey(pem: TestCredentials.bahnClientPublicKeyPEM) } catch {
            fatalError("the Bahn client public key in TestCredentials does not load: \(error)")
        }
    }()

    static func checkHeaders(_ request: EmulatorRequest) throws(BahnFailure) {
        guard request.headers["Bn-Api-Key"] == TestCredentials.bahnAPIKey else {
            let message =
                request.headers["Bn-Api-Key"] == nil
                ? "No API key provided: set the Bn-Api-Key header."
                : "Invalid API key provided in Bn-Api-Key."
            throw BahnFailure(401, type: "authentication_error", code: BahnRules.Code.invalidAPIKey, message: message)
        }
        guard let requestID = request.headers["Bn-Request-Id"], UUID(uuidString: requestID) != nil else {
            throw BahnFailure(
                400, code: BahnRules.Code.missingRequestID,
                message: "Bn-Request-Id must be set to a UUID, one per HTTP attempt.", param: "Bn-Request-Id")
        }
    }

    /// Checks the POST framing and returns the verified JWS payload bytes.
    static func verifiedPayload(_ request: EmulatorRequest) throws(BahnFailure) -> Data {
        let mediaType = request.headers["Content-Type"]?.split(separator: ";").first?
            .trimmingSpaces().lowercased()
        guard mediaType == "application/jose" else {
            throw BahnFailure(
                415, code: BahnRules.Code.invalidContentType,
                message:
                    "Content-Type must be application/jose (a compact JWS of the JSON body), got \(request.headers["Content-Type"] ?? "none")."
            )
        }
        guard request.headers["Bn-Jose-Method"]?.lowercased() == "jws" else {
            throw BahnFailure(
                400, code: BahnRules.Code.invalidJoseMethod,
                message: "Bn-Jose-Method must be jws.", param: "Bn-Jose-Method")
        }
        return try verifyJWS(request.body)
    }

    /// RFC 7515 compact serialization: b64url(header).b64url(payload).b64url(signature), verified over the
    /// first two parts exactly as received.
    /// White space a body may carry around its JWS (a trailing newline from a file, say).
    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    static func verifyJWS(_ body: Data) throws(BahnFailure) -> Data {
        func fail(_ message: String) -> BahnFailure {
            BahnFailure(401, type: "authentication_error", code: BahnRules.Code.invalidSignature, message: message)
        }
        // Read on bytes: a JWS in compact form is ASCII, and this runs for every Bahn request.
        var bytes = [UInt8](body)[...]
        while let first = bytes.first, Self.isSpace(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, Self.isSpace(last) { bytes = bytes.dropLast() }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        guard parts.count == 3 else { throw fail("Malformed JWS: expected three base64url parts separated by '.'.") }
        guard let headerBytes = Data(base64URLEncoded: parts[0]),
            let header = (try? JSON.parse(headerBytes))?.objectValue
        else {
            throw fail("Malformed JWS: the protected header is not unpadded base64url JSON.")
        }
        guard let payload = Data(base64URLEncoded: parts[1]) else {
            throw fail("Malformed JWS: the payload is not unpadded base64url.")
        }
        guard let signature = Data(base64URLEncoded: parts[2]), !signature.isEmpty else {
            throw fail("Malformed JWS: the signature is not unpadded base64url.")
        }
        guard let alg = header.string("alg"), alg == "ES256" || alg == "RS256" else {
            throw fail(
                "JWS alg \(header["alg"]?.interpolationText ?? "(missing)") is not accepted; use ES256 or RS256.")
        }
        guard alg == clientKey.algorithm else {
            throw fail("JWS alg \(alg) does not match the registered client key, which is \(clientKey.algorithm).")
        }
        if let kid = header["kid"] {
            guard let kid = kid.stringValue, kid == TestCredentials.bahnKeyID else {
                throw fail(
                    "JWS kid \(kid.interpolationText) is not a registered key id (expected \(TestCredentials.bahnKeyID))."
                )
            }
        }
        let signingInput = Data((parts[0] + "." + parts[1]).utf8)
        guard clientKey.verify(signature: signature, message: signingInput) else {
            throw fail(
                "JWS signature does not verify over the protected header and payload with the registered client key"
                    + (alg == "ES256" ? " (ES256 signatures are the 64-byte R||S, not DER)." : "."))
        }
        return payload
    }
}
