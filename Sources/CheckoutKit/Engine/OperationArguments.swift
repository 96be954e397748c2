import Foundation

/// An operation's arguments as a Swift value: the operation's body receives one, never the step's `with` object.
///
/// Each argument is declared once, in `arguments`: its name, kind, meaning, default and range (what `flow ops`,
/// `flow describe` and `flow schema` show) and the property its value is read into. Swift has no reflection of a
/// type's properties, so the declaration names each one by key path. The same reading is the check the engine makes
/// of a step's arguments before the flow's first request (those known by then: literals, variables, configuration)
/// and again, rendered, before the step runs — so a value the operation would refuse is refused before anything is
/// sent, and blamed on where it came from.
public protocol OperationArguments: Sendable {
    /// Every argument left out: the defaults.
    init()
    static var arguments: [Argument<Self>] { get }
}

/// An operation that takes no arguments.
public struct NoArguments: OperationArguments {
    public init() {}
    public static let arguments: [Argument<NoArguments>] = []
}

/// One argument of `Root`: how `flow ops` shows it, and how a value is read into its property.
public struct Argument<Root>: Sendable {
    public let parameter: FlowOperation.Parameter
    /// The other argument whose value this one is read with (an amount's currency): while that one is a template not
    /// known yet, this one waits for the run.
    let readWith: String?
    /// Reads the argument's value into `root`, or says why the operation would refuse it; `arguments` are all the
    /// step's, as far as they are known.
    let read: @Sendable (_ value: JSON, _ arguments: JSON.Object, _ root: inout Root) -> FlowOperation.ArgumentProblem?
    /// The argument's value in `root` as a step's `with` object gives it (reading it gives it back); nil for none.
    /// `others`: the arguments written so far (an amount's currency).
    let write: @Sendable (_ root: Root, _ others: JSON.Object) -> JSON?
    /// Whether its value in `root` is the one in `defaults` (then a step leaves it out, unless it is required).
    let isDefault: @Sendable (_ root: Root, _ defaults: Root) -> Bool
    /// The property it is read into: what a value known only as the flow runs is bound to (`RunValue`).
    let property: AnyKeyPath & Sendable

    init(
        _ parameter: FlowOperation.Parameter, property: AnyKeyPath & Sendable, readWith: String? = nil,
        read: @escaping @Sendable (JSON, JSON.Object, inout Root) -> FlowOperation.ArgumentProblem?,
        write: @escaping @Sendable (Root, JSON.Object) -> JSON?,
        isDefault: @escaping @Sendable (Root, Root) -> Bool
    ) {
        self.parameter = parameter
        self.property = property
        self.readWith = readWith
        self.read = read
        self.write = write
        self.isDefault = isDefault
    }

    /// An argument read by `parse` into `path` (refused: its problem), and written back by `written`.
    private static func reading<Value: Equatable & Sendable>(
        _ parameter: FlowOperation.Parameter, into path: WritableKeyPath<Root, Value> & Sendable,
        readWith: String? = nil, written: @escaping @Sendable (_ value: Value, _ others: JSON.Object) -> JSON?,
        _ parse: @escaping @Sendable (JSON, JSON.Object) -> Result<Value, FlowOperation.ArgumentProblem>
    ) -> Argument {
        Argument(
            parameter, property: path, readWith: readWith,
            read: { value, arguments, root in
                switch parse(value, arguments) {
                case .success(let read):
                    root[keyPath: path] = read
                    return nil
                case .failure(let problem): return problem
                }
            },
            write: { root, others in written(root[keyPath: path], others) },
            isDefault: { root, defaults in root[keyPath: path] == defaults[keyPath: path] })
    }

    // MARK: Kinds

    /// Text: a string, or a number or boolean as written (an id given as a number). `choices`: the values it may take.
    public static func string(
        _ name: String, _ path: WritableKeyPath<Root, String?> & Sendable, required: Bool = false,
        multiline: Bool = false, choices: [String]? = nil, input: FlowOperation.InputFile? = nil,
        default defaultValue: String? = nil, help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(
            name, .string, required: required, multiline: multiline, choices: choices, input: input,
            default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in value.map(JSON.string) }) { value, _ in
            ArgumentReader.text(value, for: p).map(Optional.some)
        }
    }

    /// Text that always has a value: the step's, else `defaultValue` — or, without one, the step must give it (the
    /// property's initial value is never read then).
    public static func string(
        _ name: String, _ path: WritableKeyPath<Root, String> & Sendable, multiline: Bool = false,
        choices: [String]? = nil, input: FlowOperation.InputFile? = nil, default defaultValue: String? = nil,
        help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(
            name, .string, required: defaultValue == nil, multiline: multiline, choices: choices, input: input,
            default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in .string(value) }) { value, _ in
            ArgumentReader.text(value, for: p)
        }
    }

    /// One of a fixed set of words, as a Swift enum.
    public static func choice<Value: RawRepresentable & CaseIterable & Equatable & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, Value?> & Sendable, required: Bool = false,
        default defaultValue: String? = nil,
        help: String = ""
    ) -> Argument where Value.RawValue == String {
        let p = FlowOperation.Parameter(
            name, .string, required: required, choices: Value.allCases.map(\.rawValue), default: defaultValue,
            help: help)
        // A text that passed the choices is a case's raw value.
        return reading(p, into: path, written: { value, _ in value.map { .string($0.rawValue) } }) { value, _ in
            ArgumentReader.text(value, for: p).map { Value(rawValue: $0)! }
        }
    }

    /// One of a fixed set of words that always has a value: the step's, else the property's initial one, which
    /// `defaultValue` names — or, without it, the step must give it.
    public static func choice<Value: RawRepresentable & CaseIterable & Equatable & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, Value> & Sendable, default defaultValue: String? = nil,
        help: String = ""
    ) -> Argument where Value.RawValue == String {
        let p = FlowOperation.Parameter(
            name, .string, required: defaultValue == nil, choices: Value.allCases.map(\.rawValue),
            default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in .string(value.rawValue) }) { value, _ in
            ArgumentReader.text(value, for: p).map { Value(rawValue: $0)! }
        }
    }

    /// An ISO 4217 currency, alphabetic (USD) or numeric (840).
    public static func currency(
        _ name: String, _ path: WritableKeyPath<Root, Currency?> & Sendable, required: Bool = false,
        default defaultValue: String? = nil, help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .string, required: required, default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in value.map { .string($0.code) } }) { value, _ in
            ArgumentReader.currency(value, argument: name).map(Optional.some)
        }
    }

    /// A currency that always has a value: the step's, else the property's initial one, which `defaultValue` names —
    /// or, without it, the step must give it.
    public static func currency(
        _ name: String, _ path: WritableKeyPath<Root, Currency> & Sendable, default defaultValue: String? = nil,
        help: String
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .string, required: defaultValue == nil, default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in .string(value.code) }) { value, _ in
            ArgumentReader.currency(value, argument: name)
        }
    }

    /// A whole number, in `range` when one is given.
    public static func integer(
        _ name: String, _ path: WritableKeyPath<Root, Int?> & Sendable, required: Bool = false,
        range: ClosedRange<Int>? = nil, default defaultValue: String? = nil, help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(
            name, .integer, required: required, range: range, default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in value.map { .number(JSON.Number($0)) } }) { value, _ in
            guard let i = value.intValue else {
                let hint =
                    range.map { "give a whole number from \($0.lowerBound) to \($0.upperBound)" }
                    ?? "give a whole number"
                return .failure(
                    .init(argument: name, value: value, problem: "is \(value.kindName), not an integer", hint: hint))
            }
            if let range, !range.contains(i) {
                return .failure(
                    .init(
                        argument: name, value: value,
                        problem: "is out of range \(range.lowerBound)…\(range.upperBound)",
                        hint: "give a whole number from \(range.lowerBound) to \(range.upperBound)"))
            }
            return .success(i)
        }
    }

    /// True or false; false when left out.
    public static func boolean(
        _ name: String, _ path: WritableKeyPath<Root, Bool> & Sendable, help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .boolean, help: help)
        return reading(p, into: path, written: { value, _ in .bool(value) }) { value, _ in
            ArgumentReader.kind(
                value.boolValue, of: value, argument: name, problem: "is \(value.kindName), not true or false",
                hint: "give true or false")
        }
    }

    /// A JSON object the step must give, as it is.
    public static func object(
        _ name: String, _ path: WritableKeyPath<Root, JSON.Object> & Sendable, help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .object, required: true, help: help)
        return reading(p, into: path, written: { value, _ in .object(value) }) { value, _ in
            ArgumentReader.kind(
                value.objectValue, of: value, argument: name, problem: "is \(value.kindName), not an object",
                hint: "give a JSON object")
        }
    }

    /// A JSON object, as it is.
    public static func object(
        _ name: String, _ path: WritableKeyPath<Root, JSON.Object?> & Sendable, required: Bool = false,
        help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .object, required: required, help: help)
        return reading(p, into: path, written: { value, _ in value.map(JSON.object) }) { value, _ in
            ArgumentReader.kind(
                value.objectValue, of: value, argument: name, problem: "is \(value.kindName), not an object",
                hint: "give a JSON object"
            ).map(Optional.some)
        }
    }

    /// A JSON array, as it is.
    public static func array(
        _ name: String, _ path: WritableKeyPath<Root, [JSON]?> & Sendable, default defaultValue: String? = nil,
        help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .array, default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in value.map(JSON.array) }) { value, _ in
            ArgumentReader.kind(
                value.arrayValue, of: value, argument: name, problem: "is \(value.kindName), not an array",
                hint: "give a JSON array"
            ).map(Optional.some)
        }
    }

    /// Seconds, from a number of seconds or a duration such as "90s" or "2m"; more than zero.
    public static func duration(
        _ name: String, _ path: WritableKeyPath<Root, Double?> & Sendable, default defaultValue: String? = nil,
        help: String = ""
    ) -> Argument {
        let p = FlowOperation.Parameter(name, .duration, default: defaultValue, help: help)
        return reading(p, into: path, written: { value, _ in value.map { .number(JSON.Number($0)) } }) { value, _ in
            ArgumentReader.kind(
                ArgumentReader.seconds(value), of: value, argument: name, problem: ArgumentReader.durationProblem,
                hint: ArgumentReader.durationHint
            ).map(Optional.some)
        }
    }

    /// An amount in the currency the argument `currency` names (`defaultCurrency` when the step leaves it out; neither:
    /// digits alone), read exactly into minor units by `notation` — the one reader of amounts, `Amount.minorUnits`.
    public static func amount(
        _ name: String, _ path: WritableKeyPath<Root, Int?> & Sendable, _ notation: AmountNotation,
        currency currencyArgument: String, defaultCurrency: String? = nil, allowingZero: Bool = false,
        default defaultValue: String? = nil, help: String
    ) -> Argument {
        let p = amountParameter(
            name, notation, currencyArgument, defaultCurrency, allowingZero, required: false, defaultValue, help)
        return reading(
            p, into: path, readWith: currencyArgument,
            written: { value, others in
                value.map { written($0, of: p, with: others) }
            }
        ) { value, arguments in
            minorUnits(value, of: p, in: arguments).map(Optional.some)
        }
    }

    /// An amount the step must give, read as the one above.
    public static func amount(
        _ name: String, _ path: WritableKeyPath<Root, Int> & Sendable, _ notation: AmountNotation,
        currency currencyArgument: String, defaultCurrency: String? = nil, help: String
    ) -> Argument {
        let p = amountParameter(name, notation, currencyArgument, defaultCurrency, false, required: true, nil, help)
        return reading(
            p, into: path, readWith: currencyArgument, written: { value, others in written(value, of: p, with: others) }
        ) {
            value, arguments in
            minorUnits(value, of: p, in: arguments)
        }
    }

    private static func amountParameter(
        _ name: String, _ notation: AmountNotation, _ currencyArgument: String?, _ defaultCurrency: String?,
        _ allowingZero: Bool, required: Bool, _ defaultValue: String?, _ help: String
    ) -> FlowOperation.Parameter {
        var p = FlowOperation.Parameter(name, .amount, required: required, default: defaultValue, help: help)
        p.amount = FlowOperation.AmountRule(
            notation: notation, currencyArgument: currencyArgument, defaultCurrency: defaultCurrency,
            allowsZero: allowingZero)
        return p
    }

    /// `minor` as a step gives an amount argument by `parameter`'s rule: minor units as digits, or in major units a
    /// decimal in the currency `others` give it (or its default), which reading gives back exactly.
    private static func written(_ minor: Int, of parameter: FlowOperation.Parameter, with others: JSON.Object) -> JSON {
        guard let rule = parameter.amount, rule.notation == .majorUnits,
            let code = rule.currencyArgument.flatMap({ others[$0]?.interpolationText }) ?? rule.defaultCurrency,
            let currency = try? Currency.parse(code)
        else { return .number(JSON.Number(minor)) }
        return .string(currency.decimal(minor))
    }

    /// `value`'s minor units by the rule of the amount argument `parameter`, in the currency `arguments` give it.
    private static func minorUnits(
        _ value: JSON, of parameter: FlowOperation.Parameter,
        in arguments: JSON.Object
    ) -> Result<Int, FlowOperation.ArgumentProblem> {
        guard let rule = parameter.amount, let currencyArgument = rule.currencyArgument else {
            preconditionFailure("an amount with its currency's argument")
        }
        var currency: Currency?
        if let code = arguments[currencyArgument] ?? rule.defaultCurrency.map(JSON.string) {
            switch ArgumentReader.currency(code, argument: currencyArgument) {
            case .success(let known): currency = known
            case .failure(let problem): return .failure(problem)
            }
        }
        return Amount.minorUnits(value, notation: rule.notation, currency: currency, allowingZero: rule.allowsZero)
            .mapError {
                .init(
                    argument: parameter.name, value: value, problem: $0.problem,
                    hint: Amount.forms(rule.notation, currency: currency))
            }
    }

    /// An amount in a currency the operation learns as it runs (an order's, a selection's): its form is checked now,
    /// its minor units read once the currency is known (`PendingAmount.minorUnits(in:)`).
    public static func amount(
        _ name: String, _ path: WritableKeyPath<Root, PendingAmount?> & Sendable, _ notation: AmountNotation,
        allowingZero: Bool = false, default defaultValue: String? = nil, help: String
    ) -> Argument {
        let p = amountParameter(name, notation, nil, nil, allowingZero, required: false, defaultValue, help)
        return reading(p, into: path, written: { value, _ in value.map(\.value) }) { value, _ in
            if let refusal = Amount.formRefusal(value) {
                return .failure(
                    .init(
                        argument: name, value: value, problem: refusal.problem,
                        hint: Amount.forms(notation, currency: nil)))
            }
            return .success(PendingAmount(argument: name, value: value, notation: notation, allowsZero: allowingZero))
        }
    }
}

/// An amount argument whose currency the operation learns as it runs: well-formed, not yet minor units.
public struct PendingAmount: Sendable, Equatable {
    let argument: String
    let value: JSON
    let notation: AmountNotation
    let allowsZero: Bool

    init(argument: String, value: JSON, notation: AmountNotation, allowsZero: Bool) {
        (self.argument, self.value, self.notation, self.allowsZero) = (argument, value, notation, allowsZero)
    }

    /// An amount a command was given (`--amount 19.99`) for an operation that reads it in a currency it learns as it
    /// runs, by the operation's `notation`: refused now when it is no amount in any currency.
    public init(
        _ text: String, notation: AmountNotation, option: String = "--amount", allowingZero: Bool = false
    ) throws(Diagnostic) {
        // Digits stay a number, as a flow file would give them; other text (a decimal) is kept as typed.
        let value = JSON.Number(literal: text).map(JSON.number) ?? .string(text)
        if let refusal = Amount.formRefusal(value) {
            throw .usage(
                "\(option) \(value.shownInMessage) \(refusal.problem)", hint: Amount.forms(notation, currency: nil))
        }
        self.init(argument: option, value: value, notation: notation, allowsZero: allowingZero)
    }

    /// Its minor units when no currency is needed to read them — digits alone, in minor-units notation — refused as any
    /// amount argument is (zero, too large); nil when they need the currency.
    public func minorUnitsInAnyCurrency() throws(Diagnostic) -> Int? {
        guard notation == .minorUnits, let text = Amount.text(of: value), !text.contains(".") else { return nil }
        switch Amount.minorUnits(value, notation: notation, currency: nil, allowingZero: allowsZero) {
        case .success(let minor): return minor
        case .failure(let refusal):
            throw .usage(
                "\(argument) \(value.shownInMessage) \(refusal.problem)", hint: Amount.forms(notation, currency: nil))
        }
    }

    /// Its minor units in `currency`, by the one reader of amounts; refused as any amount argument is.
    public func minorUnits(in currency: Currency) throws(Diagnostic) -> Int {
        switch Amount.minorUnits(value, notation: notation, currency: currency, allowingZero: allowsZero) {
        case .success(let minor): return minor
        case .failure(let refusal):
            throw .usage(
                "\(argument) \(value.shownInMessage) \(refusal.problem)",
                hint: Amount.forms(notation, currency: currency))
        }
    }
}

/// How the kinds of argument read their values: shared by the kinds that take the same form.
enum ArgumentReader {
    /// A string as it is, a number or boolean as written; one of `parameter`'s choices when it has some.
    static func text(
        _ value: JSON, for parameter: FlowOperation.Parameter
    ) -> Result<String, FlowOperation.ArgumentProblem> {
        let text: String
        switch value {
        case .string(let s): text = s
        case .number(let n): text = n.literal
        case .bool(let b): text = b ? "true" : "false"
        default:
            return .failure(
                .init(
                    argument: parameter.name, value: value, problem: "is \(value.kindName), not a string",
                    hint: "give text"))
        }
        if let choices = parameter.choices, !choices.contains(text) {
            return .failure(
                .init(
                    argument: parameter.name, value: value, problem: "is not one of \(choices.joined(separator: ", "))",
                    hint: "give \(choices.joined(separator: " or "))"))
        }
        return .success(text)
    }

    /// `read`, else the problem that `value` is not of the kind the argument takes. (Into an optional property: map the
    /// result to `Optional.some` — an optional `Value` would take a nil `read` for a value.)
    static func kind<Value>(
        _ read: Value?, of value: JSON, argument: String, problem: String, hint: String
    ) -> Result<Value, FlowOperation.ArgumentProblem> {
        read.map(Result.success) ?? .failure(.init(argument: argument, value: value, problem: problem, hint: hint))
    }

    static func currency(_ value: JSON, argument: String) -> Result<Currency, FlowOperation.ArgumentProblem> {
        do throws(Diagnostic) {
            return .success(try Currency.parse(value.interpolationText))
        } catch {
            return .failure(
                .init(
                    argument: argument, value: value, problem: "is no currency: \(error.message)",
                    hint: error.hint ?? "give an ISO 4217 code"))
        }
    }

    static func seconds(_ value: JSON) -> Double? {
        if let n = value.doubleValue { return n > 0 ? n : nil }
        return value.stringValue.flatMap(Duration.seconds(from:)).flatMap { $0 > 0 ? $0 : nil }
    }

    static let durationProblem = "is not a positive number of seconds or a duration"
    static let durationHint = "e.g. 120, \"120s\", \"500ms\" or \"2m\""
}
