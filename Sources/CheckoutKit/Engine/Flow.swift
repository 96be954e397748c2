import Foundation

/// A flow: an ordered list of steps run by the one engine. Built-in flows and users' flow files are the same thing;
/// every command runs one — a step of its own (a single step), or a whole checkout built from typed steps that is the
/// built-in flow `flow show` prints (`CommandFlows`).
public struct Flow: Sendable {
    public var name: String
    public var description: String
    /// Declared variables with their defaults; `--var k=v` and subcommand flags override them.
    public var vars: JSON.Object
    /// What a variable means, for `flow describe` (the file's `varDescriptions`).
    public var varDescriptions: [String: String] = [:]
    /// Where the flow was read from ("my-flow.json", "built-in flow bahn-apple-pay"), for messages.
    public var source = ""
    /// Where each declared variable's value was written, when not in this file's own `vars` ("my-flow.json:
    /// $.steps[0].vars.amount", an include's): what a bad value is blamed on.
    public var varSources: [String: String] = [:]
    /// Variables the flow once had, with what took their place (a built-in flow's `BuiltinFlows.Entry.retired`).
    public var retiredVariables: [String: String] = [:]
    /// What reading the file found worth a word though it is no error (a capture that replaces another part's
    /// variable).
    public var warnings: [String] = []
    public var steps: [Step]
    /// Steps that run after the main steps whether they passed or failed (a rollback, a cancel).
    public var finally: [Step]
    /// Seconds the whole flow may take; `--deadline` overrides.
    public var deadline: Double?
    /// A whole checkout (a flow file or a built-in flow), which runs in a scope of the state file of its own
    /// (`StateStore.run`); a command's single step continues the chain instead.
    public var ownsState = false
    /// Every operation step's arguments passed the operation's own check when the flow was read (`FlowDecoder`); a
    /// flow built in code (a command's steps) has its checked before each run instead.
    var argumentsChecked = false

    /// Every variable the flow declares or refers to: a `--var` outside this set is a mistake (a misspelt name).
    public var variableNames: Set<String> {
        var names = Set(vars.keys)
        var templates = Array(vars.values)
        for step in steps + finally {
            switch step.action {
            case .request(let r):
                templates.append(.string(r.url))
                templates += r.headers.map { .string($0.value) }
                switch r.body {
                case .json(let j): templates.append(j)
                case .text(let t), .file(let t): templates.append(.string(t))
                case nil: break
                }
            case .operation(_, let arguments): templates.append(arguments)
            }
            for condition in step.expect.conditions {
                if case .equals(let v) = condition.test { templates.append(v) }
                if case .contains(let v) = condition.test { templates.append(v) }
            }
            for header in step.expect.headers { if case .equals(let v) = header.test { templates.append(.string(v)) } }
        }
        for template in templates {
            for case .reference(.vars(let name, _), _, _) in (try? Template.references(in: template)) ?? [] {
                names.insert(name)
            }
        }
        return names
    }

    /// How every command counts a flow's steps: the main steps, then the finally steps apart ("9 steps, 1 finally";
    /// "5 steps" when there are none), since a finally step runs whatever the others did.
    public static func countText(steps: Int, finally: Int) -> String {
        "\(steps) step\(steps == 1 ? "" : "s")" + (finally > 0 ? ", \(finally) finally" : "")
    }

    public init(
        name: String, description: String = "", vars: JSON.Object = [:], steps: [Step],
        finally: [Step] = [], deadline: Double? = nil
    ) {
        self.name = name
        self.description = description
        self.vars = vars
        self.steps = steps
        self.finally = finally
        self.deadline = deadline
    }
}

public struct Step: Sendable {
    public enum Action: Sendable {
        /// A raw HTTP request; every string in it may hold `${…}` templates.
        case request(RequestTemplate)
        /// A provider operation from the registry, with its (templated) arguments.
        case operation(name: String, arguments: JSON)
    }

    public var name: String
    /// What the step is for, in the author's words (`flow describe` shows it).
    public var description: String?
    public var action: Action
    /// Variable name → path into the step's output; captured values become `${vars.<name>}`.
    public var capture: [String: JSONPath]
    public var expect: Expectation
    /// Overrides the default retry policy for this step's requests (the safety rules still apply).
    public var retry: RetryPolicy?
    public var until: Until?
    /// A failure of an optional step is reported but does not fail the flow.
    public var optional: Bool
    /// Where the step sits in its flow file (`$.steps[2]`), for messages.
    public var location: String
    /// For a step an include brought: the include step's place in the including file.
    var includedAt: JSONPath?

    public init(
        name: String, description: String? = nil, action: Action, capture: [String: JSONPath] = [:],
        expect: Expectation = .init(),
        retry: RetryPolicy? = nil, until: Until? = nil, optional: Bool = false, location: String = ""
    ) {
        self.name = name
        self.description = description
        self.action = action
        self.capture = capture
        self.expect = expect
        self.retry = retry
        self.until = until
        self.optional = optional
        self.location = location
    }
}

public struct RequestTemplate: Sendable {
    public enum Body: Sendable {
        case json(JSON)
        case text(String)
        case file(String)
    }

    public var method: String
    public var url: String
    public var headers: [(name: String, value: String)]
    public var body: Body?

    public init(method: String, url: String, headers: [(name: String, value: String)] = [], body: Body? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A condition on a step's output document.
public struct Condition: Sendable {
    public enum Test: Sendable {
        case equals(JSON)
        case matches(String)
        case exists(Bool)
        case oneOf([JSON])
        /// A number, or money as a decimal string, within bounds: compared as exact decimals.
        case compare(Comparison)
        /// A string holds a substring, an array an element, an object a key.
        case contains(JSON)
        /// The number of an array's elements within bounds.
        case count(Comparison)
        case type(ValueType)
    }

    /// What `type` checks a value is.
    public enum ValueType: String, Sendable, CaseIterable {
        case string, number, integer, boolean, array, object, null
    }

    public var path: JSONPath
    public var test: Test

    public init(path: JSONPath, test: Test) {
        self.path = path
        self.test = test
    }
}

public struct Expectation: Sendable {
    /// Acceptable statuses; nil means any 2xx.
    public var status: [Int]?
    public var conditions: [Condition]
    /// Conditions on the headers of the step's last answer.
    public var headers: [HeaderCondition] = []
    /// Bounds on how long the step took, in seconds.
    public var duration: Comparison?

    public init(status: [Int]? = nil, conditions: [Condition] = []) {
        self.status = status
        self.conditions = conditions
    }
}

/// A header of the step's last answer, by name (case-insensitive): its value, a pattern it matches, or whether it is
/// there.
public struct HeaderCondition: Sendable {
    public enum Test: Sendable {
        case equals(String)
        case matches(String)
        case exists(Bool)
    }

    public var name: String
    public var test: Test

    public init(name: String, test: Test) {
        self.name = name
        self.test = test
    }
}

/// Bounds a number keeps, all at once — `{">": 0, "<=": "99.99"}`; `between` is both ends, included — compared as exact
/// decimals: a decimal string ("10.00", money as Afterpay and Braintree write it) digit for digit, never through a
/// binary floating-point value; a JSON number as the JSON reader holds it (whole numbers exactly up to 2^53, minor
/// units).
public struct Comparison: Sendable {
    public enum Operator: String, Sendable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "=="
    }

    public struct Bound: Sendable {
        public var op: Operator
        public var value: ExactDecimal
        /// As the flow file wrote it, for messages and for writing the flow back.
        public var literal: JSON
    }

    public var bounds: [Bound]

    public init(bounds: [Bound]) { self.bounds = bounds }

    public func holds(_ x: ExactDecimal) -> Bool {
        bounds.allSatisfy { bound in
            switch bound.op {
            case .less: x < bound.value
            case .lessOrEqual: x <= bound.value
            case .greater: x > bound.value
            case .greaterOrEqual: x >= bound.value
            case .equal: x == bound.value
            }
        }
    }

    /// "> 0 and <= 99.99".
    public var description: String {
        bounds.map { "\($0.op.rawValue) \($0.literal.interpolationText)" }.joined(separator: " and ")
    }

    /// The exact decimal a JSON value stands for: a number as written, or a string of digits with an optional sign and
    /// fraction ("-0.50", "10.00"). Nil for anything else (an exponent, spaces, "1,000", a boolean).
    public static func exact(_ value: JSON) -> ExactDecimal? {
        switch value {
        case .number: ExactDecimal(value.serialized())
        case .string(let s): ExactDecimal(s)
        default: nil
        }
    }
}

/// A decimal number compared digit by digit — "10.00" equals "10" and is less than "10.001" — with no binary
/// floating-point value and no limit on its digits.
public struct ExactDecimal: Sendable, Comparable {
    let negative: Bool
    /// Without leading zeros ("" for zero).
    let whole: [UInt8]
    /// Without trailing zeros.
    let fraction: [UInt8]

    /// `-?digits(.digits)?`, and an exponent as the JSON writer puts one on a small or large number (`1e-05`,
    /// `1.5e+16`); nil for anything else.
    public init?(_ text: String) {
        var bytes = Array(text.utf8)
        let negative = bytes.first == UInt8(ascii: "-")
        if negative { bytes.removeFirst() }
        var exponent = 0
        if let e = bytes.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            guard let value = Int(String(decoding: bytes[(e + 1)...], as: UTF8.self)), abs(value) <= 400 else {
                return nil
            }
            exponent = value
            bytes = Array(bytes[..<e])
        }
        let parts = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigit = { (b: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }
        guard let first = parts.first, !first.isEmpty, first.allSatisfy(isDigit),
            parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(isDigit))
        else { return nil }
        // The point moved by the exponent: digits, and how many of them are whole.
        let digits = Array(first) + (parts.count == 2 ? Array(parts[1]) : [])
        let wholeCount = first.count + exponent
        let zero = UInt8(ascii: "0")
        let padded =
            wholeCount < 0
            ? Array(repeating: zero, count: -wholeCount) + digits
            : digits + Array(repeating: zero, count: max(0, wholeCount - digits.count))
        let split = max(0, wholeCount)
        whole = Array(padded[..<split].drop { $0 == zero })
        fraction = Array(padded[split...].reversed().drop { $0 == zero }.reversed())
        // Minus zero is zero.
        self.negative = negative && !(whole.isEmpty && fraction.isEmpty)
    }

    public init(_ value: Int) { self.init(String(value))! }

    public static func < (a: ExactDecimal, b: ExactDecimal) -> Bool {
        if a.negative != b.negative { return a.negative }
        return a.negative ? magnitudeLess(b, a) : magnitudeLess(a, b)
    }

    private static func magnitudeLess(_ a: ExactDecimal, _ b: ExactDecimal) -> Bool {
        if a.whole.count != b.whole.count { return a.whole.count < b.whole.count }
        if a.whole != b.whole { return a.whole.lexicographicallyPrecedes(b.whole) }
        return a.fraction.lexicographicallyPrecedes(b.fraction)
    }
}

/// Poll the step until `condition` holds, every `interval` seconds, for at most `timeout` seconds.
public struct Until: Sendable {
    public var condition: Condition
    public var interval: Double
    public var timeout: Double
    /// What to tell the user when the condition never held (built-in flows know better than a generic hint).
    public var timeoutHint: String?

    public init(condition: Condition, interval: Double = 1, timeout: Double = 30, timeoutHint: String? = nil) {
        self.condition = condition
        self.interval = interval
        self.timeout = timeout
        self.timeoutHint = timeoutHint
    }
}
