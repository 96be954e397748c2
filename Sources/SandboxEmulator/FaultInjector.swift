import Foundation
import Glibc
import LoopbackHTTP
import Synchronization
import Threads

/// Applies a FaultSpec around request handling. Counters are per rule and thread-safe, so "attempt 1" means the
/// first matching request no matter which connection or thread it arrived on.
public final class FaultInjector: Sendable {
    public let spec: FaultSpec
    private let counters: Locked<[Int]>
    /// Set when the emulator shuts down: injected latencies end at once instead of holding shutdown up.
    private let stopping = Atomic<Bool>(false)

    /// What to do with one request.
    public struct Decision: Sendable, Equatable {
        public var latencyMilliseconds = 0
        /// The one non-latency action, if any rule fired with one.
        public var action: FaultSpec.Action? = nil
    }

    public init(_ spec: FaultSpec) {
        self.spec = spec
        counters = Locked(Array(repeating: 0, count: spec.rules.count))
    }

    /// Counts the request against every matching rule and combines the rules that fire on this attempt.
    public func decide(_ request: HTTPRequest) -> Decision {
        if spec.rules.isEmpty { return Decision() }
        let path = request.path
        return counters.withLock { counts in
            var decision = Decision()
            for (i, rule) in spec.rules.enumerated() where rule.matches(method: request.method, path: path) {
                counts[i] += 1
                guard rule.attempts.contains(counts[i]) else { continue }
                for action in rule.actions {
                    if case .latency(let ms) = action {
                        decision.latencyMilliseconds += ms
                    } else if decision.action == nil {
                        decision.action = action
                    }
                }
            }
            return decision
        }
    }

    /// Ends every injected latency now and from now on (the emulator is shutting down).
    public func stopDelays() { stopping.store(true, ordering: .releasing) }

    /// Sleeps in short slices, so that shutting down never waits for a long injected latency.
    private func delay(milliseconds: Int) {
        var left = milliseconds
        while left > 0, !stopping.load(ordering: .acquiring) {
            let slice = min(left, 20)
            usleep(UInt32(slice) * 1000)
            left -= slice
        }
    }

    /// Runs `next` (the router) with the faults that apply to this request.
    public func handle(_ request: HTTPRequest, next: (HTTPRequest) -> HTTPReply) -> HTTPReply {
        let decision = decide(request)
        // Each connection has its own thread, so sleeping here delays only this request.
        if decision.latencyMilliseconds > 0 { delay(milliseconds: min(decision.latencyMilliseconds, 600_000)) }
        switch decision.action {
        case nil, .latency:
            return next(request)
        case .status(let code, let headers):
            return EmulatorResponse.error(
                code, type: "api_error", code: "injected_fault",
                message: "Fault injected by the sandbox (--faults): HTTP \(code)", headers: headers)
        case .html(let code):
            let page =
                "<html><head><title>\(code)</title></head><body><center><h1>\(code) Error</h1></center><hr><center>proxy</center></body></html>\n"
            return .respond(HTTPResponse(status: code, headers: ["Content-Type": "text/html"], body: Data(page.utf8)))
        case .reset:
            return .reset
        case .drop:
            // The operation is committed, then the response is lost on the way back.
            _ = next(request)
            return .reset
        case .truncate(let bytes):
            let reply = next(request)
            guard case .respond(let response) = reply else { return reply }
            return .truncate(response, bodyBytes: bytes)
        case .malformed:
            let reply = next(request)
            guard case .respond(var response) = reply else { return reply }
            response.body = Data(#"{"malformed": tru"#.utf8)
            return .respond(response)
        }
    }
}
