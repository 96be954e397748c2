import Foundation
import WireTypes

/// A GraphQL value: what variables, arguments and results are made of. Objects keep their members in order, as a
/// response keeps the order of the selection (spec §7.2.2). `int` and `float` are kept apart, as the type system does.
public enum GraphQLValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case float(Double)
    case string(String)
    /// An enum value: a name, serialised as a string.
    case enumValue(String)
    case list([GraphQLValue])
    case object([(String, GraphQLValue)])

    public static func == (a: GraphQLValue, b: GraphQLValue) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.int(let x), .int(let y)): x == y
        case (.float(let x), .float(let y)): x == y
        case (.string(let x), .string(let y)), (.enumValue(let x), .enumValue(let y)): x == y
        case (.list(let x), .list(let y)): x == y
        case (.object(let x), .object(let y)): x.elementsEqual(y) { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public subscript(key: String) -> GraphQLValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    public var stringValue: String? {
        switch self {
        case .string(let s), .enumValue(let s): s
        default: nil
        }
    }

    public var intValue: Int? { if case .int(let i) = self { i } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var listValue: [GraphQLValue]? { if case .list(let l) = self { l } else { nil } }
    public var objectValue: [(String, GraphQLValue)]? { if case .object(let o) = self { o } else { nil } }
    public var isNull: Bool { self == .null }

    /// A short name for messages: "a string", "an object".
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .float: "a float"
        case .string: "a string"
        case .enumValue: "an enum value"
        case .list: "a list"
        case .object: "an object"
        }
    }
}

// MARK: JSON

extension GraphQLValue {
    /// Compact JSON, members in order. Non-finite floats cannot be JSON: they are written as null.
    public var jsonData: Data {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return Data(out)
    }

    public var jsonText: String { String(decoding: jsonData, as: UTF8.self) }

    func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .float(let d): out.append(contentsOf: JSON.format(d).utf8)  // the one way the project writes a double
        case .string(let s), .enumValue(let s): JSON.appendQuoted(s, to: &out)
        case .list(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.appendQuoted(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

// MARK: Building values

/// Literals build values as a resolver writes them: `["id": .string(id), "active": true, "tags": []]`; an object
/// literal keeps its members in the order written.
extension GraphQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .float(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: GraphQLValue...) { self = .list(elements) }
    public init(dictionaryLiteral elements: (String, GraphQLValue)...) { self = .object(elements) }
    public init(nilLiteral: ()) { self = .null }

    /// A string, or null when there is none.
    public init(_ value: String?) { self = value.map(GraphQLValue.string) ?? .null }
    /// An integer, or null when there is none.
    public init(_ value: Int?) { self = value.map(GraphQLValue.int) ?? .null }
}
