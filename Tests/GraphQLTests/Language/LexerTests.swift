import Testing

@testable import GraphQL

/// The lexer (spec §2.1): tokens, ignored tokens, strings and numbers, and syntax errors with line and column.
@Suite struct LexerTests {
    func tokens(_ text: String) throws(GraphQLError) -> [Token] {
        var lexer = Lexer(text)
        var out: [Token] = []
        while true {
            let t = try lexer.next()
            if t.kind == .endOfFile { return out }
            out.append(t)
        }
    }

    func error(_ text: String) -> GraphQLError? {
        do {
            _ = try tokens(text)
            return nil
        } catch { return error }
    }

    @Test func punctuatorsNamesAndNumbersWithTheirPositions() throws {
        let t = try tokens("query Q($a: Int = -12) {\n  f(x: 1.5e3, y: 0) @skip ... on T }")
        #expect(
            t.map(\.value) == [
                "query", "Q", "(", "$", "a", ":", "Int", "=", "-12", ")", "{",
                "f", "(", "x", ":", "1.5e3", "y", ":", "0", ")", "@", "skip", "...", "on", "T", "}",
            ])
        #expect(t[8].kind == .int && t[15].kind == .float && t[18].kind == .int)
        #expect(t[11].location == SourceLocation(line: 2, column: 3), "after a line break, columns restart")
    }

    @Test func commasCommentsBOMAndCRLFAreIgnored() throws {
        let t = try tokens("\u{FEFF}a,,b # a comment, with {braces}\r\nc\rd")
        #expect(t.map(\.value) == ["a", "b", "c", "d"])
        #expect(t[2].location == SourceLocation(line: 2, column: 1))
        #expect(t[3].location == SourceLocation(line: 3, column: 1), "a lone CR ends a line too")
    }

    @Test func stringEscapes() throws {
        let t = try tokens(#""a\"b\\c\/d\n\t\u00e9\uD83D\uDE00\u{1F600}""#)
        #expect(t.first?.value == "a\"b\\c/d\n\té😀😀")
        // Every one-character escape, each standing for its own byte.
        #expect(try tokens(#""\"\\\/\b\f\n\r\t""#).first?.value == "\"\\/\u{8}\u{C}\n\r\t")
    }

    @Test func blockStringsAreDedentedAndKeepEscapedQuotes() throws {
        let t = try tokens("\"\"\"\n    Hello,\n      World!\n\n    Yours, \\\"\"\" GraphQL.\n  \"\"\"")
        #expect(t.first?.kind == .blockString)
        #expect(t.first?.value == "Hello,\n  World!\n\nYours, \"\"\" GraphQL.")
    }

    @Test func aBlockStringWithCRLFLineEndsHasOneLineBreakPerLine() throws {
        let t = try tokens("\"\"\"\r\n  a\r\n  b\r\n\"\"\" next")
        #expect(t.first?.value == "a\nb")
        #expect(t.last?.location == SourceLocation(line: 4, column: 5), "CR LF counts as one line")
    }

    @Test(arguments: [
        ("\"abc", "Syntax Error: Unterminated string.", 1, 5),
        ("\"a\nb\"", "Syntax Error: Unterminated string.", 1, 3),
        (#""\q""#, #"Syntax Error: Invalid character escape sequence: "\q"."#, 1, 2),
        ("00", "Syntax Error: Invalid number, unexpected digit after 0: \"0\".", 1, 2),
        ("1.", "Syntax Error: Invalid number, expected digit but got: <EOF>.", 1, 3),
        ("12a", "Syntax Error: Invalid number, expected digit but got: \"a\".", 1, 3),
        ("a\n  ?", "Syntax Error: Unexpected character \"?\".", 2, 3),
        ("..", "Syntax Error: Unexpected \".\"; did you mean \"...\"?", 1, 1),
        (#""\u{110000}""#, "Syntax Error: Invalid Unicode escape sequence.", 1, 2),
        (#""ab\uD800x""#, "Syntax Error: Invalid Unicode escape sequence.", 1, 4),
    ])
    func syntaxErrorsSayWhereWithLineAndColumn(text: String, message: String, line: Int, column: Int) {
        let e = error(text)
        #expect(e?.message == message, "\(text)")
        #expect(e?.locations == [SourceLocation(line: line, column: column)], "\(text): \(String(describing: e))")
    }
}
