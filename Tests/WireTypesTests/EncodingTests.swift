import Foundation
import Testing

@testable import WireTypes

/// Form and percent encoding as browsers and Foundation write them, and markup escaping, shared by the driver's pages,
/// its JUnit report and the emulator's pages.
@Suite struct EncodingTests {
    @Test func formPairsRoundTrip() {
        let body = FormEncoding.pair("MD", "a b&c=d/é") + "&" + FormEncoding.pair("PaRes", "x+y")
        #expect(body == "MD=a+b%26c%3Dd%2F%C3%A9&PaRes=x%2By")
        let decoded = FormEncoding.decode(Data(body.utf8))
        #expect(decoded.map(\.0) == ["MD", "PaRes"] && decoded.map(\.1) == ["a b&c=d/é", "x+y"])
        #expect(FormEncoding.decode(Data("=nameless&flag".utf8)).map(\.0) == ["flag"])
    }

    @Test func markupIsEscapedForContentAndAttributes() {
        #expect(
            "<a href=\"x\">Tom & Jerry's</a>".markupEscaped
                == "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;")
        #expect("plain".markupEscaped == "plain")
        // XML 1.0 allows no other C0 control, not even as a reference; tab, line feed and carriage return stay.
        #expect("a\u{1}b\u{1F}c\td\ne\rf\u{7F}é".markupEscaped == "a?b?c\td\ne\rf\u{7F}é")
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

    /// Every ASCII character and some beyond, one at a time and all together: each set spells what Foundation's
    /// `addingPercentEncoding` spells with the set it stands for.
    @Test func percentEncodingSpellsWhatFoundationSpells() {
        let ascii = (0...127).map { String(UnicodeScalar(UInt8($0))) }
        let texts = ascii + ["é", "🔑", "a b/c?d#e%f", ascii.joined(), ""]
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        let pathSegment = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))
        for text in texts {
            #expect(
                PercentEncoding.encoded(text, keeping: PercentEncoding.unreserved)
                    == text.addingPercentEncoding(withAllowedCharacters: unreserved))
            #expect(
                PercentEncoding.pathSegment(text) == text.addingPercentEncoding(withAllowedCharacters: pathSegment),
                "\(text)")
            #expect(
                PercentEncoding.encoded(text, keeping: PercentEncoding.query)
                    == text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed))
        }
        #expect(PercentEncoding.pathSegment("order/1 ?x") == "order%2F1%20%3Fx")
    }
}
