import Crypto
import Dispatch
import Foundation
import Synchronization
import WireTypes

/// One webhook event the Bahn emulator emitted, with a delivery record per target it was sent to.
public struct BahnWebhookEvent: Sendable {
    public enum Status: String, Sendable {
        /// Waiting for its first or next attempt.
        case pending
        case delivered
        /// Every attempt failed.
        case failed
        /// No webhook target was registered when the event happened.
        case notSent = "not_sent"
    }

    public struct Attempt: Sendable {
        public var at: Date
        /// The receiver's HTTP status, when it answered.
        public var httpStatus: Int?
        /// Why the attempt failed to get an answer.
        public var error: String?
    }

    /// The event's journey to one target.
    public struct Delivery: Sendable {
        public var target: String
        public var url: String
        public var status: Status
        public var attempts: [Attempt]
    }

    public var id: String
    public var type: String
    public var created: Int
    public var paymentIntentID: String
    /// The exact bytes that were (or would be) posted and signed.
    public var body: Data
    public var deliveries: [Delivery]

    /// Over all targets: not sent when there were none, pending while any is, else failed if any failed.
    public var status: Status {
        if deliveries.isEmpty { return .notSent }
        if deliveries.contains(where: { $0.status == .pending }) { return .pending }
        return deliveries.contains(where: { $0.status == .failed }) ? .failed : .delivered
    }

    var json: JSON {
        [
            "id": .string(id), "type": .string(type), "created": JSON(created),
            "payment_intent_id": .string(paymentIntentID), "subject": .string(paymentIntentID),
            "status": .string(status.rawValue), "payload": (try? JSON.parse(body)) ?? .null,
            "deliveries": .array(
                deliveries.map { delivery in
                    [
                        "target": .string(delivery.target), "url": .string(delivery.url),
                        "status": .string(delivery.status.rawValue),
                        "attempts": .array(
                            delivery.attempts.map { attempt in
                                [
                                    "at": JSON(attempt.at.timeIntervalSince1970),
                                    "http_status": JSON(attempt.httpStatus), "error": JSON(attempt.error),
                                ]
                            }),
                    ]
                }),
        ]
    }
}

/// Emits Bahn webhook events and delivers each to every registered target, in the background, in order per target,
/// with retries. Targets are a set, each added and removed by its owner (a run's listener, `bahn listen`,
/// `sandbox serve --webhook-url`), so parallel runs never replace or strand each other's. A target that never answers
/// a delivery through all its retries (its process is gone: killed, or stopped twice with Ctrl-C) is dropped, so a
/// long-running emulator does not keep posting to dead ports.
final class BahnWebhooks: Sendable {
    struct Target: Sendable {
        var id: String
        var url: String
    }

    private struct State {
        var targets: [Target] = []
        /// The latest `BahnRules.eventsKept` events from `head` on, oldest first: dropping from the front stays O(1),
        /// compacted now and then, as the request log does.
        var events: [BahnWebhookEvent] = []
        var head = 0
        /// Each kept event's place among all emitted (its index in `events` plus `compacted`), by id.
        var places: [String: Int] = [:]
        var compacted = 0

        /// Where the kept event `id` is in `events`.
        func index(of id: String) -> Int? {
            guard let place = places[id] else { return nil }
            return place - compacted
        }

        mutating func append(_ event: BahnWebhookEvent) {
            places[event.id] = events.count + compacted
            events.append(event)
            while events.count - head > BahnRules.eventsKept {
                places[events[head].id] = nil
                head += 1
            }
            if head > 1024 && head * 2 > events.count {
                events.removeFirst(head)
                compacted += head
                head = 0
            }
        }
        /// A few serial queues per target (`lanes`): an intent's events always take the same one, so they reach each
        /// target in order, while other intents' — and other targets' — proceed beside them. One queue per target
        /// would hold every run of a batch behind one slow or failing delivery, now that a batch shares one target.
        var queues: [String: [DispatchQueue]] = [:]

        /// The queue that carries `intent`'s events to `target`.
        mutating func queue(to target: String, for intent: String) -> DispatchQueue {
            let lanes =
                queues[target] ?? (0..<BahnWebhooks.lanes).map { DispatchQueue(label: "bahn-webhooks-\(target)-\($0)") }
            queues[target] = lanes
            var hash: UInt32 = 2_166_136_261  // FNV-1a: the same lane for an intent in every process, unlike hashValue
            for byte in intent.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
            return lanes[Int(hash % UInt32(lanes.count))]
        }
    }
    /// Deliveries to one target at once, each lane in order.
    static let lanes = 8
    private let state = Mutex(State())
    /// Seconds between a delivery's attempts (BahnRules'; tests shorten them).
    private let retryDelays: [TimeInterval]

    /// The target `sandbox serve --webhook-url` registers.
    static let serveTargetID = "serve"

    init(url: String?, retryDelays: [TimeInterval] = BahnRules.webhookRetryDelays) {
        self.retryDelays = retryDelays
        if let url { add(Target(id: Self.serveTargetID, url: url)) }
    }

    /// Adds a target, or points an existing id at a new URL (so a repeated registration is harmless).
    func add(_ target: Target) {
        state.withLock { s in
            if let index = s.targets.firstIndex(where: { $0.id == target.id }) {
                s.targets[index] = target
            } else {
                s.targets.append(target)
            }
        }
    }

    /// Removes a target; false when there was none with that id.
    func remove(id: String) -> Bool {
        state.withLock { s in
            guard let index = s.targets.firstIndex(where: { $0.id == id }) else { return false }
            s.targets.remove(at: index)
            s.queues[id] = nil
            return true
        }
    }

    var targets: [Target] { state.withLock { $0.targets } }

    /// The kept events, oldest first.
    func events() -> [BahnWebhookEvent] { state.withLock { Array($0.events[$0.head...]) } }

    /// A page of the kept events (`ListPage`), oldest first; nil when `since` names no kept event.
    func page(_ page: ListPage) -> (events: [BahnWebhookEvent], hasMore: Bool)? {
        state.withLock { s in
            var after: Int?
            if let since = page.since {
                guard let index = s.index(of: since) else { return nil }
                after = index
            }
            let (slice, hasMore) = ListPage.slice(s.events[s.head...], after: after, limit: page.limit)
            return (Array(slice), hasMore)
        }
    }

    /// Records the event and queues its delivery to every target registered now. Never blocks on the network. Answers
    /// the event's id.
    @discardableResult
    func emit(type: String, paymentIntent: JSON, intentID: String) -> String {
        let created = Int(Date().timeIntervalSince1970)
        let id = BahnRules.newID("evt_")
        let body = EmulatorResponse.encode([
            "id": .string(id), "type": .string(type), "created": JSON(created),
            "data": ["payment_intent": paymentIntent],
        ])
        let jobs = state.withLock { s -> [(DispatchQueue, Target)] in
            let targets = s.targets
            s.append(
                BahnWebhookEvent(
                    id: id, type: type, created: created, paymentIntentID: intentID, body: body,
                    deliveries: targets.map { .init(target: $0.id, url: $0.url, status: .pending, attempts: []) }))
            return targets.map { (s.queue(to: $0.id, for: intentID), $0) }
        }
        for (index, (queue, target)) in jobs.enumerated() {
            queue.async { [self] in deliver(eventID: id, body: body, to: target, delivery: index) }
        }
        return id
    }

    /// Delivers a recorded event again — the same bytes, signed afresh — to every target registered now, each with a
    /// delivery record of its own, as `stripe events resend` does; receivers tell it by its id. False when there is
    /// no such event.
    func resend(id: String) -> Bool {
        let found = state.withLock { s -> (Data, Int, [(DispatchQueue, Target)])? in
            guard let index = s.index(of: id) else { return nil }
            let current = s.targets
            // This sending's records follow the earlier ones: each attempt is written to its own.
            let first = s.events[index].deliveries.count
            s.events[index].deliveries += current.map {
                .init(target: $0.id, url: $0.url, status: .pending, attempts: [])
            }
            let intent = s.events[index].paymentIntentID
            return (s.events[index].body, first, current.map { (s.queue(to: $0.id, for: intent), $0) })
        }
        guard let (body, first, jobs) = found else { return false }
        for (offset, (queue, target)) in jobs.enumerated() {
            queue.async { [self] in deliver(eventID: id, body: body, to: target, delivery: first + offset) }
        }
        return true
    }

    /// Runs on the target's queue for the intent: tries once, then once after each retry delay, until a 2xx answer.
    /// - Parameter delivery: the index of this sending's record in the event's deliveries.
    private func deliver(eventID: String, body: Data, to target: Target, delivery record: Int) {
        let delays = [0] + retryDelays
        for (index, delay) in delays.enumerated() {
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            // A target removed meanwhile (its run ended) gets no more attempts.
            if index > 0, !targets.contains(where: { $0.id == target.id }) {
                update(eventID, delivery: record) { delivery in
                    delivery.status = .failed
                    delivery.attempts.append(.init(at: Date(), httpStatus: nil, error: "target removed"))
                }
                return
            }
            // Signed at each attempt, as the timestamp is part of what is signed (and checked for freshness).
            let t = Int(Date().timeIntervalSince1970)
            let signature = Self.signature(timestamp: t, body: body)
            var attempt = BahnWebhookEvent.Attempt(at: Date(), httpStatus: nil, error: nil)
            do {
                attempt.httpStatus = try WebhookPoster.post(
                    url: target.url, body: body,
                    headers: [("Content-Type", "application/json"), ("Bn-Signature", "t=\(t),v1=\(signature)")],
                    timeout: BahnRules.webhookTimeout)
            } catch {
                attempt.error = error.description
            }
            let delivered = (200..<300).contains(attempt.httpStatus ?? 0)
            let last = index == delays.count - 1
            update(eventID, delivery: record) { delivery in
                delivery.attempts.append(attempt)
                delivery.status = delivered ? .delivered : (last ? .failed : .pending)
            }
            if delivered { return }
        }
        // Not one answer through every retry: nobody is listening there any more.
        let deliveries = state.withLock { s in s.index(of: eventID).map { s.events[$0].deliveries } } ?? []
        let answered =
            deliveries.indices.contains(record) ? deliveries[record].attempts.contains { $0.httpStatus != nil } : nil
        if answered == false { _ = remove(id: target.id) }
    }

    /// hex(HMAC-SHA256(secret, "<t>.<raw body>")), the `v1` of `Bn-Signature`.
    static func signature(timestamp: Int, body: Data) -> String {
        HMAC.sha256(key: Data(TestCredentials.bahnWebhookSecret.utf8), message: Data("\(timestamp).".utf8) + body)
            .hexString
    }

    /// Changes one sending's record (a resent event has one per sending, to each target).
    private func update(_ eventID: String, delivery record: Int, _ change: (inout BahnWebhookEvent.Delivery) -> Void) {
        state.withLock { s in
            guard let e = s.index(of: eventID), s.events[e].deliveries.indices.contains(record) else { return }
            change(&s.events[e].deliveries[record])
        }
    }
}
