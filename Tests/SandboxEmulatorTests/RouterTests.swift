import Foundation
import LoopbackHTTP
import TestSupport
import Testing
@testable import SandboxEmulator

@Suite struct RouterTests {
    @Test func paramsAttemptsAndSpecificity() {
        let router = Router()
        router.register([
            Route("GET", "/things/:id") { .respond(.text(200, "id=\($0.params["id"]!) attempt=\($0.attempt)")) },
            Route("GET", "/things/special") { _ in .respond(.text(200, "special")) },
            Route("POST", "/things/:id/do/:what") { .respond(.text(200, "\($0.params["id"]!)-\($0.params["what"]!)")) },
        ])
        func text(_ reply: HTTPReply) -> String {
            guard case .respond(let r) = reply else { return "" }
            return String(decoding: r.body, as: UTF8.self)
        }
        #expect(text(router.handle(HTTPRequest(method: "GET", target: "/things/a%20b?x=1"))) == "id=a b attempt=1")
        #expect(text(router.handle(HTTPRequest(method: "GET", target: "/things/c"))) == "id=c attempt=2")
        #expect(text(router.handle(HTTPRequest(method: "GET", target: "/things/special"))) == "special")
        #expect(text(router.handle(HTTPRequest(method: "POST", target: "/things/7/do/jump"))) == "7-jump")
    }

    /// A path is its segments: extra slashes change nothing, a route without parameters registered twice is the first
    /// one's, and a parameter is percent-decoded.
    @Test func aPathIsItsSegments() {
        let router = Router()
        router.register([
            Route("GET", "/a/b") { _ in .respond(.text(200, "first")) },
            Route("GET", "/a/b") { _ in .respond(.text(200, "second")) },
            Route("GET", "/a/:x") { .respond(.text(200, "x=\($0.params["x"]!)")) },
            Route("GET", "/c/d/") { _ in .respond(.text(200, "cd")) },
        ])
        func text(_ method: String, _ target: String) -> String {
            guard case .respond(let r) = router.handle(HTTPRequest(method: method, target: target)) else { return "" }
            return String(decoding: r.body, as: UTF8.self)
        }
        #expect(text("GET", "/a/b") == "first")
        #expect(text("HEAD", "/a/b") == "first")
        #expect(text("GET", "//a/b/") == "first")
        #expect(text("GET", "/a/b?q=1") == "first")
        #expect(text("GET", "/a/%62") == "x=b")
        #expect(text("GET", "/a/c") == "x=c")
        #expect(text("GET", "/c/d") == "cd")
        #expect(text("GET", "/c/d/") == "cd")
        guard case .respond(let missing) = router.handle(HTTPRequest(method: "GET", target: "/a")) else {
            Issue.record("no reply")
            return
        }
        #expect(missing.status == 404)
    }

    @Test func notFoundAndMethodNotAllowed() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        let missing = try call(emulator, "GET", "/x")
        #expect(missing.status == 404)
        #expect(
            missing.text
                == #"{"error":{"code":"route_not_found","message":"No route for GET /x","type":"invalid_request_error"}}"#
        )
        let wrongMethod = try call(emulator, "DELETE", "/_sandbox/health")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET")
        #expect(errorCode(wrongMethod) == "method_not_allowed")
    }
}
