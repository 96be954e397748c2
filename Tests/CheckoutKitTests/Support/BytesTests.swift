import Testing

@testable import CheckoutKit

@Suite struct BytesTests {
    @Test func findsANeedleWhereverItStarts() {
        let haystack = Array("aaab/secret/aab".utf8)
        // At the start, inside after a near miss that overlaps it, at the very end.
        for found in ["aaab", "aab", "ab/s", "secret", "/aab", "b"] {
            #expect(Bytes.occurs(Array(found.utf8), in: haystack), "\(found)")
        }
        for missing in ["aaaa", "aabb", "secret/aabx", "x", "aaab/secret/aab!"] {
            #expect(!Bytes.occurs(Array(missing.utf8), in: haystack), "\(missing)")
        }
        #expect(Bytes.occurs([], in: haystack))
        #expect(!Bytes.occurs(Array("a".utf8), in: []))
    }
}
