import Foundation
import LoopbackHTTP

/// A fault-injection plan, parsed from the `--faults` option.
///
/// Grammar (rules separated by `;`, blanks around tokens ignored):
///
///     rule     := [METHOD ' '] PATH_PATTERN '=>' action [',' action]* ['@' attempts]
///     pattern  := '/'-separated segments; '*' (or ':name') matches one segment, a final '**' matches the rest
///     attempts := '*' | N | N-M | list of those joined by ','           (default: 1, the first match only)
///     action   := latency=<ms>ms                delay before handling
///               | status=<code>[:Header=Value]* answer with this status; the handler does NOT run
///               | html=<code>                   answer with this status and an HTML error page, as a proxy in front of
///                                               the service does; the handler does NOT run
///               | reset                         connection reset before the response; the handler does NOT run
///               | drop                          the handler runs (the operation is committed), then reset, no response
///               | truncate=<bytes>              the handler runs; only that many body bytes are sent, then close
///               | malformed                     the handler runs; its body is replaced with invalid JSON
///
/// Attempt numbers count the requests matching that rule (per rule, from 1). Every rule that fires on a request
/// contributes its latency (summed); the first firing rule with another action decides what happens. At most one
/// action besides latency per rule.
///
/// Example: `POST /api/payment_intents/*/confirm => drop @1; GET /_sandbox/health => status=503 @1-2; ** =>
/// latency=50ms @*`
public struct FaultSpec: Sendable, Equatable, CustomStringConvertible {
    public enum Action: Sendable, Equatable {
        case latency(milliseconds: Int)
        case status(Int, headers: HTTPHeaders)
        case html(Int)
        case reset
        case drop
        case truncate(bytes: Int)
        case malformed
    }

    public enum Attempts: Sendable, Equatable {
        case all
        case only([ClosedRange<Int>])

        public func contains(_ attempt: Int) -> Bool {
            switch self {
            case .all: true
            case .only(let ranges): ranges.contains { $0.contains(attempt) }
            }
        }
    }

    public struct Rule: Sendable, Equatable {
        /// nil matches any method.
        public var method: String?
        public var pattern: String
        public var actions: [Action]
        public var attempts: Attempts

        public init(method: String? = nil, pattern: String, actions: [Action], attempts: Attempts = .only([1...1])) {
            self.method = method?.uppercased()
            self.pattern = pattern
            self.actions = actions
            self.attempts = attempts
        }

        /// Whether the rule's method and path pattern match (attempts aside).
        public func matches(method requestMethod: String, path: String) -> Bool {
            if let method, method != requestMethod { return false }
            let wanted = pattern.split(separator: "/")
            let actual = path.split(separator: "/")
            for (i, segment) in wanted.enumerated() {
                if segment == "**" { return true }
                guard i < actual.count else { return false }
                if segment != "*" && !segment.hasPrefix(":") && segment != actual[i] { return false }
            }
            return wanted.count == actual.count
        }
    }

    public var rules: [Rule]

    public static let none = FaultSpec(rules: [])

    public init(rules: [Rule]) { self.rules = rules }

    /// Parses the `--faults` syntax (see the type's documentation); an empty string means no faults.
    public init(parsing text: String) throws(FaultSpecError) {
        rules = []
        for raw in text.split(separator: ";") {
            let rule = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if rule.isEmpty { continue }
            rules.append(try Self.parseRule(rule))
        }
    }

    public var description: String {
        rules.map { rule in
            let actions = rule.actions.map { action -> String in
                switch action {
                case .latency(let ms): "latency=\(ms)ms"
                case .status(let code, let headers):
                    (["status=\(code)"] + headers.map { "\($0.name)=\($0.value)" }).joined(separator: ":")
                case .html(let code): "html=\(code)"
                case .reset: "reset"
                case .drop: "drop"
                case .truncate(let bytes): "truncate=\(bytes)"
                case .malformed: "malformed"
                }
            }.joined(separator: ",")
            let attempts: String
            switch rule.attempts {
            case .all: attempts = "*"
            case .only(let ranges):
                attempts = ranges.map { $0.count == 1 ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }
                    .joined(separator: ",")
            }
            return "\(rule.method.map { $0 + " " } ?? "")\(rule.pattern) => \(actions) @\(attempts)"
        }.joined(separator: "; ")
    }

    /// Shown by `sandbox serve --help`.
    public static let help = """
        --faults SPEC   inject network faults. SPEC is rules separated by ';':
                          [METHOD ] PATH => action[,action...] [@attempts]
                        PATH: '/'-separated; '*' matches one segment, a final '**' matches the rest.
                        attempts: '1' (default: the first matching request), '1-3', '2,4', or '*' (every one);
                        counted per rule over the requests that match it.
                        actions:
                          latency=<ms>ms                delay the response
                          status=<code>[:Header=Value]  answer with that status (the operation is not performed),
                                                        e.g. status=429:Retry-After=1
                          html=<code>                   answer with that status and an HTML error page, as a proxy
                                                        in front of the service does (the operation is not performed)
                          reset                         reset the connection before the operation is performed
                          drop                          perform the operation, then reset without a response
                          truncate=<bytes>              perform it, send only that many body bytes, then close
                          malformed                     perform it, send an invalid JSON body
                        Latency combines with one other action. Example:
                          "POST /api/payment_intents/*/confirm => drop @1; GET /_sandbox/health => status=503 @1-2; ** => latency=50ms @*"
        """

    private static let expectedForm =
        #"expected "[METHOD ] PATH => action[,action...] [@attempts]", e.g. "POST /api/orders/*/pay => drop @1""#

    private static func parseRule(_ rule: String) throws(FaultSpecError) -> Rule {
        func fail(_ why: String) -> FaultSpecError {
            FaultSpecError(message: "invalid fault rule \"\(rule)\": \(why); \(expectedForm)")
        }
        guard let arrow = rule.range(of: "=>") else { throw fail("missing '=>'") }
        let target = rule[..<arrow.lowerBound].trimmingCharacters(in: .whitespaces)
        var rest = rule[arrow.upperBound...].trimmingCharacters(in: .whitespaces)

        // [METHOD ] PATH
        let words = target.split(separator: " ", omittingEmptySubsequences: true)
        var method: String? = nil
        let pattern: String
        switch words.count {
        case 1: pattern = String(words[0])
        case 2:
            guard words[0].allSatisfy({ $0.isLetter }) else { throw fail("bad method \"\(words[0])\"") }
            method = words[0].uppercased()
            pattern = String(words[1])
        default: throw fail(target.isEmpty ? "missing path pattern" : "bad target \"\(target)\"")
        }
        guard pattern.hasPrefix("/") || pattern == "*" || pattern == "**" else {
            throw fail("path pattern \"\(pattern)\" must start with '/' (or be '**')")
        }
        let segments = pattern.split(separator: "/")
        if let i = segments.firstIndex(of: "**"), i != segments.count - 1 {
            throw fail("'**' may only end a path pattern")
        }

        // ['@' attempts]
        var attempts = Attempts.only([1...1])
        if let at = rest.lastIndex(of: "@") {
            attempts = try parseAttempts(rest[rest.index(after: at)...].trimmingCharacters(in: .whitespaces), fail)
            rest = rest[..<at].trimmingCharacters(in: .whitespaces)
        }

        // action[,action...]
        guard !rest.isEmpty else { throw fail("missing action") }
        var actions: [Action] = []
        for token in rest.split(separator: ",") {
            actions.append(try parseAction(token.trimmingCharacters(in: .whitespaces), fail))
        }
        let decisive = actions.filter { if case .latency = $0 { false } else { true } }
        guard decisive.count <= 1 else { throw fail("at most one action besides latency") }
        return Rule(method: method, pattern: pattern, actions: actions, attempts: attempts)
    }

    private static func parseAttempts(
        _ text: String, _ fail: (String) -> FaultSpecError
    ) throws(FaultSpecError) -> Attempts {
        if text == "*" { return .all }
        var ranges: [ClosedRange<Int>] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.trimmingCharacters(in: .whitespaces).split(
                separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(bounds.count), let low = Int(bounds[0]), let high = Int(bounds.last!), low >= 1,
                low <= high
            else {
                throw fail("bad attempts \"\(text)\" (use 1, 1-3, 2,4 or *)")
            }
            ranges.append(low...high)
        }
        return .only(ranges)
    }

    private static func parseAction(
        _ token: String, _ fail: (String) -> FaultSpecError
    ) throws(FaultSpecError) -> Action {
        let kv = token.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = kv[0].lowercased()
        let value = kv.count > 1 ? String(kv[1]) : nil
        switch (name, value) {
        case ("reset", nil): return .reset
        case ("drop", nil): return .drop
        case ("malformed", nil): return .malformed
        case ("latency", let v?):
            guard v.hasSuffix("ms"), let ms = Int(v.dropLast(2)), ms >= 0 else {
                throw fail("bad latency \"\(v)\" (use latency=<ms>ms)")
            }
            return .latency(milliseconds: ms)
        case ("truncate", let v?):
            guard let bytes = Int(v), bytes >= 0 else { throw fail("bad truncate \"\(v)\" (use truncate=<bytes>)") }
            return .truncate(bytes: bytes)
        case ("status", let v?):
            // status=<code>[:Header=Value...]
            let parts = v.split(separator: ":", omittingEmptySubsequences: false)
            guard let code = Int(parts[0]), (100...599).contains(code) else {
                throw fail("bad status \"\(v)\" (use status=<code>[:Header=Value])")
            }
            var headers = HTTPHeaders()
            for header in parts.dropFirst() {
                let hv = header.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard hv.count == 2, !hv[0].isEmpty else {
                    throw fail("bad header \"\(header)\" in status (use Header=Value)")
                }
                headers.add(String(hv[0]), String(hv[1]))
            }
            return .status(code, headers: headers)
        case ("html", let v?):
            guard let code = Int(v), (100...599).contains(code) else {
                throw fail("bad html \"\(v)\" (use html=<code>)")
            }
            return .html(code)
        default:
            throw fail(
                "unknown action \"\(token)\" (use latency=<ms>ms, status=<code>, html=<code>, reset, drop, truncate=<bytes> or malformed)"
            )
        }
    }
}

/// A `--faults` spec that does not parse; `message` names the rule and the expected form.
public struct FaultSpecError: Error, CustomStringConvertible, Equatable, Sendable {
    public let message: String
    public var description: String { message }
}
