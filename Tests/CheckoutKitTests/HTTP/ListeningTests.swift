import Foundation
import Synchronization
import Testing

@testable import CheckoutKit

@Suite struct ListeningTests {
    /// A listener's address is taken at once, and it answers only from `start()` on: a request sent before waits and is
    /// answered then. A run hands the address out before it knows whether anything will come back to it, and most runs
    /// never start theirs.
    @Test func aRequestSentBeforeTheListenerStartsIsAnsweredOnceItDoes() async throws {
        let handled = Mutex(0)
        let listener = try LoopbackListening().listen("test listener") { _ in
            handled.withLock { $0 += 1 }
            return .respond(.text(200, "here"))
        }
        defer { listener.stop() }
        let transport = CurlTransport(options: .direct)
        let url = listener.baseURL + "/return"
        let answer = Task { try await transport.send(HTTPClientRequest(method: "GET", url: url, timeout: 10)) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(handled.withLock { $0 } == 0, "not answered before start()")
        listener.start()
        #expect(try await answer.value.status == 200)
        #expect(handled.withLock { $0 } == 1)
    }

    /// Stopped without ever starting, a listener gives its port back.
    @Test func aListenerNeverStartedClosesItsPortWhenStopped() async throws {
        let listener = try LoopbackListening().listen("test listener") { _ in .respond(.text(200, "here")) }
        let url = listener.baseURL + "/return"
        listener.stop()
        await #expect(throws: TransportError.self) {
            _ = try await CurlTransport(options: .direct).send(HTTPClientRequest(method: "GET", url: url, timeout: 2))
        }
    }
}
