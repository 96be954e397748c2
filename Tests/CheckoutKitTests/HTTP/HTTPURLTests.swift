import CheckoutKit
import Testing

@Suite struct HTTPURLTests {
    @Test(arguments: [
        "http://127.0.0.1:8080", "https://api.example.com/v1/?a=b#c", "HTTP://Example.com",
        "http://user:pw@host:1/p", "http://[::1]:8080/x", "http://host/%41%2f", "https://bücher.example/ä",
    ])
    func anHTTPURLWithAHostHasNoProblem(url: String) {
        #expect(HTTPURL.problem(url) == nil, "\(url)")
    }

    @Test(arguments: [
        ("bn.cakedigibank.tech", "is not a URL: give http:// or https://host…"),
        ("://host", "is not a URL"), ("1http://host", "is not a URL"), ("http://ho st", "is not a URL"),
        ("http://host/<x>", "is not a URL"), ("http://host/a|b", "is not a URL"), ("http://host/%4", "is not a URL"),
        ("http://host/%zz", "is not a URL"), ("http://host/\u{7F}", "is not a URL"),
        ("file:///etc/passwd", "is a file:// URL; only http:// or https:// URLs are used"),
        ("ftp://example.com", "is a ftp:// URL"), ("http:host", "has no host"), ("http://", "has no host"),
        ("http://:80/x", "has no host"), ("http://user@/x", "has no host"), ("http://[]:1", "has no host"),
        ("http://host\nx", "holds a line break (LF)"),
    ])
    func anythingElseIsNamed(url: String, problem: String) {
        let found = HTTPURL.problem(url)
        #expect(found?.hasPrefix(problem) == true, "\(url): \(found ?? "nil")")
    }

    @Test func theSchemesAllowedAreTheCallers() {
        #expect(
            HTTPURL.problem("https://example.com", schemes: ["http"]) == "is a https:// URL; only http:// URLs are used"
        )
        #expect(HTTPURL.problem("http://example.com", schemes: ["http"]) == nil)
    }

    @Test(arguments: [
        ("http://host", "http://host"), ("http://host/", "http://host"), ("http://host/v1///", "http://host/v1"),
        ("https://bücher.example/ä/", "https://bücher.example/ä"), ("///", ""), ("", ""), ("/a/b", "/a/b"),
    ])
    func aBaseURLLosesItsTrailingSlashesOnly(url: String, base: String) {
        #expect(HTTPURL.base(url) == base)
    }
}
