import Foundation
import Testing

@testable import LoopbackHTTP

@Suite struct HTTPHeadersTests {
    @Test func namesAreLookedUpWithCaseFolded() {
        var headers: HTTPHeaders = ["Content-Type": "application/json", "X-Request-ID": "a", "x-request-id": "b"]
        #expect(headers["content-type"] == "application/json")
        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.values("X-REQUEST-ID") == ["a", "b"])
        #expect(headers["Content-Typ"] == nil)
        #expect(headers["Content-Types"] == nil)
        headers["X-Request-Id"] = "c"
        #expect(headers.values("x-request-id") == ["c"])
        headers["content-type"] = nil
        #expect(headers["Content-Type"] == nil)
        #expect(headers.fields.count == 1)
    }

    /// Only letters fold: `@` and `` ` ``, `[` and `{`, `^` and `~` differ by the same bit as `A` and `a`, and are
    /// different characters. Foundation's case-insensitive comparison is the oracle over every pair of ASCII bytes.
    @Test func onlyLettersFold() {
        #expect(!HTTPHeaders.sameName("X-@", "X-`"))
        #expect(!HTTPHeaders.sameName("a[b", "a{b"))
        #expect(HTTPHeaders.sameName("Idempotency-Key", "idempotency-key"))
        var disagreements: [String] = []
        for x in UInt8(0x21)...UInt8(0x7E) {
            for y in UInt8(0x21)...UInt8(0x7E) {
                let a = String(decoding: [UInt8(ascii: "k"), x], as: UTF8.self)
                let b = String(decoding: [UInt8(ascii: "K"), y], as: UTF8.self)
                if HTTPHeaders.sameName(a, b) != (a.caseInsensitiveCompare(b) == .orderedSame) {
                    disagreements.append("\(a) \(b)")
                }
            }
        }
        #expect(disagreements.isEmpty)
    }
}
