import CheckoutKit
import Foundation

/// What the parser made of the command line.
public enum ParseResult: Sendable {
    case run(CommandSpec, Invocation)
    case help(CommandSpec, path: [String])
    case version
}

/// Parses `CommandLine.arguments` against the command tree. Options may come before or after the
/// subcommand; `--opt value` and `--opt=value` both work; `--` ends options.
public struct Parser: Sendable {
    public let root: CommandSpec
    public let globalOptions: [OptionSpec]

    public init(root: CommandSpec, globalOptions: [OptionSpec]) {
        self.root = root
        self.globalOptions = globalOptions
    }

    public func parse(_ arguments: [String]) throws(Diagnostic) -> ParseResult {
        var command = root
        var path = [root.name]
        var values: [String: [String]] = [:]
        var positionals: [String] = []
        var optionsEnded = false
        var index = 0

        func usage(_ message: String) -> Diagnostic {
            .usage(message, hint: "run '\(path.joined(separator: " ")) --help' for usage")
        }
        func option(named name: String) -> OptionSpec? {
            (command.options + globalOptions).first { $0.long == name }
        }
        func record(_ spec: OptionSpec, _ value: String) throws(Diagnostic) {
            if let choices = spec.choices, !choices.contains(value) {
                let suggestion = Suggest.closest(to: value, in: choices).map { "; did you mean '\($0)'?" } ?? ""
                throw usage(
                    "invalid value '\(value)' for --\(spec.long)\(suggestion) (choose from \(choices.joined(separator: ", ")))"
                )
            }
            if !spec.repeatable, values[spec.long] != nil, !spec.isFlag {
                throw usage("--\(spec.long) given more than once")
            }
            values[spec.long, default: []].append(value)
        }
        func takeValue(_ spec: OptionSpec, inline: String?, shown: String) throws(Diagnostic) -> String {
            if let inline { return inline }
            guard index + 1 < arguments.count else {
                throw usage("option \(shown) needs a value (\(spec.valueName ?? "VALUE"))")
            }
            index += 1
            return arguments[index]
        }

        while index < arguments.count {
            let token = arguments[index]
            if optionsEnded || token == "-" || !token.hasPrefix("-") || Double(token) != nil {
                if positionals.isEmpty, !command.subcommands.isEmpty, !optionsEnded {
                    guard let sub = command.subcommands.first(where: { $0.name == token }) else {
                        let names = command.subcommands.map(\.name)
                        let suggestion = Suggest.closest(to: token, in: names).map { "; did you mean '\($0)'?" } ?? ""
                        throw usage("unknown command '\(token)' for '\(path.joined(separator: " "))'\(suggestion)")
                    }
                    command = sub
                    path.append(sub.name)
                } else {
                    positionals.append(token)
                }
            } else if token == "--" {
                optionsEnded = true
            } else if token.hasPrefix("--") {
                let body = token.dropFirst(2)
                let name = String(body.prefix { $0 != "=" })
                let inline = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
                if name == "help" { return .help(command, path: path) }
                if name == "version" { return .version }
                guard let spec = option(named: name) else {
                    let candidates = (command.options + globalOptions).map(\.long) + ["help", "version"]
                    let suggestion = Suggest.closest(to: name, in: candidates).map { "; did you mean '--\($0)'?" } ?? ""
                    throw usage("unknown option '--\(name)'\(suggestion)")
                }
                if spec.isFlag {
                    if inline != nil { throw usage("option --\(name) takes no value") }
                    try record(spec, "true")
                } else {
                    try record(spec, try takeValue(spec, inline: inline, shown: "--\(name)"))
                }
            } else {
                // One or more short flags: -v, -q, -vq; a short option with a value: -o FILE.
                let letters = Array(token.dropFirst())
                for (i, letter) in letters.enumerated() {
                    if letter == "h" { return .help(command, path: path) }
                    guard let spec = (command.options + globalOptions).first(where: { $0.short == letter }) else {
                        throw usage("unknown option '-\(letter)'")
                    }
                    if spec.isFlag {
                        try record(spec, "true")
                    } else {
                        let rest = String(letters[(i + 1)...])
                        try record(spec, try takeValue(spec, inline: rest.isEmpty ? nil : rest, shown: "-\(letter)"))
                        break
                    }
                }
            }
            index += 1
        }

        guard command.run != nil else {
            if path.count == 1 && arguments.isEmpty { return .help(command, path: path) }
            let names = command.subcommands.map(\.name).joined(separator: ", ")
            throw usage("'\(path.joined(separator: " "))' needs a subcommand: \(names)")
        }
        let required = command.arguments.filter { !$0.optional }.count
        if positionals.count < required {
            let missing = command.arguments[positionals.count].name
            throw usage("missing argument \(missing)")
        }
        if positionals.count > command.arguments.count, command.arguments.last?.repeats != true {
            throw usage("unexpected argument '\(positionals[command.arguments.count])'")
        }
        for spec in command.options where spec.required && values[spec.long] == nil {
            throw usage(
                "missing required option --\(spec.long) \(spec.valueName ?? "")".trimmingCharacters(in: .whitespaces))
        }
        var named: [String: [String]] = [:]
        for (index, spec) in command.arguments.enumerated() where index < positionals.count {
            named[spec.name] = spec.repeats ? Array(positionals[index...]) : [positionals[index]]
        }
        var defaults: [String: String] = [:]
        for spec in command.options + globalOptions { if let d = spec.defaultValue { defaults[spec.long] = d } }
        return .run(command, Invocation(path: path, values: values, defaults: defaults, arguments: named))
    }
}

/// A parsed command line for one command: typed access to its options and arguments.
public struct Invocation: Sendable {
    public let path: [String]
    let values: [String: [String]]
    let defaults: [String: String]
    let arguments: [String: [String]]

    public init(
        path: [String], values: [String: [String]], defaults: [String: String] = [:],
        arguments: [String: [String]] = [:]
    ) {
        self.path = path
        self.values = values
        self.defaults = defaults
        self.arguments = arguments
    }

    public var commandName: String { path.joined(separator: " ") }

    public func argument(_ name: String) -> String? { arguments[name]?.first }
    /// Every word a repeating argument took, in order.
    public func arguments(_ name: String) -> [String] { arguments[name] ?? [] }
    public func string(_ name: String) -> String? { values[name]?.last ?? defaults[name] }
    public func strings(_ name: String) -> [String] { values[name] ?? [] }
    public func flag(_ name: String) -> Bool { values[name] != nil }
    public func isGiven(_ name: String) -> Bool { values[name] != nil }

    func usage(_ message: String) -> Diagnostic {
        .usage(message, hint: "run '\(commandName) --help' for usage")
    }

    /// An id or a key (`--order-id`, `--intent`, an `ID` argument): not empty and one line, since it may end up in a
    /// header or a URL. Checked here, where it enters: exit 64 with the value as typed.
    public func identifier(_ name: String) throws(Diagnostic) -> String? {
        guard let text = string(name) ?? argument(name) else { return nil }
        let shown = isGiven(name) ? "--\(name)" : name
        if text.trimmingCharacters(in: .whitespaces).isEmpty { throw usage("\(shown) is empty; give an id") }
        if let problem = HeaderSafety.problem(text)
            ?? text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }).map({
                "holds the control character U+\(String($0.value, radix: 16, uppercase: true))"
            })
        {
            throw usage("\(shown) \(problem): \(text.debugDescription) is not an id")
        }
        return text
    }

    /// An `http(s)://host…` URL (`--forward-to`, `--webhook-url`), or exit 64 saying what is wrong with it.
    public func url(_ name: String, schemes: Set<String> = ["http", "https"]) throws(Diagnostic) -> String? {
        guard let text = string(name) else { return nil }
        if let problem = HTTPURL.problem(text, schemes: schemes) { throw usage("--\(name) '\(text)' \(problem)") }
        return text
    }

    public func int(_ name: String, range: ClosedRange<Int> = Int.min...Int.max) throws(Diagnostic) -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw usage(
                "--\(name) expects an integer\(range == Int.min...Int.max ? "" : " in \(range.lowerBound)…\(range.upperBound)"), got '\(text)'"
            )
        }
        return value
    }

    /// Seconds: `30`, `1.5`, `500ms`, `2m`.
    public func seconds(_ name: String) throws(Diagnostic) -> Double? {
        guard let text = string(name) else { return nil }
        guard let value = Duration.seconds(from: text), value > 0 else {
            throw usage("--\(name) expects a duration such as 30, 2.5, 500ms, 2m, 1m30s or 5h, got '\(text)'")
        }
        return value
    }

    /// `k=v` pairs, values exactly as typed (credentials, ids, metadata).
    public func pairs(_ name: String) throws(Diagnostic) -> [String: String] {
        var out: [String: String] = [:]
        for item in strings(name) {
            guard let eq = item.firstIndex(of: "="), eq != item.startIndex else {
                throw usage("--\(name) expects KEY=VALUE, got '\(item)'")
            }
            out[String(item[..<eq])] = String(item[item.index(after: eq)...])
        }
        return out
    }

    /// `k=v` flow variables: a value written as a JSON number or boolean keeps its type (`amount=8000` is a number),
    /// and a number keeps its text (`amount=12.00` stays 12.00: `JSON.Number`); anything else is the string as typed.
    public func variables(_ name: String) throws(Diagnostic) -> JSON.Object {
        JSON.Object(try pairs(name).mapValues(Self.variableValue))
    }

    /// A variable's value written as text (`--var`, a CSV cell): a JSON number or boolean keeps its type, anything else
    /// is the string as written.
    static func variableValue(_ text: String) -> JSON {
        if let number = JSON.Number(literal: text) { return .number(number) }
        return text == "true" || text == "false" ? .bool(text == "true") : .string(text)
    }

    /// An amount option (`--amount`), read by the one rule of amounts (`Amount.minorUnits`) as `notation` in
    /// `currency`: the minor units, or exit 64 naming the option, the value and the accepted forms.
    public func amount(
        _ name: String = "amount", notation: AmountNotation, currency: Currency?
    ) throws(Diagnostic) -> Int? {
        guard let text = string(name) else { return nil }
        return try Amount.parse(option: "--\(name)", text, notation: notation, currency: currency)
    }
}
