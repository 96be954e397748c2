import CheckoutKit
import Foundation

/// A command's options and arguments as a Swift value: the command's run receives one, never a string lookup.
///
/// Each is declared once, in `inputs`: its spelling, placeholder, help, default and choices (what help, completion,
/// "did you mean" and the parser's checks are made from: `CommandSpec.options`, `CommandSpec.arguments`) and the
/// property its value is read into, checked as it is read (an id is one line, a URL is http(s), a number is in its
/// range, an amount is exact) — a bad value exits 64 naming the option before anything runs. The same declarations,
/// `GlobalSettings.inputs`, read the options every command takes.
protocol CommandInput: Sendable {
    /// Every option left out: the defaults.
    init()
    static var inputs: [Input<Self>] { get }
}

/// A command that takes nothing but the global options.
struct NoInput: CommandInput {
    static let inputs: [Input<NoInput>] = []
}

/// One option or argument of `Root`: how help shows it, and how its value is read into its property.
struct Input<Root>: Sendable {
    enum Place: Sendable {
        case option(OptionSpec)
        case argument(ArgumentSpec)
    }

    let place: Place
    let read: @Sendable (_ invocation: Invocation, _ root: inout Root) throws(Diagnostic) -> Void

    var option: OptionSpec? { if case .option(let spec) = place { spec } else { nil } }
    var argument: ArgumentSpec? { if case .argument(let spec) = place { spec } else { nil } }

    // MARK: Options

    /// `--long VALUE` as typed (a path, a name), or its default.
    static func value(
        _ long: String, _ path: WritableKeyPath<Root, String?> & Sendable, value placeholder: String, help: String,
        default defaultValue: String? = nil, choices: [String]? = nil, required: Bool = false
    ) -> Input {
        let spec = OptionSpec(
            long, value: placeholder, help: help, default: defaultValue, choices: choices, required: required)
        return Input(place: .option(spec)) { invocation, root in root[keyPath: path] = invocation.string(long) }
    }

    /// `--long VALUE`, one of a fixed set of words, as a Swift enum.
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ long: String, _ path: WritableKeyPath<Root, Value?> & Sendable, value placeholder: String, help: String,
        default defaultValue: Value? = nil
    ) -> Input where Value.RawValue == String {
        let spec = OptionSpec(
            long, value: placeholder, help: help, default: defaultValue?.rawValue,
            choices: Value.allCases.map(\.rawValue))
        // The parser has checked the value against the choices, which are the cases' raw values.
        return Input(place: .option(spec)) { invocation, root in
            root[keyPath: path] = invocation.string(long).flatMap(Value.init(rawValue:))
        }
    }

    /// `--long VALUE`, one of a fixed set of words, as a Swift enum that always has a value: `defaultValue` when the
    /// option is left out.
    static func choice<Value: RawRepresentable & CaseIterable & Sendable>(
        _ long: String, _ path: WritableKeyPath<Root, Value> & Sendable, value placeholder: String, help: String,
        default defaultValue: Value
    ) -> Input where Value.RawValue == String {
        let spec = OptionSpec(
            long, value: placeholder, help: help, default: defaultValue.rawValue,
            choices: Value.allCases.map(\.rawValue))
        return Input(place: .option(spec)) { invocation, root in
            if let value = invocation.string(long).flatMap(Value.init(rawValue:)) { root[keyPath: path] = value }
        }
    }

    /// `--long`, a flag.
    static func flag(
        _ long: String, short: Character? = nil, _ path: WritableKeyPath<Root, Bool> & Sendable, help: String
    ) -> Input {
        Input(place: .option(OptionSpec(long, short: short, help: help))) { invocation, root in
            root[keyPath: path] = invocation.flag(long)
        }
    }

    /// `--long ID`: an id or a key, not empty and one line (`Invocation.identifier`).
    static func identifier(
        _ long: String, _ path: WritableKeyPath<Root, String?> & Sendable, value placeholder: String = "ID",
        help: String, required: Bool = false
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, required: required))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.identifier(long)
        }
    }

    /// `--long URL`: http(s) (`Invocation.url`).
    static func url(
        _ long: String, _ path: WritableKeyPath<Root, String?> & Sendable, help: String,
        schemes: Set<String> = ["http", "https"]
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: "URL", help: help))) { invocation, root throws(Diagnostic) in
            root[keyPath: path] = try invocation.url(long, schemes: schemes)
        }
    }

    /// `--long N`: a whole number in `range`.
    static func integer(
        _ long: String, _ path: WritableKeyPath<Root, Int?> & Sendable, value placeholder: String = "N",
        range: ClosedRange<Int> = Int.min...Int.max, help: String, default defaultValue: String? = nil
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, default: defaultValue))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.int(long, range: range)
        }
    }

    /// `--long SECONDS`: 30, 2.5, 500ms, 2m.
    static func seconds(
        _ long: String, _ path: WritableKeyPath<Root, Double?> & Sendable, value placeholder: String = "SECONDS",
        help: String, default defaultValue: String? = nil
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, default: defaultValue))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.seconds(long)
        }
    }

    /// `--long SECONDS` with a default, which help shows.
    static func seconds(
        _ long: String, _ path: WritableKeyPath<Root, Double> & Sendable, value placeholder: String = "SECONDS",
        help: String, default defaultValue: Double
    ) -> Input {
        let shown = defaultValue == defaultValue.rounded() ? String(Int(defaultValue)) : String(defaultValue)
        return Input(place: .option(OptionSpec(long, value: placeholder, help: help, default: shown))) {
            invocation, root throws(Diagnostic) in
            if let seconds = try invocation.seconds(long) { root[keyPath: path] = seconds }
        }
    }

    /// `--long VALUE`, any number of times, in the order given; each one of `choices` when there are some.
    static func values(
        _ long: String, _ path: WritableKeyPath<Root, [String]> & Sendable, value placeholder: String, help: String,
        choices: [String]? = nil
    ) -> Input {
        let spec = OptionSpec(long, value: placeholder, help: help, choices: choices, repeatable: true)
        return Input(place: .option(spec)) { invocation, root in
            root[keyPath: path] = invocation.strings(long)
        }
    }

    /// `--long K=V`, any number of times: the pairs, values exactly as typed.
    static func pairs(
        _ long: String, _ path: WritableKeyPath<Root, [String: String]> & Sendable, value placeholder: String = "K=V",
        help: String
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, repeatable: true))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.pairs(long)
        }
    }

    /// `--long K=V`, any number of times: flow variables, a JSON number or boolean keeping its type
    /// (`Invocation.variables`).
    static func variables(
        _ long: String, _ path: WritableKeyPath<Root, JSON.Object> & Sendable, value placeholder: String = "NAME=VALUE",
        help: String
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, repeatable: true))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.variables(long)
        }
    }

    /// `--amount N` read exactly into minor units by `notation`, in no currency (digits alone, in minor units).
    static func amount(
        _ long: String = "amount", _ path: WritableKeyPath<Root, Int?> & Sendable, _ notation: AmountNotation,
        value placeholder: String = "N", help: String, required: Bool = false
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, required: required))) {
            invocation, root throws(Diagnostic) in
            root[keyPath: path] = try invocation.amount(long, notation: notation, currency: nil)
        }
    }

    /// `--amount N` read exactly into minor units by `notation`, in the currency `currency` holds by then (an option
    /// declared before this one).
    static func amount(
        _ long: String = "amount", _ path: WritableKeyPath<Root, Int?> & Sendable, _ notation: AmountNotation,
        currency: KeyPath<Root, Currency?> & Sendable, value placeholder: String = "N", help: String,
        required: Bool = false
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: placeholder, help: help, required: required))) {
            invocation, root throws(Diagnostic) in
            root[keyPath: path] = try invocation.amount(long, notation: notation, currency: root[keyPath: currency])
        }
    }

    /// `--long CODE`: an ISO 4217 currency, alphabetic or numeric.
    static func currency(
        _ long: String = "currency", _ path: WritableKeyPath<Root, Currency?> & Sendable, help: String,
        required: Bool = false
    ) -> Input {
        Input(place: .option(OptionSpec(long, value: "CODE", help: help, required: required))) {
            invocation, root throws(Diagnostic) in
            guard let code = invocation.string(long) else { return }
            do throws(Diagnostic) {
                root[keyPath: path] = try Currency.parse(code)
            } catch {
                throw invocation.usage("--\(long) \(code): \(error.message)")
            }
        }
    }

    // MARK: Arguments

    /// A positional argument as typed (a path, a name).
    static func argument(
        _ name: String, _ path: WritableKeyPath<Root, String?> & Sendable, help: String, optional: Bool = false
    ) -> Input {
        Input(place: .argument(ArgumentSpec(name, help: help, optional: optional))) { invocation, root in
            root[keyPath: path] = invocation.argument(name)
        }
    }

    /// A positional id or key, not empty and one line.
    static func identifier(
        argument name: String, _ path: WritableKeyPath<Root, String?> & Sendable, help: String, optional: Bool = false
    ) -> Input {
        Input(place: .argument(ArgumentSpec(name, help: help, optional: optional))) {
            invocation, root throws(Diagnostic) in root[keyPath: path] = try invocation.identifier(name)
        }
    }

    /// The last argument, taking every remaining word (one at least, unless `optional`).
    static func arguments(
        _ name: String, _ path: WritableKeyPath<Root, [String]> & Sendable, help: String, optional: Bool = true
    ) -> Input {
        Input(place: .argument(ArgumentSpec(name, help: help, optional: optional, repeats: true))) { invocation, root in
            root[keyPath: path] = invocation.arguments(name)
        }
    }
}

extension CommandInput {
    /// The command line read into a value, each input in its declared order.
    static func read(_ invocation: Invocation) throws(Diagnostic) -> Self {
        var root = Self()
        for input in inputs { try input.read(invocation, &root) }
        return root
    }
}

extension CommandSpec {
    /// A command whose options and arguments are declared by `Input` and whose run receives them read.
    init<Input: CommandInput>(
        name: String, abstract: String, discussion: String = "", input: Input.Type,
        run: @escaping @Sendable (_ input: Input, _ invocation: Invocation) async throws(Diagnostic) -> ExitCode
    ) {
        self.init(
            name: name, abstract: abstract, discussion: discussion, arguments: Input.inputs.compactMap(\.argument),
            options: Input.inputs.compactMap(\.option)
        ) { invocation throws(Diagnostic) in try await run(try Input.read(invocation), invocation) }
    }
}
