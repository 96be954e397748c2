import Foundation
import Testing

@testable import WireTypes

@Suite struct JSONTests {
    /// A document far larger than the serializer's first buffer — a string longer than all written before it, then
    /// hundreds of short members, a control character escaped — comes out whole: byte for byte the text put together
    /// by hand, parsed back equal, and the same when appended after other bytes.
    @Test func largeDocumentsAreWrittenWhole() throws {
        let long = String(repeating: "abcdefghij", count: 500) + "\u{1}"
        var members: [String: String] = ["a-long": long]
        for i in 0..<300 { members["k\(i)"] = "value \(i)" }
        let document = JSON.object(JSON.Object(members.map { ($0.key, JSON.string($0.value)) }))
        let quotedLong = "\"" + String(repeating: "abcdefghij", count: 500) + "\\u0001\""
        let expected =
            "{"
            + members.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { key in
                "\"\(key)\":" + (key == "a-long" ? quotedLong : "\"\(members[key]!)\"")
            }.joined(separator: ",") + "}"
        #expect(document.serialized() == expected)
        #expect(try JSON.parse(document.serialized(pretty: true)) == document)
        var appended = Array("prefix ".utf8)
        document.write(into: &appended, pretty: false, indent: 0)
        #expect(String(decoding: appended, as: UTF8.self) == "prefix " + expected)
        var quoted: [UInt8] = []
        JSON.appendQuoted(long, to: &quoted)
        #expect(String(decoding: quoted, as: UTF8.self) == quotedLong)
    }

    @Test func roundTripIsStableWithSortedKeys() throws {
        let text = #"{"b":[1,2.5,-3,true,false,null],"a":{"z":"x","y":{}},"c":[]}"#
        let value = try JSON.parse(text)
        #expect(value.serialized() == #"{"a":{"y":{},"z":"x"},"b":[1,2.5,-3,true,false,null],"c":[]}"#)
        #expect(try JSON.parse(value.serialized()) == value)
    }

    /// Objects inside objects and arrays each get exactly their own members (each open object reads into an array of
    /// its own while the ones inside it are read), and a key given twice keeps its last value, as JSONSerialization
    /// does.
    @Test func eachObjectGetsItsOwnMembersAndARepeatedKeyItsLastValue() throws {
        let text =
            #"{"a":{"b":1,"c":{"d":2,"e":[{"f":3},{},{"g":{"h":4}}]},"i":5},"j":[{"k":6,"k":7}],"a2":{},"l":8,"l":9}"#
        #expect(
            try JSON.parse(text).serialized()
                == #"{"a":{"b":1,"c":{"d":2,"e":[{"f":3},{},{"g":{"h":4}}]},"i":5},"a2":{},"j":[{"k":7}],"l":9}"#)
        #expect(try JSON.parse(#"{"x":1,"x":{"y":2},"x":[3]}"#) == ["x": [3]])
    }

    @Test func integersHaveNoFraction() {
        #expect(JSON.number(8000).serialized() == "8000")
        #expect(JSON.number(-1).serialized() == "-1")
        #expect(JSON.number(0.25).serialized() == "0.25")
        #expect(JSON.number(1_234_567_890_123).serialized() == "1234567890123")
    }

    @Test func booleansAreNotNumbers() throws {
        let value = try JSON.parse(#"{"t":true,"f":false,"one":1,"zero":0}"#)
        #expect(value["t"] == .bool(true))
        #expect(value["f"] == .bool(false))
        #expect(value["one"] == .number(1))
        #expect(value["zero"] == .number(0))
        #expect(value["one"]?.boolValue == nil)
        #expect(value["t"]?.intValue == nil)
    }

    @Test func stringsAreEscaped() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} é ☃"
        let text = JSON.string(tricky).serialized()
        #expect(text == #""quote \" backslash \\ newline \n tab \t cr \r bell \u0007 é ☃""#)
        #expect(try JSON.parse(text) == .string(tricky))
        // Every one-character escape RFC 8259 has, each read as its own byte.
        #expect(try JSON.parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
    }

    /// A string's bytes are checked as UTF-8, with or without escapes in it: the standard library's validating
    /// initialiser is the oracle, over hand-picked cases (a three-byte prefix of a four-byte character is as long as
    /// the U+FFFD a repair would put there) and random bytes.
    @Test func stringsMustBeValidUTF8() throws {
        func parses(_ inner: [UInt8]) -> String? {
            try? JSON.parse(Data([UInt8(ascii: "\"")] + inner + [UInt8(ascii: "\"")])).stringValue
        }
        let cases: [[UInt8]] = [
            Array("plain".utf8), Array("é ☃ 😀".utf8), [0xFF], [0x80], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98],
            [0xF0, 0x9F, 0x98, 0x41], [0xC0, 0xAF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xEF, 0xBF, 0xBD], Array("a".utf8) + [0xF0, 0x9F, 0x98],
        ]
        var generator = SystemRandomNumberGenerator()
        let random = (0..<2_000).map { _ in
            (0..<Int.random(in: 1...6, using: &generator)).map { _ in
                UInt8.random(in: 0x20...0xFF, using: &generator)
            }.filter { $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
        }
        for bytes in cases + random {
            let expected = String(validating: bytes, as: UTF8.self)
            #expect(parses(bytes) == expected, "\(bytes)")
            // The same bytes after an escape go through the other path.
            #expect(parses(Array(#"\n"#.utf8) + bytes) == expected.map { "\n" + $0 }, "\(bytes) after an escape")
        }
    }

    @Test func prettyOutputParsesBack() throws {
        let value: JSON = ["k": [1, "two", ["three": nil]], "a": true]
        let pretty = value.serialized(pretty: true)
        #expect(pretty.contains("\n  \"a\": true"))
        #expect(try JSON.parse(pretty) == value)
    }

    @Test func fragmentsAndErrors() throws {
        #expect(try JSON.parse("\"x\"") == .string("x"))
        #expect(try JSON.parse("42") == .number(42))
        #expect(throws: JSON.ParseError.self) { try JSON.parse("{\"a\":") }
        #expect(throws: JSON.ParseError.self) { try JSON.parse("") }
        // A raw control character is refused before an escape and after one (where plain runs are copied at once).
        #expect(throws: JSON.ParseError.self) { try JSON.parse("\"a\tb\"") }
        #expect(throws: JSON.ParseError.self) { try JSON.parse("\"a\\nb\tc\"") }
        #expect(throws: JSON.ParseError.self) { try JSON.parse("\"a\\nbc") }  // unterminated after an escape
        #expect(try JSON.parse(#""query {\n  a\n  b(x: \"y\")\n}""#) == .string("query {\n  a\n  b(x: \"y\")\n}"))
    }

    @Test func interpolationTextUnquotesOnlyStrings() {
        #expect(JSON.string("abc").interpolationText == "abc")
        #expect(JSON.number(3).interpolationText == "3")
        #expect(JSON.object(["a": 1]).interpolationText == #"{"a":1}"#)
    }

    @Test func optionalsBecomeNullAndMembersAreReadByKind() throws {
        #expect(JSON(nil as String?) == .null)
        #expect(JSON("a" as String?) == .string("a"))
        #expect(JSON(nil as Int?) == .null)
        #expect(JSON(7 as Int?) == .number(7))
        #expect(JSON(["k": "v"] as [String: String]?) == ["k": "v"])
        #expect(JSON(nil as [String: String]?) == .null)

        let body = try JSON.parse(#"{"s":"x","n":12,"f":12.5,"b":true,"o":{"s":"y"},"z":null}"#)
        let object = try #require(body.objectValue)
        #expect(object.string("s") == "x")
        #expect(object.string("n") == nil)  // a number is not a string
        #expect(object.integer("n") == 12)
        #expect(object.integer("f") == nil)  // nor is a fraction an integer
        #expect(object.integer("b") == nil)  // nor a boolean
        #expect(object.integer("s") == nil)
        #expect(object.object("o")?.string("s") == "y")
        #expect(object.object("s") == nil)
        #expect(body.string("s") == "x")
        #expect(body.object("o") == ["s": "y"])
        #expect(object["z"]?.isNull == true)
        #expect(object["b"]?.isNull == false)
    }

    /// A number keeps the text it was written with, from a parse to a write: 12.00 is not turned into 12, nor 1e3 into
    /// 1000, and a number too big for a double keeps its digits. Its value is what equality goes by.
    @Test func numbersKeepTheirText() throws {
        let value = try JSON.parse(#"[12.00, 12, 1e3, -0.50, 123456789012345678901234567890, 1E+2]"#)
        #expect(value.serialized() == "[12.00,12,1e3,-0.50,123456789012345678901234567890,1E+2]")
        #expect(value.serialized(pretty: true).contains("\n  12.00,\n"))
        let numbers = try #require(value.arrayValue)
        #expect(numbers[0] == .number(12) && numbers[0] == numbers[1], "equal by value")
        #expect(numbers[0].interpolationText == "12.00", "a template gets the text as written")
        #expect(numbers[2].intValue == 1000 && numbers[2].integerAsWritten == nil)
        #expect(numbers[0].intValue == 12 && numbers[0].integerAsWritten == nil && numbers[1].integerAsWritten == 12)
        #expect(
            try JSON.parse(#"{"a": 12.00}"#).objectValue?.integer("a") == nil, "a protocol's integer is read as written"
        )
        #expect(numbers[3].doubleValue == -0.5)
        #expect(Set([JSON.number(12), try JSON.parse("12.0")]).count == 1, "hashing agrees with equality")
    }

    /// `JSON.Number(literal:)` takes exactly RFC 8259's number grammar, and the parser refuses a leading zero, since a
    /// number is written back as it was read.
    @Test func aNumberIsWrittenOnlyAsJSONWritesOne() throws {
        for text in ["0", "-0", "12", "12.00", "0.5", "1e3", "1E-2", "-1.5e+10"] {
            #expect(JSON.Number(literal: text)?.literal == text, "\(text)")
        }
        for text in ["", "01", "+1", "12.", ".5", "1e", "1e+", " 1", "1 ", "١٢", "0x10", "NaN", "-", "1.2.3", "12,00"] {
            #expect(JSON.Number(literal: text) == nil, "\(text)")
        }
        #expect(throws: JSON.ParseError.self) { try JSON.parse("[012]") }
        #expect(throws: JSON.ParseError.self) { try JSON.parse("-01") }
        #expect(try JSON.parse("[0, -0, 0.5]").serialized() == "[0,-0,0.5]")
    }

    /// Every whole number a Double holds exactly is written with all its digits.
    @Test func largeWholeNumbersKeepTheirDigits() {
        #expect(JSON.number(2e15).serialized() == "2000000000000000")
        #expect(JSON.number(9_007_199_254_740_992).serialized() == "9007199254740992")
        #expect(JSON.number(-9_007_199_254_740_992).serialized() == "-9007199254740992")
    }
}
