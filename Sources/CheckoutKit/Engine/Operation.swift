import Foundation

/// A provider operation a step can `use`. Provider folders add theirs to the registry; the engine
/// supplies retries, polling, templating, recording and reporting around them.
public struct FlowOperation: Sendable {
    public struct Parameter: Sendable {
        public enum Kind: String, Sendable {
            case string, integer, number, boolean, object, array, amount, duration, any
        }
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
        /// What the operation does when the argument is left out, in words (`flow ops`, `flow schema`): "USD", "the
        /// state file's last intent".
        public var defaultValue: String?
        /// For an amount: how it is read (`Amount.minorUnits`) and in which currency.
        public var amount: AmountRule?
        /// For a string: the values it may take ("manual", "automatic"), checked when the value is known.
        public var choices: [String]?

        public init(
            _ name: String, _ kind: Kind, required: Bool = false, multiline: Bool = false,
            range: ClosedRange<Int>? = nil,
            choices: [String]? = nil, input: InputFile? = nil, default defaultValue: String? = nil, help: String = ""
        ) {
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

    /// Checks each argument of `arguments` (rendered: the known ones, before the run; all, as the step runs) by reading
    /// it as the operation will (`OperationArguments`). An argument read with another that is a template in `templates`
    /// (not known yet) is left to the run.
    public func check(_ arguments: JSON.Object, templates: JSON) -> ArgumentProblem? {
        reader(arguments, templates.objectValue)
    }

    /// What the engine runs: the step's rendered arguments read into the operation's own value, then its body.
    typealias Body = @Sendable (_ arguments: JSON, _ context: OperationContext) async throws(Diagnostic) -> StepOutput
    /// Decodes the state-file section the operation reads and writes (the document, the file's path), so that a
    /// wrong-typed section stops the run before its first request rather than after a request that cannot be recorded.
    public typealias StateCheck = @Sendable (_ document: JSON, _ file: String) throws(Diagnostic) -> Void
    /// Checks what the operation can tell of its arguments before the flow's first request — those known by then
    /// (literals, variables, configuration; the others are left out) — so that a machine lacking what an argument asks
    /// for stops the run before anything is sent.
    public typealias ArgumentCheck<Arguments> =
        @Sendable (_ known: Arguments, _ configuration: Configuration) throws(Diagnostic) -> Void

    public var name: String
    public var summary: String
    /// The arguments as declared (`OperationArguments.arguments`), for `flow ops`, `flow describe`, `flow schema` and
    /// the checks of a flow file.
    public private(set) var parameters: [Parameter]
    public var outputs: [Output]
    /// Configuration variables the operation cannot run without: checked before a flow's first request.
    public var requiredConfiguration: [String]
    public var stateCheck: StateCheck?
    /// The operation's own check of the arguments known before the run, read into its value.
    let argumentCheck:
        (
            @Sendable (_ known: JSON.Object, _ templates: JSON.Object?, _ configuration: Configuration)
                throws(Diagnostic) -> Void
        )?
    /// Sets of arguments of which a step gives exactly one (an Apple Pay token's `amount` or `total`).
    public var alternatives: [[String]]
    let body: Body
    /// The type its arguments are read into.
    let argumentsType: ObjectIdentifier
    /// The arguments' reading, as a check: the first problem, nil when the operation would take them all.
    private let reader: @Sendable (_ arguments: JSON.Object, _ templates: JSON.Object?) -> ArgumentProblem?

    /// - Parameters:
    ///   - arguments: the type the step's arguments are read into; the body receives one.
    public init<Arguments: OperationArguments>(
        name: String, summary: String, arguments: Arguments.Type, requiredConfiguration: [String] = [],
        stateCheck: StateCheck? = nil, argumentCheck: ArgumentCheck<Arguments>? = nil, alternatives: [[String]] = [],
        outputs: [Output] = [],
        body:
            @escaping @Sendable (_ arguments: Arguments, _ context: OperationContext) async throws(Diagnostic) ->
            StepOutput
    ) {
        self.name = name
        self.summary = summary
        self.alternatives = alternatives
        self.parameters = Arguments.arguments.map(\.parameter)
        self.argumentsType = ObjectIdentifier(Arguments.self)
        self.outputs = outputs
        self.requiredConfiguration = requiredConfiguration
        self.stateCheck = stateCheck
        self.reader = { (arguments: JSON.Object, templates: JSON.Object?) -> ArgumentProblem? in
            switch Arguments.read(arguments, templates: templates) {
            case .success: return nil
            case .failure(let problem): return problem
            }
        }
        if let argumentCheck {
            self.argumentCheck = {
                (known: JSON.Object, templates: JSON.Object?, configuration: Configuration) throws(Diagnostic) in
                // Only what reads cleanly: a bad value is `check`'s to report, blamed on its source.
                if case .success(let arguments) = Arguments.read(known, templates: templates) {
                    try argumentCheck(arguments, configuration)
                }
            }
        } else {
            self.argumentCheck = nil
        }
        self.body = { (rendered: JSON, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            switch Arguments.read(rendered.objectValue ?? [:]) {
            case .success(let arguments): return try await body(arguments, context)
            case .failure(let problem):
                // The engine has checked the arguments before the step ran (`check`): this is an operation's own use.
                throw .usage(
                    "\(problem.argument) \(problem.value.shownInMessage) \(problem.problem)", hint: problem.hint)
            }
        }
    }

    /// Checks a step's `with` object against the declared parameters. A template string is accepted for
    /// any kind: its value is only known when the step runs.
    func validate(arguments: JSON, at path: JSONPath) throws {
        guard case .object(let o) = arguments else {
            throw FlowDecoder.Problem(
                path: path, message: "expected an object of arguments, found \(arguments.kindName)")
        }
        let names = parameters.map(\.name)
        for key in o.keys.sorted() where !names.contains(key) {
            let suggestion = Suggest.closest(to: key, in: names).map { "; did you mean '\($0)'?" } ?? ""
            throw FlowDecoder.Problem(
                path: path.appending(key), message: "\(name) has no argument '\(key)'\(suggestion)",
                hint: "arguments: \(names.joined(separator: ", "))")
        }
        for names in alternatives where names.filter({ o[$0] != nil }).count != 1 {
            let given = names.filter { o[$0] != nil }
            throw FlowDecoder.Problem(
                path: given.count > 1 ? path.appending(given[1]) : path,
                message:
                    "\(name) takes exactly one of \(names.map { "'\($0)'" }.joined(separator: " and ")), \(given.isEmpty ? "and none is given" : "not both")"
            )
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
            let ok: Bool =
                switch p.kind {
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
                throw FlowDecoder.Problem(
                    path: path.appending(p.name),
                    message:
                        "expected \(p.kind == .amount ? "an amount (a number or a decimal string)" : p.kind.rawValue), found \(value.kindName)"
                )
            }
        }
        // Literals are checked as the run will check them (a template's value, when it is known).
        let literals = o.filter { if case .string(let s) = $0.value { !s.contains("${") } else { true } }
        if let problem = check(literals, templates: arguments) {
            throw FlowDecoder.Problem(
                path: path.appending(problem.argument), message: "\(problem.value.shownInMessage) \(problem.problem)",
                hint: problem.hint)
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
