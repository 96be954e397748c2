import Foundation
import Testing

@testable import CheckoutKit

/// Settle commands are printed for a person to paste: a word a POSIX shell would read otherwise is single-quoted.
@Suite struct ShellWordsTests {
    @Test func plainWordsStayBare() {
        let words = ["checkout-driver", "--session", "/tmp/a_b/state.json", "--set", "KEY=v@x%2B+1,2:3", "Zz09"]
        #expect(ShellWords.join(words) == words.joined(separator: " "))
    }

    @Test(arguments: [
        ("", "''"), ("two words", "'two words'"), ("it's", #"'it'\''s'"#), ("$HOME", "'$HOME'"), ("a;b", "'a;b'"),
        ("a*", "'a*'"), ("~", "'~'"), ("tab\there", "'tab\there'"), ("café", "'café'"), ("Ω", "'Ω'"), ("`x`", "'`x`'"),
        ("a\"b", "'a\"b'"), ("a\\b", "'a\\b'"), ("(x)", "'(x)'"), ("a!", "'a!'"), ("[1]", "'[1]'"), ("{a}", "'{a}'"),
        ("a|b", "'a|b'"), ("a&b", "'a&b'"), ("<x>", "'<x>'"), ("a?b", "'a?b'"), ("#x", "'#x'"),
    ])
    func anythingElseIsQuoted(word: String, quoted: String) {
        #expect(ShellWords.join([word]) == quoted)
    }
}
