import Foundation

/// A path into a JSON value: `payment_intent.status`, `items[0].id`, `$.a["odd key"]`.
/// Kept deliberately small: keys and indices, which is all a flow needs to capture and assert.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    public enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    public let components: [Component]

    public init(components: [Component]) {
        self.components = components
    }

    /// A key that the dotted form would misread (a space, a dot, a bracket) is written quoted: `$.a["odd key"]`.
    /// Worked out when asked, not when the path is made: most paths (a state file's, looked up on every write) are
    /// never shown.
    public var description: String {
        var text = "$"
        for c in components {
            switch c {
            case .key(let k) where Self.isPlainKey(k): text += "." + k
            case .key(let k): text += "[\"" + k + "\"]"
            case .index(let i): text += "[" + String(i) + "]"
            }
        }
        return text
    }

    /// A key the dotted form reads as it is, and a name a `${steps.<name>}` reference can hold: letters, digits, `_`
    /// and `-`. Read on bytes while they are ASCII: `Character`'s Unicode properties cost a thousand instructions a
    /// name, and a flow's decoder asks for every step.
    public static func isPlainKey(_ key: some StringProtocol) -> Bool {
        var ascii = true
        for byte in key.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                continue
            case 0x80...: ascii = false
            default: return false
            }
        }
        if ascii { return !key.isEmpty }
        return key.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" })
    }

    public struct SyntaxError: Error, CustomStringConvertible {
        public let description: String
    }

    public init(_ text: String) throws {
        var comps: [Component] = []
        var chars = Substring(text)
        while chars.first == " " { chars = chars.dropFirst() }
        while chars.last == " " { chars = chars.dropLast() }
        if chars.hasPrefix("$") { chars = chars.dropFirst() }
        if chars.hasPrefix(".") { chars = chars.dropFirst() }
        var key = ""
        func flushKey() {
            if !key.isEmpty {
                comps.append(.key(key))
                key = ""
            }
        }
        while let c = chars.first {
            switch c {
            case ".":
                flushKey()
                chars = chars.dropFirst()
                if chars.first == "." || chars.isEmpty {
                    throw SyntaxError(description: "empty segment in path '\(text)'")
                }
            case "[":
                flushKey()
                guard let close = chars.firstIndex(of: "]") else {
                    throw SyntaxError(description: "unclosed '[' in path '\(text)'")
                }
                let inner = chars[chars.index(after: chars.startIndex)..<close]
                if let i = Int(inner), i >= 0 {
                    comps.append(.index(i))
                } else if inner.count >= 2, let q = inner.first, q == "\"" || q == "'", inner.last == q {
                    comps.append(.key(String(inner.dropFirst().dropLast())))
                } else {
                    throw SyntaxError(
                        description: "'[\(inner)]' in path '\(text)' is neither an index nor a quoted key")
                }
                chars = chars[chars.index(after: close)...]
            default:
                key.append(c)
                chars = chars.dropFirst()
            }
        }
        flushKey()
        self.init(components: comps)
    }

    /// The value at this path, or nil when any step of the way is missing.
    public func evaluate(_ value: JSON) -> JSON? {
        var current = value
        for c in components {
            switch (c, current) {
            case (.key(let k), .object(let o)):
                guard let next = o[k] else { return nil }
                current = next
            case (.index(let i), .array(let a)):
                guard i < a.count else { return nil }
                current = a[i]
            default:
                return nil
            }
        }
        return current
    }

    /// A copy of `root` with `newValue` stored at this path, creating objects along the way.
    public func setting(_ newValue: JSON, in root: JSON) -> JSON {
        func set(_ comps: ArraySlice<Component>, in node: JSON) -> JSON {
            guard let first = comps.first else { return newValue }
            switch first {
            case .key(let k):
                var o = node.objectValue ?? [:]
                o[k] = set(comps.dropFirst(), in: o[k] ?? .null)
                return .object(o)
            case .index(let i):
                var a = node.arrayValue ?? []
                while a.count <= i { a.append(.null) }
                a[i] = set(comps.dropFirst(), in: a[i])
                return .array(a)
            }
        }
        return set(components[...], in: root)
    }

    public func appending(_ c: Component) -> JSONPath { JSONPath(components: components + [c]) }
    public func appending(_ key: String) -> JSONPath { appending(.key(key)) }
    public func appending(_ index: Int) -> JSONPath { appending(.index(index)) }
    public static let root = JSONPath(components: [])
}
