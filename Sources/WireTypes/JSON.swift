import Foundation

/// A JSON value. Flows, captures, templating and reports all work on this one type.
public enum JSON: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Number)
    case string(String)
    case array([JSON])
    case object(Object)

    /// Whether the two are the very same value: the same case with bit-for-bit the same payload (for an array or an
    /// object, the same storage). True implies `==`; false says nothing. A cache compares a part it rendered with the
    /// part it is given in O(1) this way before it compares them member by member.
    public func isIdentical(to other: JSON) -> Bool {
        var a = self
        var b = other
        return withUnsafeBytes(of: &a) { x in
            withUnsafeBytes(of: &b) { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    public struct ParseError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Parses UTF-8 JSON text (RFC 8259). Fragments (a bare string or number) are accepted.
    public static func parse(_ data: Data) throws(ParseError) -> JSON { try JSONParser.parse(Array(data)) }

    public static func parse(_ text: String) throws(ParseError) -> JSON { try JSONParser.parse(Array(text.utf8)) }

    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }
    /// A number whose value is whole (12, and 12.0 or 1.2e1 too) and small enough to be exact.
    public var intValue: Int? {
        if case .number(let n) = self { return n.wholeValue }
        return nil
    }
    /// A number written as an integer — digits, with an optional minus sign — and small enough to be exact: 12, not
    /// 12.00 or 1.2e1. For a field a protocol types as an integer, read strictly.
    public var integerAsWritten: Int? {
        if case .number(let n) = self { return n.integerAsWritten }
        return nil
    }
    public var doubleValue: Double? {
        if case .number(let n) = self { return n.double }
        return nil
    }
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
    public var objectValue: Object? {
        if case .object(let o) = self { return o }
        return nil
    }
    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The kind of value, for error messages ("expected a string, found a number").
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Text for templating: strings unquoted, everything else as compact JSON.
    public var interpolationText: String {
        if case .string(let s) = self { return s }
        return serialized()
    }

    /// Compact JSON with sorted keys, so that output is stable from run to run.
    public func serialized(pretty: Bool = false) -> String {
        String(decoding: bytes(pretty: pretty, newline: false), as: UTF8.self)
    }

    public var data: Data { Data(bytes(pretty: false, newline: false)) }

    /// The serialized bytes, with a final line break when `newline` (a file's last line).
    public func serializedData(pretty: Bool, newline: Bool = false) -> Data {
        Data(bytes(pretty: pretty, newline: newline))
    }

    // Written as UTF-8 bytes, never through `String` appends: a state file of a long batch is rewritten many times a
    // second, and byte appends cost a tenth of scalar-by-scalar string appends.
    private func bytes(pretty: Bool, newline: Bool) -> [UInt8] {
        var out = ByteWriter()
        write(to: &out, pretty: pretty, indent: 0)
        if newline { out.append(UInt8(ascii: "\n")) }
        return out.bytes
    }

    /// Appends the serialized value as it stands `indent` levels deep in a pretty document: a document can be put
    /// together from parts serialized apart, byte for byte the same as serialized whole.
    public func write(into out: inout [UInt8], pretty: Bool, indent: Int) {
        var writer = ByteWriter()
        write(to: &writer, pretty: pretty, indent: indent)
        writer.append(to: &out)
    }

    /// Appends `s` as a JSON string literal.
    public static func appendQuoted(_ s: String, to out: inout [UInt8]) {
        // Most strings need no escape: copied as they are, with no buffer of the writer's made for each (the GraphQL
        // engine writes every key and string of an answer through here).
        var text = s
        let plain = text.withUTF8 { bytes in
            var nonASCII = false
            guard JSONStringScan.plainEnd(in: bytes, from: 0, nonASCII: &nonASCII) == bytes.count else { return false }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: bytes)
            out.append(UInt8(ascii: "\""))
            return true
        }
        if plain { return }
        var writer = ByteWriter(capacity: s.utf8.count + 8)
        quote(s, into: &writer)
        writer.append(to: &out)
    }

    /// What a one-character escape after a backslash stands for in a JSON string (RFC 8259 §7) — and in a GraphQL
    /// string, which has the same ones: `\" \\ \/ \b \f \n \r \t`. Nil for any other character (`u` begins a `\uXXXX`).
    public static func unescaped(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
    }

    private static func newline(_ out: inout ByteWriter, indent: Int) {
        out.append(UInt8(ascii: "\n"))
        // Copied in runs, not appended a space at a time: a report's step outputs nest ten levels deep.
        var left = indent * 2
        while left > 0 {
            let run = min(left, spaces.count)
            spaces.withUnsafeBufferPointer { out.append(UnsafeBufferPointer(rebasing: $0[..<run])) }
            left -= run
        }
    }
    private static let spaces = [UInt8](repeating: UInt8(ascii: " "), count: 64)

    private func write(to out: inout ByteWriter, pretty: Bool, indent: Int) {
        switch self {
        case .null: out.append("null")
        case .bool(let b): out.append(b ? "true" : "false")
        case .number(let n): out.append(n.literal)
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let a):
            if a.isEmpty {
                out.append("[]")
                return
            }
            out.append(UInt8(ascii: "["))
            for (i, v) in a.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent: indent + 1) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent: indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let o):
            if o.isEmpty {
                out.append("{}")
                return
            }
            out.append(UInt8(ascii: "{"))
            for (i, member) in o.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                if pretty { JSON.newline(&out, indent: indent + 1) }
                JSON.quote(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                member.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSON.newline(&out, indent: indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    public static func format(_ n: Double) -> String {
        // Every whole number a Double holds exactly (up to 2^53) is written with all its digits, never as 2e+15.
        if n.rounded() == n, abs(n) <= 9_007_199_254_740_992 { return String(Int64(n)) }
        if !n.isFinite { return "null" }
        return "\(n)"
    }

    static func quote(_ s: String, into out: inout ByteWriter) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            // Runs of bytes that need no escape are copied whole (found eight bytes at a time); UTF-8 beyond ASCII is
            // copied as it is.
            var start = 0
            var nonASCII = false
            while true {
                let end = JSONStringScan.plainEnd(in: bytes, from: start, nonASCII: &nonASCII)
                out.append(UnsafeBufferPointer(rebasing: bytes[start..<end]))
                guard end < bytes.count else { break }
                let byte = bytes[end]
                start = end + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(byte)
                case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
                case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
                case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append("u00")
                    out.append(hex.utf8Start[Int(byte >> 4)])
                    out.append(hex.utf8Start[Int(byte & 0xf)])
                }
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Number(value)) }
    public init(floatLiteral value: Double) { self = .number(Number(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Object(elements))
    }
    public init(nilLiteral: ()) { self = .null }
}

extension JSON {
    /// A string, or null when there is none (an optional member of a response).
    public init(_ value: String?) { self = value.map(JSON.string) ?? .null }
    /// An integer, or null when there is none.
    public init(_ value: Int?) { self = value.map { .number(Number($0)) } ?? .null }
    public init(_ value: Double) { self = .number(Number(value)) }

    /// A number from an integer or a double: `.number(8000)`, `.number(0.25)`.
    public static func number(_ value: Int) -> JSON { .number(Number(value)) }
    public static func number(_ value: Double) -> JSON { .number(Number(value)) }
    public init(_ value: Bool) { self = .bool(value) }
    /// An object whose members are all strings.
    public init(_ members: [String: String]?) {
        self = members.map { .object(Object($0.mapValues(JSON.string))) } ?? .null
    }

    /// An object member that is itself an object (nil when absent or of another kind).
    public func object(_ key: String) -> Object? { self[key]?.objectValue }
    /// An object member that is a string (a number is not a string).
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    public var isNull: Bool { self == .null }
}

extension JSON: CustomStringConvertible {
    public var description: String { serialized() }
}

extension JSON {
    /// A JSON number as it was written. JSON leaves it to each reader how to hold a number; this one keeps the text, so
    /// that "12.00" read from a file or the command line stays "12.00" wherever it goes — for an amount the decimal
    /// point says which unit is meant, and a binary 12.0 written back as "12" would change the money. Its value, for
    /// arithmetic and comparison, is read off the text when asked for.
    public struct Number: Sendable, Hashable, CustomStringConvertible, ExpressibleByIntegerLiteral,
        ExpressibleByFloatLiteral
    {
        /// The number's JSON text: "12.00", "1e3", "-1", as the parser read it or as `init(_:)` wrote it.
        public let literal: String

        /// `text` when it is a JSON number (RFC 8259: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), else nil.
        public init?(literal text: String) {
            guard Self.isNumber(Array(text.utf8)) else { return nil }
            literal = text
        }

        /// Text the parser has already checked.
        init(checked text: String) { literal = text }

        public init(_ value: Int) { literal = String(value) }

        /// Every whole number a double holds exactly (up to 2^53) is written with all its digits, never as 2e+15; a
        /// value that is no number (infinity, NaN) is written as JSON's null, as JSON has no such number.
        public init(_ value: Double) { literal = JSON.format(value) }

        public init(integerLiteral value: Int) { self.init(value) }
        public init(floatLiteral value: Double) { self.init(value) }

        /// The value as a double (NaN for the null a non-finite double was written as).
        public var double: Double { Double(literal) ?? .nan }

        /// The value, when it is whole and small enough to be exact (12, 12.0, 1.2e1).
        public var wholeValue: Int? {
            if let exact = integerAsWritten { return exact }
            let d = double
            return d.rounded() == d && abs(d) < 9e15 ? Int(d) : nil
        }

        /// The value, when the text is an integer (digits, an optional minus) small enough to be exact.
        public var integerAsWritten: Int? {
            let digits = literal.utf8.drop { $0 == UInt8(ascii: "-") }
            guard !digits.isEmpty, digits.count <= 15,
                digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
            return Int(literal)
        }

        public var description: String { literal }

        /// Numbers are equal when their values are: 12.00 is 12, as JSON means them.
        public static func == (a: Number, b: Number) -> Bool { a.literal == b.literal || a.double == b.double }

        public func hash(into hasher: inout Hasher) {
            let d = double
            hasher.combine(d == 0 ? 0 : d)
        }

        static func isNumber(_ bytes: [UInt8]) -> Bool {
            var i = 0
            func digits() -> Int {
                let start = i
                while i < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[i]) { i += 1 }
                return i - start
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            let whole = i
            guard digits() > 0, bytes[whole] != UInt8(ascii: "0") || i - whole == 1 else { return false }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { return false }
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { return false }
            }
            return i == bytes.count
        }
    }
}
