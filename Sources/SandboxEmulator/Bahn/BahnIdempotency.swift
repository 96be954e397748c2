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

    private struct Store {
        var records: [String: Record] = [:]
        /// Keys in the order they were first used: the oldest go first when the store is full.
        var order: [String] = []
        var head = 0
    }
    private let store = Mutex(Store())
    /// Records kept at most, however many keys a client invents: the oldest finished ones are dropped first.
    private let capacity: Int

    init(capacity: Int = 50_000) { self.capacity = capacity }

    static func fingerprint(method: String, path: String, payload: Data) -> String {
        "\(method) \(path) \(Digest.sha256(payload).hexString)"
    }

    /// Claims the key atomically, so two concurrent requests with one key can never both run.
    func begin(key: String, fingerprint: String, now: Date = Date()) -> Begin {
        store.withLock { store in
            if case .done(_, _, let storedAt)? = store.records[key],
                now.timeIntervalSince(storedAt) > BahnRules.idempotencyRetention
            {
                store.records[key] = nil
            }
            switch store.records[key] {
            case nil:
                store.records[key] = .inProgress(fingerprint: fingerprint)
                store.order.append(key)
                Self.trim(&store, capacity: capacity, now: now)
                return .proceed
            case .inProgress(let stored)?:
                guard stored == fingerprint else { return .reject(Self.reused(key)) }
                return .reject(
                    BahnFailure(
                        409, type: "idempotency_error", code: BahnRules.Code.idempotencyInProgress,
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
        store.withLock { store in
            store.records[key] = response.map { .done(fingerprint: fingerprint, response: $0, storedAt: Date()) }
        }
    }

    var count: Int { store.withLock { $0.records.count } }

    /// Drops from the oldest end what has expired, and finished records beyond `capacity`. A record still in progress
    /// is never dropped (its request is running): it moves to the young end, to be looked at again later.
    private static func trim(_ store: inout Store, capacity: Int, now: Date) {
        // Each key present when the trim starts is looked at once at most, so a store of in-progress records ends it.
        var unseen = store.order.count - store.head
        sweep: while unseen > 0 {
            unseen -= 1
            let key = store.order[store.head]
            switch store.records[key] {
            case nil:
                break  // released, or dropped already
            case .inProgress?:
                store.order.append(key)  // still running: looked at again later
            case .done(_, _, let storedAt)?:
                guard store.records.count > capacity || now.timeIntervalSince(storedAt) > BahnRules.idempotencyRetention
                else {
                    break sweep  // the oldest finished record is still wanted: the rest are younger
                }
                store.records[key] = nil
            }
            store.head += 1
        }
        compact(&store)
    }

    private static func compact(_ store: inout Store) {
        if store.head > 1024 && store.head * 2 > store.order.count {
            store.order.removeFirst(store.head)
            store.head = 0
        }
    }

    private static func reused(_ key: String) -> BahnFailure {
        BahnFailure(
            400, type: "idempotency_error", code: BahnRules.Code.idempotencyKeyReused,
            message:
                "Bn-Idempotency-Key \(key) was already used with a different request body or endpoint; use a new key for a new operation."
        )
    }
}
