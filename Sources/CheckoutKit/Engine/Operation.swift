import Foundation

/// A provider operation a step can `use`. Provider folders add theirs to the registry; the engine
/// supplies retries, polling, templating, recording and reporting around them.
public struct FlowOperation: Sendable {
    public struct Parameter: Sendable {
        public enum Kind: String, Sendable { case string, integer, number, boolean, object, array, amount, duration, any }
        public var name: String
        public var kind: Kind
        public var required: Bool
        public var help: String
        /// A string that may hold line breaks (a description for a JSON body). Other strings are one line: ids, keys,
        /// paths — they may end up in a header or a URL.
        public var multiline: Bool
        /// For an integer (an amount): the values it may take, checked when the flow is read.
        public var range: ClosedRange<Int>?
        /// The argument names a file the operation reads: checked before the flow's first request (and by `flow
        /// validate`) whenever its path is known by then, so that a bad file never costs a request.
        public var input: InputFile?
        /// What the operation does when the argument is left out, in words (`flow ops`, `flow schema`): "USD", "the state
        /// file's last intent".
        public var defaultValue: String?
        /// For an amount: how it is read (`Amount.minorUnits`) and in which currency.
        public var amount: AmountRule?
        /// For a string: the values it may take ("manual", "automatic"), checked when the value is known.
        public var choices: [String]?

        /// An amount argument: a JSON number or string read by `notation` in the currency of the argument `currency`
        /// (`defaultCurrency` when that is left out; nil `currency`: the operation learns it as it runs, as Centra's
        /// selection gives it).
        public static func amount(_ name: String, _ notation: AmountNotation, currency: String?, defaultCurrency: String? = nil,
                                  allowingZero: Bool = false, required: Bool = false, default defaultValue: String? = nil,
                                  help: String) -> Parameter {
            var p = Parameter(name, .amount, required: required, default: defaultValue, help: help)
            p.amount = AmountRule(notation: notation, currencyArgument: currency, defaultCurrency: defaultCurrency, allowsZero: allowingZero)
            return p
        }

        /// The same parameter, required.
        public var asRequired: Parameter {
            var p = self
            p.required = true
            return p
        }

        /// The minor units of this amount argument in `arguments` (nil when it is left out), in the currency its rule names
        /// or, when the operation learnt it as it ran, `currency`. The engine has checked the value before the step ran
        /// (`FlowOperation.check`); a refusal here is an operation's own use.
        public func minorUnits(in arguments: JSON, currency known: Currency? = nil) throws(Diagnostic) -> Int? {
            guard let value = arguments[name], let rule = amount else { return nil }
            var currency = known
            if currency == nil { currency = try rule.currency(in: arguments) }
            switch Amount.minorUnits(value, notation: rule.notation, currency: currency, allowingZero: rule.allowsZero) {
            case .success(let minor): return minor
            case .failure(let refusal):
                throw .usage("\(name) \(value.shownInMessage) \(refusal.problem)", hint: Amount.forms(rule.notation, currency: currency))
            }
        }

        public init(_ name: String, _ kind: Kind, required: Bool = false, multiline: Bool = false, range: ClosedRange<Int>? = nil,
                    choices: [String]? = nil, input: InputFile? = nil, default defaultValue: String? = nil, help: String = "") {
            self.name = name
            self.kind = kind
            self.required = required
            self.multiline = multiline
            self.range = range
            self.choices = choices
            self.input = input
            self.defaultValue = defaultValue
            self.help = help
        }

        /// A duration argument in seconds (nil when left out): a number of seconds or a duration such as "90s" or "2m",
        /// as the engine checked it before the step ran.
        public func seconds(in arguments: JSON) throws(Diagnostic) -> Double? {
            guard let value = arguments[name] else { return nil }
            guard let seconds = Self.seconds(value) else {
                throw .usage("\(name) \(value.shownInMessage) \(Self.durationProblem)", hint: Self.durationHint)
            }
            return seconds
        }

        static func seconds(_ value: JSON) -> Double? {
            if let n = value.doubleValue { return n > 0 ? n : nil }
            return value.stringValue.flatMap(Duration.seconds(from:)).flatMap { $0 > 0 ? $0 : nil }
        }

        static let durationProblem = "is not a positive number of seconds or a duration"
        static let durationHint = "e.g. 120, \"120s\", \"500ms\" or \"2m\""
    }

    /// A path into the document a step of this operation outputs — what `capture`, `expect` and `until` can look at —
    /// and what it holds. `flow ops` and `flow describe` list them; `OperationOutputTests` runs every built-in flow and
    /// checks that each path an operation declares is in what its steps output.
    public struct Output: Sendable {
        public var path: String
        public var help: String
        /// When the path is there only in some outcomes ("declined"); nil when every passing step outputs it.
        public var when: String?

        public init(_ path: String, _ help: String, when: String? = nil) {
            self.path = path
            self.help = help
            self.when = when
        }
    }

    /// What an input file must hold.
    public enum InputFile: Sendable {
        /// An Apple Pay token (PKPaymentToken.paymentData), read by the one token reader.
        case paymentToken
        /// A JSON object (`what` names it in messages).
        case jsonObject(what: String)

        func check(_ path: String) throws(Diagnostic) {
            switch self {
            case .paymentToken: _ = try PaymentTokenFile.read(path: path, redactor: Redactor())
            case .jsonObject(let what): _ = try FileIO.readJSONObject(path, what: what)
            }
        }
    }

    /// How an amount argument is read, and where its currency comes from.
    public struct AmountRule: Sendable {
        public var notation: AmountNotation
        public var currencyArgument: String?
        public var defaultCurrency: String?
        public var allowsZero = false

        /// The currency `arguments` give the amount (nil when the operation learns it as it runs).
        func currency(in arguments: JSON) throws(Diagnostic) -> Currency? {
            guard let argument = currencyArgument, let code = arguments[argument]?.interpolationText ?? defaultCurrency else { return nil }
            return try Currency.parse(code)
        }
    }

    /// An argument whose value the operation would refuse: the check the engine makes of every step's arguments before
    /// the step runs, and `flow validate` of those known before the run.
    public struct ArgumentProblem: Error, Sendable {
        /// The argument the value is wrong for (the currency's, when an amount's currency is unknown).
        public var argument: String
        public var value: JSON
        /// A clause that follows the value: "has 2 decimals, and JPY has none".
        public var problem: String
        public var hint: String
    }

    /// Checks each argument of `arguments` (rendered: the known ones, before the run; all, as the step runs) as the
    /// operation will read it: amounts by their rule, integers by kind and range, booleans by kind. An argument whose
    /// currency is a template not known yet is left to the run.
    public func check(_ arguments: JSON.Object, templates: JSON) -> ArgumentProblem? {
        for p in parameters {
            guard let value = arguments[p.name] else { continue }
            switch p.kind {
            case .amount:
                guard let rule = p.amount else { continue }
                guard let argument = rule.currencyArgument else {
                    // The currency is learnt as the operation runs: the form is all there is to check before.
                    if let refusal = Amount.formRefusal(value) {
                        return ArgumentProblem(argument: p.name, value: value, problem: refusal.problem, hint: Amount.forms(rule.notation, currency: nil))
                    }
                    continue
                }
                if arguments[argument] == nil, templates[argument] != nil { continue }
                let currency: Currency?
                do { currency = try rule.currency(in: .object(arguments)) } catch {
                    let code = rule.currencyArgument.flatMap { arguments[$0] } ?? .null
                    return ArgumentProblem(argument: rule.currencyArgument ?? p.name, value: code, problem: "is no currency: \(error.message)",
                                           hint: error.hint ?? "give an ISO 4217 code")
                }
                if case .failure(let refusal) = Amount.minorUnits(value, notation: rule.notation, currency: currency, allowingZero: rule.allowsZero) {
                    return ArgumentProblem(argument: p.name, value: value, problem: refusal.problem, hint: Amount.forms(rule.notation, currency: currency))
                }
            case .integer:
                guard let range = p.range else { continue }
                guard let i = value.intValue else {
                    return ArgumentProblem(argument: p.name, value: value, problem: "is \(value.kindName), not an integer", hint: "give a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                if !range.contains(i) {
                    return ArgumentProblem(argument: p.name, value: value, problem: "is out of range \(range.lowerBound)…\(range.upperBound)", hint: "give a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
            case .boolean:
                if value.boolValue == nil {
                    return ArgumentProblem(argument: p.name, value: value, problem: "is \(value.kindName), not true or false", hint: "give true or false")
                }
            case .duration:
                if Parameter.seconds(value) == nil {
                    return ArgumentProblem(argument: p.name, value: value, problem: Parameter.durationProblem, hint: Parameter.durationHint)
                }
            case .string:
                if let choices = p.choices, !choices.contains(value.interpolationText) {
                    return ArgumentProblem(argument: p.name, value: value, problem: "is not one of \(choices.joined(separator: ", "))",
                                           hint: "give \(choices.joined(separator: " or "))")
                }
            case .number, .object, .array, .any:
                continue
            }
        }
        return nil
    }

    public typealias Body = @Sendable (_ arguments: JSON, _ context: OperationContext) async throws(Diagnostic) -> StepOutput
    /// Decodes the state-file section the operation reads and writes (the document, the file's path), so that a
    /// wrong-typed section stops the run before its first request rather than after a request that cannot be recorded.
    public typealias StateCheck = @Sendable (_ document: JSON, _ file: String) throws(Diagnostic) -> Void
    /// Checks what the operation can tell of its arguments before the flow's first request — those known by then
    /// (literals, variables, configuration; the others are left out) — so that a machine lacking what an argument asks
    /// for stops the run before anything is sent.
    public typealias ArgumentCheck = @Sendable (_ known: JSON, _ configuration: Configuration) throws(Diagnostic) -> Void

    public var name: String
    public var summary: String
    public var parameters: [Parameter]
    public var outputs: [Output]
    /// Configuration variables the operation cannot run without: checked before a flow's first request.
    public var requiredConfiguration: [String]
    public var stateCheck: StateCheck?
    public var argumentCheck: ArgumentCheck?
    /// Sets of arguments of which a step gives exactly one (an Apple Pay token's `amount` or `total`).
    public var alternatives: [[String]]
    public var body: Body

    public init(name: String, summary: String, requiredConfiguration: [String] = [], stateCheck: StateCheck? = nil,
                argumentCheck: ArgumentCheck? = nil, alternatives: [[String]] = [], parameters: [Parameter], outputs: [Output] = [],
                body: @escaping Body) {
        self.name = name
        self.summary = summary
        self.alternatives = alternatives
        self.parameters = parameters
        self.outputs = outputs
        self.requiredConfiguration = requiredConfiguration
        self.stateCheck = stateCheck
        self.argumentCheck = argumentCheck
        self.body = body
    }

    /// Checks a step's `with` object against the declared parameters. A template string is accepted for
    /// any kind: its value is only known when the step runs.
    func validate(arguments: JSON, at path: JSONPath) throws {
        guard case .object(let o) = arguments else {
            throw FlowDecoder.Problem(path: path, message: "expected an object of arguments, found \(arguments.kindName)")
        }
        let names = parameters.map(\.name)
        for key in o.keys.sorted() where !names.contains(key) {
            let suggestion = Suggest.closest(to: key, in: names).map { "; did you mean '\($0)'?" } ?? ""
            throw FlowDecoder.Problem(path: path.appending(key), message: "\(name) has no argument '\(key)'\(suggestion)",
                                      hint: "arguments: \(names.joined(separator: ", "))")
        }
        for names in alternatives where names.filter({ o[$0] != nil }).count != 1 {
            let given = names.filter { o[$0] != nil }
            throw FlowDecoder.Problem(path: given.count > 1 ? path.appending(given[1]) : path,
                                      message: "\(name) takes exactly one of \(names.map { "'\($0)'" }.joined(separator: " and ")), \(given.isEmpty ? "and none is given" : "not both")")
        }
        for p in parameters {
            guard let value = o[p.name] else {
                if p.required { throw FlowDecoder.Problem(path: path, message: "\(name) needs argument '\(p.name)'") }
                continue
            }
            if p.kind == .string, !p.multiline, case .string(let s) = value {
                try FlowDecoder.checkOneLine(s, at: path.appending(p.name), into: "argument '\(p.name)' of \(name)")
            }
            if case .string(let s) = value, s.contains("${") { continue }
            let ok: Bool = switch p.kind {
            case .string: value.stringValue != nil
            case .integer: value.intValue != nil
            case .number: value.doubleValue != nil
            case .boolean: value.boolValue != nil
            case .object: value.objectValue != nil
            case .array: value.arrayValue != nil
            case .amount: Amount.text(of: value) != nil
            case .duration: value.doubleValue != nil || value.stringValue != nil
            case .any: true
            }
            if !ok {
                throw FlowDecoder.Problem(path: path.appending(p.name), message: "expected \(p.kind == .amount ? "an amount (a number or a decimal string)" : p.kind.rawValue), found \(value.kindName)")
            }
        }
        // Literals are checked as the run will check them (a template's value, when it is known).
        let literals = o.filter { if case .string(let s) = $0.value { !s.contains("${") } else { true } }
        if let problem = check(literals, templates: arguments) {
            throw FlowDecoder.Problem(path: path.appending(problem.argument), message: "\(problem.value.shownInMessage) \(problem.problem)", hint: problem.hint)
        }
    }
}

/// What a step produced: the document that `capture`, `expect` and `until` look into, and the HTTP status
/// of its last exchange when it had one.
public struct StepOutput: Sendable {
    public var document: JSON
    public var status: Int?

    public init(document: JSON, status: Int? = nil) {
        self.document = document
        self.status = status
    }
}

/// Operations by name. Built once at start-up and read-only afterwards.
public struct OperationRegistry: Sendable {
    private var operations: [String: FlowOperation] = [:]

    public init(_ operations: [FlowOperation] = []) {
        for op in operations { register(op) }
    }

    public mutating func register(_ op: FlowOperation) { operations[op.name] = op }
    public subscript(name: String) -> FlowOperation? { operations[name] }
    public var names: [String] { operations.keys.sorted() }
    public var all: [FlowOperation] { names.compactMap { operations[$0] } }
}
