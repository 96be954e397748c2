import Foundation
import LoopbackHTTP
import Synchronization
import Threads

/// The sandbox emulator: the "other side of the wire". It owns a loopback HTTP server, a router that providers
/// register their routes on, the money ledger and the fault injector. It never imports CheckoutKit.
public final class Emulator: Sendable {
    public let router: Router
    public let ledger: Ledger
    public let faults: FaultInjector
    /// Every emulated provider, installed, by name.
    private let installed: [String: any EmulatedProvider]
    private let server: HTTPServer
    private let recorder: RequestRecorder

    public var baseURL: String { server.baseURL }
    public var port: UInt16 { server.port }

    /// Binds immediately (port 0 picks a free port); call `start()` to serve. `providers`: the emulated providers it
    /// installs, `Emulator.providers` unless a test adds one of its own.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 0, faults: FaultSpec = .none, webhookURL: String? = nil,
        providers: [any EmulatedProvider.Type] = Emulator.providers
    ) throws {
        let router = Router()
        let recorder = RequestRecorder(limit: 10_000)
        let injector = FaultInjector(faults)
        self.router = router
        self.ledger = Ledger()
        self.faults = injector
        self.recorder = recorder
        // Record first, so tests see every request, including ones a fault then swallows.
        // One worker kept per core, as nginx keeps its processes: more only switch between each other (with four on
        // two cores, a third of the requests cost a context switch). Handlers that sleep in injected latencies make
        // the pool grow while they sleep (see WorkerPool).
        let server = try HTTPServer(
            host: host, port: port, workers: max(2, ProcessInfo.processInfo.activeProcessorCount)
        ) { request in
            let entry = recorder.record(request)
            let reply = injector.handle(request, next: router.handle)
            recorder.answered(entry, reply)
            return reply
        }
        self.server = server
        let context = EmulatorContext(
            router: router, ledger: ledger, baseURL: { server.baseURL }, webhookURL: webhookURL)
        installed = Dictionary(uniqueKeysWithValues: providers.map { ($0.name, $0.install(context)) })
        router.register(BuiltinRoutes.make(ledger: ledger, recorder: recorder))
        for provider in providers {
            guard let sender = installed[provider.name]?.webhookSender else { continue }
            router.register(
                WebhookRoutes.make(provider: provider.name, eventTypes: provider.eventTypes, sender: sender))
        }
    }

    /// Every emulated provider, in the order help lists them: the one list a new provider joins.
    public static let providers: [any EmulatedProvider.Type] = [
        BahnEmulator.self, CentraEmulator.self, CashAppEmulator.self,
        BraintreeEmulator.self,
    ]

    /// The installed emulator of one provider (every type listed is installed).
    public func provider<P: EmulatedProvider>(_ type: P.Type) -> P { installed[type.name] as! P }

    /// The Bahn PaymentIntents emulator (its webhook URL can be changed at run time).
    public var bahn: BahnEmulator { provider(BahnEmulator.self) }
    /// Afterpay (v2 and api-plus) with Cash App Pay's Customer Request API.
    public var cashapp: CashAppEmulator { provider(CashAppEmulator.self) }

    /// The magic values of every provider, for `sandbox serve --help`.
    public static var scenariosHelp: String { providers.map { $0.scenariosHelp }.joined(separator: "\n") }

    /// The providers whose emulators deliver webhooks, by the provider's name.
    private var webhookSenders: [String: any WebhookSender] { installed.compactMapValues { $0.webhookSender } }

    /// Adds a webhook target to `provider`'s emulator (a repeated id points it at the new URL); false when that
    /// provider's emulator sends no webhooks.
    @discardableResult
    public func addWebhookTarget(provider: String, id: String, url: String) -> Bool {
        guard let sender = webhookSenders[provider] else { return false }
        sender.addWebhookTarget(id: id, url: url)
        return true
    }

    /// Removes a webhook target; false when there was none with that id.
    @discardableResult
    public func removeWebhookTarget(provider: String, id: String) -> Bool {
        webhookSenders[provider]?.removeWebhookTarget(id: id) ?? false
    }

    public func start() { server.start() }

    /// Serves one connected socket on the calling thread (see `HTTPServer.serve(connected:)`).
    public func serve(connected fd: Int32) { server.serve(connected: fd) }
    public func shutdown() {
        faults.stopDelays()
        server.shutdown()
    }
    public func waitUntilShutdown() { server.waitUntilShutdown() }

    /// What `--env local` sets to point the driver at an emulator at `baseURL`: every provider's base URL and test
    /// credentials (each declared in its folder), and the emulator's own URL for raw flows.
    public static func localConfiguration(baseURL: String) -> [String: String] {
        providers.reduce(into: ["EMULATOR_URL": baseURL]) { all, provider in
            all.merge(provider.localConfiguration(baseURL: baseURL)) { $1 }
        }
    }

    /// Every request the emulator received, in order (method, target, headers, body); the last 10,000.
    public func receivedRequests() -> [HTTPRequest] { recorder.all() }
}

/// The log of received requests, bounded however it is abused: at most `limit` requests and `byteLimit` bytes, each
/// body kept up to `bodyLimit` bytes (with its real length); the oldest go first.
final class RequestRecorder: Sendable {
    struct Entry: Sendable {
        var request: HTTPRequest
        /// The body's length as received (the stored body may be cut to `bodyLimit`).
        var bodyLength: Int
        var bytes: Int
        /// Its place in everything received, from 1.
        var sequence: Int
        var receivedAt: Date
        /// What it was answered: the status, or how the connection was cut (a fault); nil until answered.
        var status: Int?
        var cut: String?

        /// "rq_000001": the request's place in everything received, as `GET /_sandbox/requests` names it.
        var id: String { String(format: "rq_%06d", sequence) }

        static func sequence(ofID id: String) -> Int? {
            guard id.hasPrefix("rq_"), let sequence = Int(id.dropFirst(3)), sequence >= 1 else { return nil }
            return sequence
        }
    }

    /// The kept entries: a ring, so that dropping the oldest moves nothing, and what it drops is released after the
    /// lock (a request's strings and body, released inside it, kept the other workers waiting).
    private struct Log {
        /// The i-th kept entry, oldest first, is `slots[(first + i) % slots.count]`; the ring grows to `limit`.
        var slots: [Entry?] = []
        var first = 0
        var count = 0
        var bytes = 0
        var received = 0

        /// The sequence number of the oldest kept entry (kept entries are the last `count` received).
        var oldestSequence: Int { received - count + 1 }

        func slot(_ i: Int) -> Int { (first + i) % slots.count }
        func entry(_ i: Int) -> Entry { slots[slot(i)]! }

        /// Drops the oldest entry and hands it back, to be released outside the lock.
        mutating func dropOldest() -> Entry {
            let oldest = slots[first].take()!
            first = (first + 1) % slots.count
            count -= 1
            bytes -= oldest.bytes
            return oldest
        }

        /// Appends `entry` to a ring with room for it, growing it (up to `limit`) when it is full.
        mutating func append(_ entry: Entry, limit: Int) {
            if count == slots.count {
                var grown: [Entry?] = []
                grown.reserveCapacity(min(limit, max(16, slots.count * 2)))
                for i in 0..<count { grown.append(slots[slot(i)].take()) }
                grown.append(contentsOf: repeatElement(nil, count: grown.capacity - count))
                slots = grown
                first = 0
            }
            slots[slot(count)] = entry
            count += 1
            bytes += entry.bytes
        }
    }

    private let limit: Int
    private let bodyLimit: Int
    private let byteLimit: Int
    private let log = Locked(Log())

    init(limit: Int = 10_000, bodyLimit: Int = 16 * 1024, byteLimit: Int = 8 * 1024 * 1024) {
        self.limit = max(1, limit)
        self.bodyLimit = bodyLimit
        self.byteLimit = byteLimit
    }

    /// Keeps `request` and answers its sequence number, for `answered`.
    @discardableResult
    func record(_ request: HTTPRequest) -> Int {
        var kept = request
        // A copy, not a slice: a slice of Data would keep the whole body alive.
        if kept.body.count > bodyLimit { kept.body = kept.body.withUnsafeBytes { Data($0.prefix(bodyLimit)) } }
        let bytes =
            kept.body.count + kept.target.utf8.count
            + kept.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
        let now = Date()
        // What makes room is released after the lock: one request at a time, an array only when the byte limit drops
        // more than one.
        var alsoDropped: [Entry] = []
        let (sequence, _) = log.withLock { log -> (Int, Entry?) in
            var dropped: Entry?
            // The newest is always kept, however large; the oldest go first to make room.
            while log.count > 0 && (log.count >= limit || log.bytes + bytes > byteLimit) {
                if let earlier = dropped.take() { alsoDropped.append(earlier) }
                dropped = log.dropOldest()
            }
            log.received += 1
            log.append(
                Entry(
                    request: kept, bodyLength: request.body.count, bytes: bytes, sequence: log.received,
                    receivedAt: now),
                limit: limit)
            return (log.received, dropped)
        }
        return sequence
    }

    /// What the request `sequence` was answered, when it is still kept.
    func answered(_ sequence: Int, _ reply: HTTPReply) {
        log.withLock { log in
            let index = sequence - log.oldestSequence
            guard index >= 0, index < log.count else { return }
            let slot = log.slot(index)
            switch reply {
            case .respond(let response): log.slots[slot]?.status = response.status
            case .reset: log.slots[slot]?.cut = "reset"
            case .truncate(let response, _):
                log.slots[slot]?.status = response.status
                log.slots[slot]?.cut = "truncated"
            }
        }
    }

    func entries() -> [Entry] {
        log.withLock { log in (0..<log.count).map { log.entry($0) } }
    }

    /// A page of the kept requests (`ListPage`), oldest first; nil when `since` is not a request's id. After an id
    /// no longer kept, the page starts at the oldest kept.
    func page(_ page: ListPage) -> (entries: [Entry], hasMore: Bool)? {
        var afterSequence: Int?
        if let since = page.since {
            guard let sequence = Entry.sequence(ofID: since) else { return nil }
            afterSequence = sequence
        }
        return log.withLock { log in
            // Kept entries are consecutive in sequence, so an id finds its place by subtraction.
            let after = afterSequence.map { $0 - log.oldestSequence }
            let (window, hasMore) = ListPage.window(0..<log.count, after: after, limit: page.limit)
            return (window.map { log.entry($0) }, hasMore)
        }
    }

    func all() -> [HTTPRequest] { entries().map(\.request) }
}
