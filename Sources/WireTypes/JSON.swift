import Foundation

/// A JSON value. Flows, captures, templating and reports all work on this one type.
public enum JSON: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSON])
    case object([String: JSON])

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

    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    public var intValue: Int? {
        if case .number(let n) = self, n.rounded() == n, abs(n) < 9e15 { return Int(n) }
        return nil
    }
    public var doubleValue: Double? { if case .number(let n) = self { return n }; return nil }
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    public var objectValue: [String: JSON]? { if case .object(let o) = self { return o }; return nil }
    public var arrayValue: [JSON]? { if case .array(let a) = self { return a }; return nil }

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
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    public var data: Data { Data(serialized().utf8) }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += JSON.format(n)
        case .string(let s): JSON.quote(s, into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                v.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            for (i, key) in o.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                if pretty { out += "\n" + String(repeating: "  ", count: indent + 1) }
                JSON.quote(key, into: &out)
                out += pretty ? ": " : ":"
                o[key]!.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { out += "\n" + String(repeating: "  ", count: indent) }
            out += "}"
        }
    }

    public static func format(_ n: Double) -> String {
        // Every whole number a Double holds exactly (up to 2^53) is written with all its digits, never as 2e+15.
        if n.rounded() == n, abs(n) <= 9_007_199_254_740_992 { return String(Int64(n)) }
        if !n.isFinite { return "null" }
        return "\(n)"
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u" + String(format: "%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    public init(nilLiteral: ()) { self = .null }
}

extension JSON {
    /// A string, or null when there is none (an optional member of a response).
    public init(_ value: String?) { self = value.map(JSON.string) ?? .null }
    /// An integer, or null when there is none.
    public init(_ value: Int?) { self = value.map { .number(Double($0)) } ?? .null }
    public init(_ value: Double) { self = .number(value) }
    public init(_ value: Bool) { self = .bool(value) }
    /// An object whose members are all strings.
    public init(_ members: [String: String]?) { self = members.map { .object($0.mapValues(JSON.string)) } ?? .null }

    /// An object member that is itself an object (nil when absent or of another kind).
    public func object(_ key: String) -> [String: JSON]? { self[key]?.objectValue }
    /// An object member that is a string (a number is not a string).
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    public var isNull: Bool { self == .null }
}

extension Dictionary where Key == String, Value == JSON {
    /// A member that is itself an object (nil when absent or of another kind).
    public func object(_ key: String) -> [String: JSON]? { self[key]?.objectValue }
    /// A member that is a string (a number is not a string).
    public func string(_ key: String) -> String? { self[key]?.stringValue }
    /// A member that is an integer: not a boolean, not a fraction, small enough to be exact.
    public func integer(_ key: String) -> Int? { self[key]?.intValue }
}

extension JSON: CustomStringConvertible {
    public var description: String { serialized() }
}
