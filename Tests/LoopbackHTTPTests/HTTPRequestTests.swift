import Testing

@testable import LoopbackHTTP

@Suite struct HTTPRequestTests {
    /// The path is the target up to its query, found on the target's bytes.
    @Test func thePathEndsAtTheQuery() {
        let cases = [
            "/_sandbox/health": "/_sandbox/health", "/a?b=c": "/a", "/a?b?c": "/a", "/é/ü?x=é": "/é/ü", "?x": "",
            "/q?": "/q",
        ]
        for (target, path) in cases {
            #expect(HTTPRequest(method: "GET", target: target).path == path, "\(target)")
        }
    }
}
