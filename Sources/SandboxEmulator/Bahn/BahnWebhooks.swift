import Crypto
import Dispatch
import Foundation
import Synchronization

/// One webhook event the Bahn emulator emitted, with its delivery record.
public struct BahnWebhookEvent: Sendable {
    public enum Status: String, Sendable {
        /// Waiting for its first or next attempt.
        case pending
        case delivered
        /// Every attempt failed.
        case failed
        /// No webhook URL was set when the event happened.
        case notSent = "not_sent"
    }

    public struct Attempt: Sendable {
        public var at: Date
        /// The receiver's HTTP status, when it answered.
        public var httpStatus: Int?
        /// Why the attempt failed to get an answer.
        public var error: String?
    }

    public var id: String
    public var type: String
    public var created: Int
    public var paymentIntentID: String
    /// The exact bytes that were (or would be) posted and signed.
    public var body: Data
    public var url: String?
    public var status: Status
    public var attempts: [Attempt]

    var json: [String: Any] {
        [
            "id": id, "type": type, "created": created, "payment_intent_id": paymentIntentID,
            "url": url ?? NSNull(), "status": status.rawValue,
            "payload": (try? JSONSerialization.jsonObject(with: body)) ?? NSNull(),
            "attempts": attempts.map { attempt -> [String: Any] in
                ["at": attempt.at.timeIntervalSince1970,
                 "http_status": attempt.httpStatus ?? NSNull(),
                 "error": attempt.error ?? NSNull()]
            },
        ]
    }
}

/// Emits Bahn webhook events and delivers them in the background, in order per payment intent, with retries.
final class BahnWebhooks: Sendable {
    private struct State {
        var url: String?
        var events: [BahnWebhookEvent] = []
        /// One serial queue per intent keeps that intent's events in order while other intents proceed.
        var queues: [String: DispatchQueue] = [:]
    }
    private let state: Mutex<State>

    init(url: String?) { state = Mutex(State(url: url)) }

    /// Sets the delivery URL and returns the one it replaces.
    @discardableResult
    func setURL(_ url: String?) -> String? {
        state.withLock { state in
            defer { state.url = url }
            return state.url
        }
    }

    func events() -> [BahnWebhookEvent] { state.withLock { $0.events } }

    /// Records the event and, when a URL is set, queues its delivery. Never blocks on the network.
    func emit(type: String, paymentIntent: [String: Any], intentID: String) {
        let created = Int(Date().timeIntervalSince1970)
        let id = BahnRules.newID("evt_")
        let body = EmulatorResponse.encode([
            "id": id, "type": type, "created": created, "data": ["payment_intent": paymentIntent],
        ] as [String: Any])
        let (queue, url) = state.withLock { s -> (DispatchQueue?, String?) in
            s.events.append(BahnWebhookEvent(id: id, type: type, created: created, paymentIntentID: intentID, body: body,
                                             url: s.url, status: s.url == nil ? .notSent : .pending, attempts: []))
            guard s.url != nil else { return (nil, nil) }
            let queue = s.queues[intentID] ?? DispatchQueue(label: "bahn-webhooks-\(intentID)")
            s.queues[intentID] = queue
            return (queue, s.url)
        }
        guard let queue, let url else { return }
        queue.async { [self] in deliver(eventID: id, body: body, url: url) }
    }

    /// Runs on the intent's queue: tries once, then once after each retry delay, until a 2xx answer.
    private func deliver(eventID: String, body: Data, url: String) {
        let delays = [0] + BahnRules.webhookRetryDelays
        for (index, delay) in delays.enumerated() {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            // Signed at each attempt, as the timestamp is part of what is signed (and checked for freshness).
            let t = Int(Date().timeIntervalSince1970)
            let signature = Self.signature(timestamp: t, body: body)
            var attempt = BahnWebhookEvent.Attempt(at: Date(), httpStatus: nil, error: nil)
            do {
                attempt.httpStatus = try WebhookPoster.post(
                    url: url, body: body,
                    headers: [("Content-Type", "application/json"), ("Bn-Signature", "t=\(t),v1=\(signature)")],
                    timeout: BahnRules.webhookTimeout)
            } catch {
                attempt.error = error.description
            }
            let delivered = (200..<300).contains(attempt.httpStatus ?? 0)
            let last = index == delays.count - 1
            update(eventID) { event in
                event.attempts.append(attempt)
                event.status = delivered ? .delivered : (last ? .failed : .pending)
            }
            if delivered { return }
        }
    }

    /// hex(HMAC-SHA256(secret, "<t>.<raw body>")), the `v1` of `Bn-Signature`.
    static func signature(timestamp: Int, body: Data) -> String {
        HMAC.sha256(key: Data(TestCredentials.bahnWebhookSecret.utf8), message: Data("\(timestamp).".utf8) + body).hexString
    }

    private func update(_ eventID: String, _ change: (inout BahnWebhookEvent) -> Void) {
        state.withLock { s in
            if let index = s.events.lastIndex(where: { $0.id == eventID }) { change(&s.events[index]) }
        }
    }
}
