import Crypto
import Foundation
import LoopbackHTTP
import Synchronization

/// Stored first responses per `Bn-Idempotency-Key` (Stripe's documented semantics, a DECISION in bahn.md).
///
/// The fingerprint is the route plus SHA-256 of the decoded JWS *payload*: ES256 signatures are randomised, so a
/// faithful retry of the same body arrives with a different JWS each time.
final class BahnIdempotency: Sendable {
    private enum Record {
        case inProgress(fingerprint: String)
        case done(fingerprint: String, response: HTTPResponse, storedAt: Date)
    }

    enum Begin {
        /// First use of the key: run the operation, then call `finish`.
        case proceed
        /// Replay this stored response without running anything.
        case replay(HTTPResponse)
        /// Refuse with this error.
        case reject(BahnFailure)
    }

    private let records = Mutex<[String: Record]>([:])

    static func fingerprint(method: String, path: String, payload: Data) -> String {
        "\(method) \(path) \(Digest.sha256(payload).hexString)"
    }

    /// Claims the key atomically, so two concurrent requests with one key can never both run.
    func begin(key: String, fingerprint: String, now: Date = Date()) -> Begin {
        records.withLock { records in
            if case .done(_, _, let storedAt)? = records[key], now.timeIntervalSince(storedAt) > BahnRules.idempotencyRetention {
                records[key] = nil
            }
            switch records[key] {
            case nil:
                records[key] = .inProgress(fingerprint: fingerprint)
                return .proceed
            case .inProgress(let stored)?:
                guard stored == fingerprint else { return .reject(Self.reused(key)) }
                return .reject(BahnFailure(409, type: "idempotency_error", code: BahnRules.Code.idempotencyInProgress,
                                           message: "A request with Bn-Idempotency-Key \(key) is still being processed; retry shortly."))
            case .done(let stored, let response, _)?:
                guard stored == fingerprint else { return .reject(Self.reused(key)) }
                var replayed = response
                replayed.headers["Bn-Idempotent-Replayed"] = "true"
                return .replay(replayed)
            }
        }
    }

    /// Stores the first response (errors included). A nil response (a non-HTTP reply) releases the key instead.
    func finish(key: String, fingerprint: String, response: HTTPResponse?) {
        records.withLock { records in
            records[key] = response.map { .done(fingerprint: fingerprint, response: $0, storedAt: Date()) }
        }
    }

    private static func reused(_ key: String) -> BahnFailure {
        BahnFailure(400, type: "idempotency_error", code: BahnRules.Code.idempotencyKeyReused,
                    message: "Bn-Idempotency-Key \(key) was already used with a different request body or endpoint; use a new key for a new operation.")
    }
}
