import Foundation

/// A provider operation a step can `use`. Provider folders add theirs to the registry; the engine
/// supplies retries, polling, templating, recording and reporting around them.
public struct FlowOperation: Sendable {
    public struct Parameter: Sendable {
        public enum Kind: String, Sendable { case string, integer, number, boolean, object, array, any }
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

        public init(_ name: String, _ kind: Kind, required: Bool = false, multiline: Bool = false, range: ClosedRange<Int>? = nil,
                    input: InputFile? = nil, default defaultValue: String? = nil, help: String = "") {
            self.name = name
            self.kind = kind
            self.required = required
            self.multiline = multiline
            self.range = range
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
    public var body: Body

    public init(name: String, summary: String, requiredConfiguration: [String] = [], stateCheck: StateCheck? = nil,
                argumentCheck: ArgumentCheck? = nil, parameters: [Parameter], outputs: [Output] = [], body: @escaping Body) {
        self.name = name
        self.summary = summary
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
            case .any: true
            }
            if !ok {
                throw FlowDecoder.Problem(path: path.appending(p.name), message: "expected \(p.kind.rawValue), found \(value.kindName)")
            }
            if let range = p.range, let i = value.intValue, !range.contains(i) {
                throw FlowDecoder.Problem(path: path.appending(p.name), message: "\(value.interpolationText) is out of range \(range.lowerBound)…\(range.upperBound)")
            }
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
