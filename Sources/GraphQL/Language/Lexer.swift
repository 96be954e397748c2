import Foundation
import WireTypes

/// Turns a document's text into tokens (GraphQL spec §2.1), one at a time, on its UTF-8 bytes. Whitespace, line
/// terminators, commas, comments and a leading byte-order mark are ignored tokens and never reach the parser.
struct Lexer {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1
    private var lineStart = 0

    init(_ text: String) {
        bytes = Array(text.utf8)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            position = 3
            lineStart = 3
        }
    }

    private var here: SourceLocation { SourceLocation(line: line, column: position - lineStart + 1) }

    private func syntaxError(_ message: String, at location: SourceLocation? = nil) -> GraphQLError {
        GraphQLError("Syntax Error: \(message)", locations: [location ?? here])
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        position + offset < bytes.count ? bytes[position + offset] : nil
    }

    private mutating func newLine(after index: Int) {
        line += 1
        lineStart = index + 1
    }

    /// Skips ignored tokens: spaces, tabs, line terminators (LF, CR, CR LF), commas and `#` comments.
    private mutating func skipIgnored() {
        while let byte = peek() {
            switch byte {
            case 0x20, 0x09, UInt8(ascii: ","):
                position += 1
            case 0x0A:
                newLine(after: position)
                position += 1
            case 0x0D:
                if peek(1) == 0x0A { position += 1 }
                newLine(after: position)
                position += 1
            case UInt8(ascii: "#"):
                while let b = peek(), b != 0x0A, b != 0x0D { position += 1 }
            default:
                return
            }
        }
    }

    mutating func next() throws(GraphQLError) -> Token {
        skipIgnored()
        let start = here
        guard let byte = peek() else { return Token(kind: .endOfFile, value: "", location: start) }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: ":"), UInt8(ascii: "="), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "{"), UInt8(ascii: "|"), UInt8(ascii: "}"):
            position += 1
            return Token(kind: .punctuator, value: String(UnicodeScalar(byte)), location: start)
        case UInt8(ascii: "."):
            guard peek(1) == UInt8(ascii: "."), peek(2) == UInt8(ascii: ".") else {
                throw syntaxError("Unexpected \".\"; did you mean \"...\"?")
            }
            position += 3
            return Token(kind: .punctuator, value: "...", location: start)
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") { return try blockString(start) }
            return try string(start)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try number(start)
        default:
            guard Self.isNameStart(byte) else {
                throw syntaxError(
                    byte < 0x20 || byte == 0x7F
                        ? "Invalid character \(Self.codePoint(byte))."
                        : "Unexpected character \"\(String(decoding: [byte], as: UTF8.self))\".")
            }
            let from = position
            while let b = peek(), Self.isNameContinue(b) { position += 1 }
            return Token(kind: .name, value: String(decoding: bytes[from..<position], as: UTF8.self), location: start)
        }
    }

    static func isNameStart(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z"))
            || b == UInt8(ascii: "_")
    }

    static func isNameContinue(_ b: UInt8) -> Bool { isNameStart(b) || isDigit(b) }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private static func codePoint(_ b: UInt8) -> String {
        let hex = String(b, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: 4 - hex.count) + hex
    }

    /// IntValue and FloatValue (§2.9.1–2): no leading zeros, and a number may not run into a name or a `.`.
    private mutating func number(_ start: SourceLocation) throws(GraphQLError) -> Token {
        let from = position
        var isFloat = false
        if peek() == UInt8(ascii: "-") { position += 1 }
        if peek() == UInt8(ascii: "0") {
            position += 1
            if let b = peek(), Self.isDigit(b) {
                throw syntaxError("Invalid number, unexpected digit after 0: \"\(UnicodeScalar(b))\".")
            }
        } else {
            try digits()
        }
        if peek() == UInt8(ascii: ".") {
            isFloat = true
            position += 1
            try digits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isFloat = true
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            try digits()
        }
        if let b = peek(), b == UInt8(ascii: ".") || Self.isNameStart(b) {
            throw syntaxError("Invalid number, expected digit but got: \"\(UnicodeScalar(b))\".")
        }
        return Token(
            kind: isFloat ? .float : .int, value: String(decoding: bytes[from..<position], as: UTF8.self),
            location: start)
    }

    private mutating func digits() throws(GraphQLError) {
        guard let b = peek(), Self.isDigit(b) else {
            throw syntaxError(
                "Invalid number, expected digit but got: \(peek().map { "\"\(UnicodeScalar($0))\"" } ?? "<EOF>").")
        }
        while let b = peek(), Self.isDigit(b) { position += 1 }
    }

    /// A "quoted string" (§2.9.4) with its escapes; it may not span lines.
    private mutating func string(_ start: SourceLocation) throws(GraphQLError) -> Token {
        position += 1
        var out: [UInt8] = []
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return Token(kind: .string, value: String(decoding: out, as: UTF8.self), location: start)
            case 0x0A, 0x0D:
                throw syntaxError("Unterminated string.")
            case UInt8(ascii: "\\"):
                let escapeStart = here  // an escape's error points at its backslash
                position += 1
                guard let escaped = peek() else { throw syntaxError("Unterminated string.") }
                position += 1
                if let plain = JSON.unescaped(escaped) {  // GraphQL's escapes are JSON's
                    out.append(plain)
                    continue
                }
                guard escaped == UInt8(ascii: "u") else {
                    throw syntaxError(
                        "Invalid character escape sequence: \"\\\(UnicodeScalar(escaped))\".", at: escapeStart)
                }
                do { out.append(contentsOf: try unicodeEscape()) } catch {
                    throw syntaxError("Invalid Unicode escape sequence.", at: escapeStart)
                }
            default:
                if byte < 0x20 && byte != 0x09 {
                    throw syntaxError("Invalid character within String: \(Self.codePoint(byte)).")
                }
                out.append(byte)
                position += 1
            }
        }
        throw syntaxError("Unterminated string.")
    }

    /// `\uXXXX` (with surrogate pairs) or `\u{X…}`, as UTF-8 bytes.
    private mutating func unicodeEscape() throws(GraphQLError) -> [UInt8] {
        func hexValue(_ count: Int?) throws(GraphQLError) -> UInt32 {
            var value: UInt32 = 0
            var seen = 0
            while let b = peek(), let digit = Self.hexDigit(b), count.map({ seen < $0 }) ?? true {
                value = value * 16 + UInt32(digit)
                seen += 1
                position += 1
                if value > 0x10FFFF { break }
            }
            if let count, seen != count { throw syntaxError("Invalid Unicode escape sequence.") }
            if seen == 0 { throw syntaxError("Invalid Unicode escape sequence.") }
            return value
        }
        var scalar: UInt32
        if peek() == UInt8(ascii: "{") {
            position += 1
            scalar = try hexValue(nil)
            guard peek() == UInt8(ascii: "}") else { throw syntaxError("Invalid Unicode escape sequence.") }
            position += 1
        } else {
            scalar = try hexValue(4)
            if (0xD800...0xDBFF).contains(scalar), peek() == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "u") {
                position += 2
                let low = try hexValue(4)
                guard (0xDC00...0xDFFF).contains(low) else { throw syntaxError("Invalid Unicode escape sequence.") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw syntaxError("Invalid Unicode escape sequence.") }
        return Array(String(Character(unicode)).utf8)
    }

    private static func hexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A """block string""" (§2.9.4): raw but for `\"""`, then its common indentation and blank first and last
    /// lines removed (BlockStringValue).
    private mutating func blockString(_ start: SourceLocation) throws(GraphQLError) -> Token {
        position += 3
        var raw: [UInt8] = []
        while let byte = peek() {
            if byte == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                position += 3
                return Token(
                    kind: .blockString, value: Self.blockStringValue(String(decoding: raw, as: UTF8.self)),
                    location: start)
            }
            if byte == UInt8(ascii: "\\"), peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\""),
                peek(3) == UInt8(ascii: "\"")
            {
                raw.append(contentsOf: [0x22, 0x22, 0x22])
                position += 4
                continue
            }
            if byte == 0x0A || byte == 0x0D {
                // CR LF is one line terminator: keep the CR, step over the LF, then count one line.
                if byte == 0x0D, peek(1) == 0x0A {
                    raw.append(0x0D)
                    position += 1
                    raw.append(0x0A)
                    position += 1
                    newLine(after: position - 1)
                    continue
                }
                newLine(after: position)
            } else if byte < 0x20 && byte != 0x09 {
                throw syntaxError("Invalid character within String: \(Self.codePoint(byte)).")
            }
            raw.append(byte)
            position += 1
        }
        throw syntaxError("Unterminated string.", at: here)
    }

    static func blockStringValue(_ raw: String) -> String {
        var lines = raw.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func indent(_ line: String) -> Int { line.prefix { $0 == " " || $0 == "\t" }.count }
        func isBlank(_ line: String) -> Bool { indent(line) == line.count }
        let common = lines.dropFirst().filter { !isBlank($0) }.map(indent).min()
        if let common, common > 0 {
            for i in lines.indices.dropFirst() { lines[i] = String(lines[i].dropFirst(min(common, lines[i].count))) }
        }
        while let first = lines.first, isBlank(first) { lines.removeFirst() }
        while let last = lines.last, isBlank(last) { lines.removeLast() }
        return lines.joined(separator: "\n")
    }
}
