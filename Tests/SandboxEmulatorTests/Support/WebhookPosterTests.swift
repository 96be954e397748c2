import Foundation
import Glibc
import LoopbackHTTP
import Synchronization
import Testing

@testable import SandboxEmulator

/// The poster keeps its connections to listeners between posts, and keeps them bounded: a batch's runs each listen on a
/// port of their own and are gone after it, and `sandbox serve` outlives them all.
@Suite struct WebhookPosterTests {
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    @Test func connectionsToListenersThatAreGoneAreNotKept() throws {
        // Listeners started and stopped one after another, as the runs of a batch are: each gets one post.
        let before = Self.openDescriptors()
        for _ in 0..<(WebhookPoster.idleLimit * 2) {
            let listener = try HTTPServer { _ in .respond(HTTPResponse(status: 200)) }
            listener.start()
            #expect(
                try WebhookPoster.post(url: listener.baseURL + "/hook", body: Data("{}".utf8), headers: [], timeout: 5)
                    == 200)
            listener.shutdown()
        }
        // One more post, to a listener that stays: the pool lets go of the connections the others closed.
        let last = try HTTPServer { _ in .respond(HTTPResponse(status: 200)) }
        last.start()
        defer { last.shutdown() }
        #expect(
            try WebhookPoster.post(url: last.baseURL + "/hook", body: Data("{}".utf8), headers: [], timeout: 5) == 200)
        // The listener's own sockets and its kept connection; other tests may hold a few of their own meanwhile.
        #expect(Self.openDescriptors() - before < WebhookPoster.idleLimit, "kept: \(Self.openDescriptors() - before)")
    }
}
