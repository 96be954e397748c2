import Foundation
import Testing
@testable import WireTypes

/// Form encoding as browsers write it, and HTML escaping, shared by the driver's pages and the emulator's.
@Suite struct EncodingTests {
    @Test func formPairsRoundTrip() {
        let body = FormEncoding.pair("MD", "a b&c=d/é") + "&" + FormEncoding.pair("PaRes", "x+y")
        #expect(body == "MD=a+b%26c%3Dd%2F%C3%A9&PaRes=x%2By")
        let decoded = FormEncoding.decode(Data(body.utf8))
        #expect(decoded.map(\.0) == ["MD", "PaRes"] && decoded.map(\.1) == ["a b&c=d/é", "x+y"])
        #expect(FormEncoding.decode(Data("=nameless&flag".utf8)).map(\.0) == ["flag"])
    }

    @Test func htmlIsEscapedForContentAndAttributes() {
        #expect("<a href=\"x\">Tom & Jerry's</a>".htmlEscaped == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        #expect("plain".htmlEscaped == "plain")
    }

    /// A byte set holds exactly the bytes its rule takes, all 256 of them asked.
    @Test func aByteSetHoldsWhatItsRuleTakes() {
        let odd = ByteSet { $0 % 2 == 1 }
        let held: [Int] = (0...255).filter { odd.contains(UInt8($0)) }
        let oddBytes: [Int] = (0...255).filter { $0 % 2 == 1 }
        #expect(held == oddBytes)
        let high = ByteSet { $0 >= 0x80 }
        let edges: [Bool] = [0xFF, 0x80, 0x7F, 0].map { high.contains($0) }
        #expect(edges == [true, true, false, false])
    }
}
