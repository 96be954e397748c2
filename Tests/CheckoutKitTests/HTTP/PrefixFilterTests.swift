import Testing

@testable import CheckoutKit

/// The quick test the state file's renderer asks of a section before it looks in each member: "may this form occur in
/// a text whose every run went in?" A form that occurs must always be answered "may"; one that does not, nearly always
/// "no".
@Suite struct PrefixFilterTests {
    static let text = Array(
        #"{"by":"Bahn's confirm of pi_3NXq9LkdW7","at":"2026-12-07T20:06:35.071Z","kind":"token"}"#.utf8)

    @Test func everyFormThatOccursMayBeHeld() {
        var filter = PrefixFilter(bits: 16)
        filter.insertEvery(in: Self.text)
        for start in Self.text.indices {
            for end in start...Self.text.count {
                let form = Array(Self.text[start..<end])
                #expect(filter.mayHold(form), "\(String(decoding: form, as: UTF8.self))")
            }
        }
    }

    @Test func aFormWhoseLaterRunsDoNotOccurIsNotHeld() {
        var filter = PrefixFilter(bits: 20)
        filter.insertEvery(in: Self.text)
        // Its first six bytes occur ("pi_3NX"), its last six do not: the first run alone would answer "may".
        #expect(!filter.mayHold(Array("pi_3NXq9LkdW7-another-intent-id".utf8)))
        #expect(!filter.mayHold(Array("another-secret-xyz".utf8)))
        #expect(filter.mayHold(Array("pi_3".utf8)), "shorter than a run: it may")
        #expect(filter.bits == 20 && PrefixFilter(bits: 16).bits == 16)
    }
}
