import Foundation
import Testing
import WireTypes

@Suite struct SpacesTests {
    /// What Foundation's trimming of `.whitespaces` gives, for text it trims and text it leaves (line breaks are not
    /// among the spaces), as String and as Substring.
    @Test(arguments: [
        "", " ", "x", "USD", " USD", "USD ", "\tv1=abc\t", "a b", "x\u{A0}", "\u{3000}x", "ä", " ä ", "x\n", "\nx",
        "t=1 ", "  2m  ", "~!", "\u{7F}x\u{7F}",
    ])
    func trimmingSpacesIsFoundationsTrimming(_ text: String) {
        let foundation = text.trimmingCharacters(in: .whitespaces)
        #expect(text.trimmingSpaces() == foundation, "\(text.debugDescription)")
        #expect(("[" + text + "]").dropFirst().dropLast().trimmingSpaces() == foundation, "\(text.debugDescription)")
    }
}
