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

    private struct Log {
        var entries: [Entry] = []
        /// Index of the oldest entry still kept: dropping from the front stays O(1), compacted now and then.
        var head = 0
        var bytes = 0
        var received = 0
    }

    private let limit: Int
    private let bodyLimit: Int
    private let byteLimit: Int
    private let log = Locked(Log())

    init(limit: Int = 10_000, bodyLimit: Int = 16 * 1024, byteLimit: Int = 8 * 1024 * 1024) {
        self.limit = limit
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
        return log.withLock { log in
            log.received += 1
            log.entries.append(
                Entry(
                    request: kept, bodyLength: request.body.count, bytes: bytes, sequence: log.received, receivedAt: now
                ))
            log.bytes += bytes
            while log.entries.count - log.head > limit || log.bytes > byteLimit, log.head < log.entries.count - 1 {
                log.bytes -= log.entries[log.head].bytes
                log.head += 1
            }
            if log.head > 1024 && log.head * 2 > log.entries.count {
                log.entries.removeFirst(log.head)
                log.head = 0
            }
            return log.received
        }
    }

    /// What the request `sequence` was answered, when it is still kept.
    func answered(_ sequence: Int, _ reply: HTTPReply) {
        log.withLock { log in
            guard let first = log.entries.first?.sequence else { return }
            let index = sequence - first
            guard index >= log.head, index < log.entries.count, log.entries[index].sequence == sequence else { return }
            switch reply {
            case .respond(let response): log.entries[index].status = response.status
            case .reset: log.entries[index].cut = "reset"
            case .truncate(let response, _):
                log.entries[index].status = response.status
                log.entries[index].cut = "truncated"
            }
        }
    }

    func entries() -> [Entry] {
        log.withLock { Array($0.entries[$0.head...]) }
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
            let after = afterSequence.map { $0 - (log.entries.first?.sequence ?? 1) }
            let (slice, hasMore) = ListPage.slice(log.entries[log.head...], after: after, limit: page.limit)
            return (Array(slice), hasMore)
        }
    }

    func all() -> [HTTPRequest] { entries().map(\.request) }
}
