import Foundation
import Synchronization

/// `${…}` templating in flow strings.
///
/// References: `${vars.x}`, `${steps.<name>.<path>}`, `${env.X}`, `${state.<path>}`, `${uuid}`, `${now}`;
/// `${ref|fallback}` uses the literal `fallback` when the reference has no value. A string that is exactly
/// one reference keeps the referenced value's type (a number stays a number).
public enum Template {
    public enum Reference: Sendable, Equatable {
        case vars(String, JSONPath)
        case steps(String, JSONPath)
        case env(String)
        case state(JSONPath)
        case uuid
        case now
    }

    public enum Segment: Sendable, Equatable {
        case literal(String)
        case reference(Reference, fallback: String?, source: String)
    }

    public struct SyntaxError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Splits a string into literal text and references. `$${` escapes a literal `${`.
    /// Scans UTF-8 bytes: this runs for every string of every step, so it stays off Foundation's string search.
    public static func parse(_ text: String) throws(SyntaxError) -> [Segment] {
        // Most strings of a step refer to nothing: one look for a "$" is cheaper than hashing them for the cache.
        if !text.utf8.contains(UInt8(ascii: "$")) { return [.literal(text)] }
        if let cached = cache.withLock({ $0[text] }) { return cached }
        let segments = try scan(text)
        cache.withLock { if $0.count < 10_000 { $0[text] = segments } }
        return segments
    }

    /// Parsed templates by text: a flow's strings are validated, pre-flighted and rendered — often the same
    /// URL in many steps — so each distinct string is scanned once.
    private static let cache = Mutex<[String: [Segment]]>([:])

    private static func scan(_ text: String) throws(SyntaxError) -> [Segment] {
        let bytes = Array(text.utf8)
        let dollar = UInt8(ascii: "$")
        let open = UInt8(ascii: "{")
        let close = UInt8(ascii: "}")
        var segments: [Segment] = []
        var literal: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == dollar, i + 2 < bytes.count, bytes[i + 1] == dollar, bytes[i + 2] == open {
                literal += [dollar, open]
                i += 3
            } else if bytes[i] == dollar, i + 1 < bytes.count, bytes[i + 1] == open {
                guard let end = bytes[(i + 2)...].firstIndex(of: close) else {
                    throw SyntaxError(description: "unclosed '${' in \"\(text)\"")
                }
                if !literal.isEmpty {
                    segments.append(.literal(String(decoding: literal, as: UTF8.self)))
                    literal = []
                }
                segments.append(try reference(String(decoding: bytes[(i + 2)..<end], as: UTF8.self)))
                i = end + 1
            } else {
                literal.append(bytes[i])
                i += 1
            }
        }
        if !literal.isEmpty || segments.isEmpty { segments.append(.literal(String(decoding: literal, as: UTF8.self))) }
        return segments
    }

    private static func reference(_ inner: String) throws(SyntaxError) -> Segment {
        let parts = inner.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        let expression = trimmingSpaces(parts[0])
        let fallback = parts.count > 1 ? String(parts[1]) : nil
        let source = "${\(inner)}"
        func path(_ text: Substring) throws(SyntaxError) -> JSONPath {
            do { return try JSONPath(String(text)) } catch { throw SyntaxError(description: "\(source): \(error)") }
        }
        let dot = expression.firstIndex(of: ".")
        let root = dot.map { String(expression[..<$0]) } ?? expression
        let tail = dot.map { expression[expression.index(after: $0)...] } ?? ""
        let ref: Reference
        switch root {
        case "uuid" where tail.isEmpty: ref = .uuid
        case "now" where tail.isEmpty: ref = .now
        case "env" where !tail.isEmpty: ref = .env(String(tail))
        case "state" where !tail.isEmpty: ref = .state(try path(tail))
        case "vars" where !tail.isEmpty:
            let p = try path(tail)
            guard case .key(let name)? = p.components.first else {
                throw SyntaxError(description: "\(source): name a variable after 'vars.'")
            }
            ref = .vars(name, JSONPath(components: Array(p.components.dropFirst())))
        case "steps" where !tail.isEmpty:
            let name = tail.prefix { $0 != "." && $0 != "[" }
            ref = .steps(String(name), try path(tail.dropFirst(name.count)))
        default:
            throw SyntaxError(
                description: "unknown reference \(source); use vars.*, steps.<name>.*, env.*, state.*, uuid or now")
        }
        return .reference(ref, fallback: fallback, source: source)
    }

    private static func trimmingSpaces(_ s: Substring) -> String {
        var start = s.utf8.startIndex
        var end = s.utf8.endIndex
        while start < end, s.utf8[start] == 0x20 { start = s.utf8.index(after: start) }
        while end > start, s.utf8[s.utf8.index(before: end)] == 0x20 { end = s.utf8.index(before: end) }
        return String(s[start..<end])
    }

    /// Every reference in a JSON template, for validation before anything is sent.
    public static func references(in value: JSON) throws(SyntaxError) -> [Segment] {
        switch value {
        case .string(let s): return try parse(s).filter { if case .reference = $0 { true } else { false } }
        case .array(let a):
            var all: [Segment] = []
            for v in a { all += try references(in: v) }
            return all
        case .object(let o):
            var all: [Segment] = []
            for (k, v) in o { all += try references(in: .string(k)) + references(in: v) }
            return all
        default: return []
        }
    }
}

/// What templates resolve against while a flow runs.
public struct TemplateScope: Sendable {
    public var vars: JSON.Object
    public var steps: JSON.Object
    public var env: @Sendable (String) -> String?
    public var state: JSON
    /// Where each variable's value came from, so that a bad value is blamed on its source (`ValueBlame`).
    var origins: [String: VariableOrigin] = [:]
    /// The flow the templates are written in ("my-flow.json"), for blaming a value written in a step itself.
    var flowSource = ""

    public init(
        vars: JSON.Object = [:], steps: JSON.Object = [:], env: @escaping @Sendable (String) -> String? = { _ in nil },
        state: JSON = .object([:])
    ) {
        self.vars = vars
        self.steps = steps
        self.env = env
        self.state = state
    }

    public struct Unresolved: Error, CustomStringConvertible {
        public let source: String
        public let reason: String
        /// The configuration variable that was missing, for `${env.X}` references.
        public let missingVariable: String?
        public var description: String { "\(source): \(reason)" }
    }

    public func lookup(_ ref: Template.Reference) -> JSON? {
        switch ref {
        case .uuid: return .string(UUID.random().uuidString.lowercased())
        case .now: return .string(Timestamp.iso8601(Date()))
        case .env(let name): return env(name).map(JSON.string)
        case .state(let path): return path.evaluate(state)
        case .vars(let name, let path): return vars[name].flatMap { path.evaluate($0) }
        case .steps(let name, let path): return steps[name].flatMap { path.evaluate($0) }
        }
    }

    public func render(_ text: String) throws -> JSON {
        let segments = try Template.parse(text)
        if segments.count == 1, case .reference = segments[0] { return try value(of: segments[0]) }
        var out = ""
        for segment in segments {
            switch segment {
            case .literal(let l): out += l
            case .reference: out += try value(of: segment).interpolationText
            }
        }
        return .string(out)
    }

    public func renderString(_ text: String) throws -> String { try render(text).interpolationText }

    public func render(_ value: JSON) throws -> JSON {
        switch value {
        case .string(let s): return try render(s)
        case .array(let a): return .array(try a.map { try render($0) })
        case .object(let o):
            var out: JSON.Object = [:]
            for (k, v) in o { out[try renderString(k)] = try render(v) }
            return .object(out)
        default: return value
        }
    }

    private func value(of segment: Template.Segment) throws -> JSON {
        guard case .reference(let ref, let fallback, let source) = segment else { return .null }
        if let found = lookup(ref) { return found }
        if let fallback { return .string(fallback) }
        switch ref {
        case .env(let name):
            throw Unresolved(source: source, reason: "\(name) is not set", missingVariable: name)
        case .state:
            throw Unresolved(
                source: source, reason: "the state file has no such value; run the command that records it first",
                missingVariable: nil)
        case .steps(let name, let path):
            throw Unresolved(
                source: source, reason: "step '\(name)' output has no value at \(path)", missingVariable: nil)
        case .vars(let name, _):
            throw Unresolved(source: source, reason: "variable '\(name)' has no value here", missingVariable: nil)
        case .uuid, .now:
            return .null
        }
    }
}
