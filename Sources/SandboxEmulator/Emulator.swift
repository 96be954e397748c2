import Foundation
import LoopbackHTTP
import Synchronization

/// The sandbox emulator: the "other side of the wire". It owns a loopback HTTP server, a router that providers
/// register their routes on, the money ledger and the fault injector. It never imports CheckoutKit.
public final class Emulator: Sendable {
    public let router: Router
    public let ledger: Ledger
    public let faults: FaultInjector
    /// The Bahn PaymentIntents emulator (its webhook URL can be changed at run time).
    public let bahn: BahnEmulator
    private let server: HTTPServer
    private let recorder: RequestRecorder

    public var baseURL: String { server.baseURL }
    public var port: UInt16 { server.port }

    /// Binds immediately (port 0 picks a free port); call `start()` to serve.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, faults: FaultSpec = .none, webhookURL: String? = nil) throws {
        let router = Router()
        let recorder = RequestRecorder(limit: 10_000)
        let injector = FaultInjector(faults)
        self.router = router
        self.ledger = Ledger()
        self.faults = injector
        self.bahn = BahnEmulator.install(on: router, ledger: ledger, webhookURL: webhookURL)
        self.recorder = recorder
        // Record first, so tests see every request, including ones a fault then swallows.
        self.server = try HTTPServer(host: host, port: port) { request in
            recorder.record(request)
            return injector.handle(request, next: router.handle)
        }
        router.register(BuiltinRoutes.make(ledger: ledger, recorder: recorder))
    }

    public func start() { server.start() }
    public func shutdown() {
        faults.stopDelays()
        server.shutdown()
    }
    public func waitUntilShutdown() { server.waitUntilShutdown() }

    /// Every request the emulator received, in order (method, target, headers, body); the last 10,000.
    public func receivedRequests() -> [HTTPRequest] { recorder.all() }
}

/// A bounded log of received requests.
final class RequestRecorder: Sendable {
    private let limit: Int
    private let log = Locked<[HTTPRequest]>([])

    init(limit: Int) { self.limit = limit }

    func record(_ request: HTTPRequest) {
        log.withLock { log in
            log.append(request)
            // Trim in batches (at twice the limit) so recording stays O(1) amortised instead of shifting every time.
            if log.count >= 2 * limit { log.removeFirst(log.count - limit) }
        }
    }

    func all() -> [HTTPRequest] {
        log.withLock { Array($0.suffix(limit)) }
    }
}
