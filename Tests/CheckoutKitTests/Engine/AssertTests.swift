import Foundation
import Testing

@testable import CheckoutKit

/// What `expect` can assert beyond equals, matches and exists — headers, a step's duration, comparisons on numbers and
/// on money as exact decimals, contains, the count of a list, types — each passing, and each failing with the path,
/// what was expected and what was found.
@Suite struct AssertTests {
    static let answer: JSON = [
        "total": "10.00", "cents": 1000, "rate": 0.5, "name": "Standard shipping", "tags": ["a", "b"],
        "lines": [["id": 1], ["id": 2], ["id": 3]], "meta": ["k": 1], "none": nil, "flag": true,
    ]

    /// Runs one step against a server that answers `answer` (after `delay` seconds) with two headers, with `expect` as
    /// given.
    func run(_ expect: String, delay: Double = 0) async throws -> FlowResult {
        let server = try TestServer { _, _ in
            if delay > 0 { Thread.sleep(forTimeInterval: delay) }
            return .json(200, Self.answer, headers: ["X-Request-Id": "req_123", "Cache-Control": "no-store"])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        return try await h.run(
            #"{"name": "f", "steps": [{"name": "s", "request": {"url": "${env.BASE}/x"}, "expect": "# + expect + "}]}")
    }

    func passes(_ expect: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let result = try await run(expect)
        #expect(result.passed, "\(expect): \(result.failure?.message ?? "")", sourceLocation: sourceLocation)
    }

    func fails(
        _ expect: String, delay: Double = 0, saying message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await run(expect, delay: delay)
        #expect(result.failure?.code == .failure, sourceLocation: sourceLocation)
        #expect(result.failure?.message == "step 's': " + message, sourceLocation: sourceLocation)
    }

    @Test func headers() async throws {
        try await passes(
            #"{"headers": {"Cache-Control": "no-store", "x-request-id": {"matches": "^req_[0-9]+$"}, "X-Request-Id": {"exists": true}, "Set-Cookie": {"exists": false}}}"#
        )
        try await fails(
            #"{"headers": {"Cache-Control": "no-cache"}}"#,
            saying: #"expected header Cache-Control to equal "no-cache", found "no-store""#)
        try await fails(
            #"{"headers": {"X-Request-Id": {"matches": "^ord_"}}}"#,
            saying: #"expected header X-Request-Id to match /^ord_/, found "req_123""#)
        try await fails(
            #"{"headers": {"Location": {"exists": true}}}"#,
            saying: "expected header Location to be there, found missing")
    }

    /// A step that polls asserts on the headers of the answer it ended with.
    @Test func headersAreTheLastAnswers() async throws {
        let server = try TestServer { _, attempt in
            .json(200, ["state": attempt < 3 ? "pending" : "done"], headers: ["X-Attempt": String(attempt)])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name": "f", "steps": [{"name": "s", "request": {"url": "${env.BASE}/x"},
              "until": {"path": "state", "equals": "done", "interval": "10ms", "timeout": "5s"}, "expect": {"headers": {"X-Attempt": "3"}}}]}
            """#)
        #expect(result.passed, "\(result.failure?.message ?? "")")
    }

    /// A credential header is never shown, not even in a failed assert's message; `contains` and a header's value are
    /// templates, like `equals`.
    @Test func aCredentialHeaderIsMaskedAndValuesAreTemplates() async throws {
        let server = try TestServer { _, _ in
            .json(
                200, ["name": "Standard shipping"],
                headers: ["Set-Cookie": "session=abc123secret", "X-Kind": "express"])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let cookie = try await h.run(
            #"{"name": "f", "steps": [{"name": "s", "request": {"url": "${env.BASE}/x"}, "expect": {"headers": {"Set-Cookie": {"matches": "^nope"}}}}]}"#
        )
        #expect(
            cookie.failure?.message == #"step 's': expected header Set-Cookie to match /^nope/, found "[REDACTED]""#,
            "\(cookie.failure?.message ?? "")")
        let templated = try await h.run(
            #"""
            {"name": "f", "vars": {"word": "shipping", "kind": "express"},
             "steps": [{"name": "s", "request": {"url": "${env.BASE}/x"}, "expect": {"contains": {"name": "${vars.word}"}, "headers": {"X-Kind": "${vars.kind}"}}}]}
            """#)
        #expect(templated.passed, "\(templated.failure?.message ?? "")")
    }

    @Test func comparisonsOnNumbersAndMoney() async throws {
        try await passes(
            #"{"compare": {"cents": {">": 999, "<=": 1000}, "total": {"==": "10", ">=": "9.99"}, "rate": {"between": [0.5, "0.50"]}}}"#
        )
        try await fails(#"{"compare": {"cents": {"<": 1000}}}"#, saying: "expected $.cents to be < 1000, found 1000")
        // Exact decimals: a float would call 10.00 > 9.999999999999999999 false.
        try await fails(
            #"{"compare": {"total": {"<=": "9.999999999999999999"}}}"#,
            saying: #"expected $.total to be <= 9.999999999999999999, found "10.00""#)
        try await fails(
            #"{"compare": {"total": {"between": ["10.01", 20]}}}"#,
            saying: #"expected $.total to be >= 10.01 and <= 20, found "10.00""#)
        try await fails(
            #"{"compare": {"name": {">": 1}}}"#, saying: #"expected $.name to be > 1, found "Standard shipping""#)
        try await fails(#"{"compare": {"gone": {">": 1}}}"#, saying: "expected $.gone to be > 1, found missing")
    }

    @Test func containsCountAndType() async throws {
        try await passes(
            #"{"contains": {"name": "shipping", "tags": "b", "meta": "k"}, "count": {"lines": 3, "tags": {">=": 1}}, "type": {"cents": "integer", "rate": "number", "total": "string", "flag": "boolean", "lines": "array", "meta": "object", "none": "null"}}"#
        )
        try await fails(
            #"{"contains": {"name": "express"}}"#,
            saying: #"expected $.name to contain "express", found "Standard shipping""#)
        try await fails(#"{"contains": {"tags": "c"}}"#, saying: #"expected $.tags to contain "c", found ["a","b"]"#)
        try await fails(
            #"{"count": {"lines": 2}}"#,
            saying: #"expected the count of $.lines to be == 2, found 3 ([{"id":1},{"id":2},{"id":3}])"#)
        try await fails(
            #"{"count": {"name": 1}}"#, saying: #"expected the count of $.name to be == 1, found "Standard shipping""#)
        try await fails(
            #"{"type": {"rate": "integer"}}"#, saying: "expected $.rate to be an integer, found a number 0.5")
        try await fails(
            #"{"type": {"cents": "string"}}"#, saying: "expected $.cents to be a string, found an integer 1000")
    }

    @Test func duration() async throws {
        try await passes(#"{"duration": {"<": "5s"}}"#)
        let result = try await run(#"{"duration": {"<": "100ms"}}"#, delay: 0.3)
        let message = try #require(result.failure?.message)
        #expect(message.hasPrefix("step 's': expected the step to take < 100ms, it took 0."), "\(message)")
    }

    @Test func badAssertsAreRefusedWhenTheFileIsRead() throws {
        let h = Harness()
        func problem(_ expect: String) -> String {
            let text =
                #"{"name": "f", "steps": [{"name": "s", "request": {"url": "http://x"}, "expect": "# + expect + "}]}"
            do {
                _ = try h.flow(text)
                return ""
            } catch { return (error as? Diagnostic)?.message ?? "\(error)" }
        }
        #expect(
            problem(#"{"compare": {"a": {"<": "1,000"}}}"#).contains(
                #"$.steps[0].expect.compare.a["<"]: expected a number or a decimal string such as "10.00", found "1,000""#
            ))
        #expect(problem(#"{"compare": {"a": {"between": [5, 1]}}}"#).contains("the low end 5 is above the high end 1"))
        #expect(
            problem(#"{"compare": {"a": {"~": 1}}}"#).contains(#"$.steps[0].expect.compare.a["~"]: unknown key '~'"#))
        #expect(problem(#"{"compare": {"a": {}}}"#).contains("give a bound"))
        #expect(problem(#"{"count": {"a": -1}}"#).contains("a count is a whole number of elements, found -1"))
        #expect(
            problem(#"{"type": {"a": "float"}}"#).contains("$.steps[0].expect.type.a: expected a type, found \"float\"")
        )
        #expect(
            problem(#"{"headers": {"X-A": {"equals": "1", "exists": true}}}"#).contains(
                "give one of 'equals', 'matches' or 'exists'"))
        #expect(problem(#"{"headers": {"Bad Name": "1"}}"#).contains("'Bad Name' is not a valid header name"))
        #expect(
            problem(#"{"duration": {"<": "soon"}}"#).contains(#"$.steps[0].expect.duration["<"]: expected seconds"#))
    }

    @Test func exactDecimalsCompareDigitByDigit() {
        let d = { (s: String) in ExactDecimal(s)! }
        #expect(d("10.00") == d("10") && d("-0") == d("0") && d("007.50") == d("7.5"))
        #expect(d("9.999999999999999999") < d("10") && d("-2") < d("-1.5") && d("-1") < d("0.01"))
        #expect(d("100000000000000000000000000001") > d("100000000000000000000000000000"))
        // Past a double's 15–17 digits, in the fraction too: a float would call these equal.
        #expect(d("10") < d("10.0000000000000000001") && d("0.12345678901234567891") < d("0.12345678901234567892"))
        // The exponents the JSON writer uses for very small and very large numbers.
        #expect(d("1e-05") == d("0.00001") && d("1.5e+16") == d("15000000000000000") && d("2E3") == d("2000"))
        #expect(Comparison.exact(0.00001) == d("0.00001") && Comparison.exact(1e16) == d("10000000000000000"))
        for bad in ["", "1,000", " 1", "1.", ".5", "+1", "--1", "1.2.3", "1e", "e5", "1e+1x"] {
            #expect(ExactDecimal(bad) == nil, "\(bad)")
        }
    }
}
