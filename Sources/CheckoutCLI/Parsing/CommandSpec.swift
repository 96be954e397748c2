import CheckoutKit

/// A command declared once: help, validation and "did you mean" are all derived from this value.
public struct CommandSpec: Sendable {
    public typealias Run = @Sendable (Invocation) async throws(Diagnostic) -> ExitCode

    public var name: String
    public var abstract: String
    public var discussion: String
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var subcommands: [CommandSpec]
    public var run: Run?

    public init(
        name: String, abstract: String, discussion: String = "", arguments: [ArgumentSpec] = [],
        options: [OptionSpec] = [], subcommands: [CommandSpec] = [], run: Run? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.run = run
    }
}

public struct ArgumentSpec: Sendable {
    public var name: String
    public var help: String
    public var optional: Bool
    /// The last argument may take every remaining word (`flow run A B dir/`).
    public var repeats: Bool

    public init(_ name: String, help: String, optional: Bool = false, repeats: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.repeats = repeats
    }

    /// As help shows it: `[NAME]`, `NAME...`.
    var usage: String {
        let shown = repeats ? name + "..." : name
        return optional ? "[\(shown)]" : shown
    }
}

public struct OptionSpec: Sendable {
    public var long: String
    public var short: Character?
    /// The placeholder in help (`FILE`, `SECONDS`); nil for a flag that takes no value.
    public var valueName: String?
    public var help: String
    public var defaultValue: String?
    /// When set, the value must be one of these.
    public var choices: [String]?
    /// May be given more than once (`--var a=1 --var b=2`).
    public var repeatable: Bool
    public var required: Bool

    public init(
        _ long: String, short: Character? = nil, value valueName: String? = nil, help: String,
        default defaultValue: String? = nil, choices: [String]? = nil, repeatable: Bool = false, required: Bool = false
    ) {
        self.long = long
        self.short = short
        self.valueName = valueName
        self.help = help
        self.defaultValue = defaultValue
        self.choices = choices
        self.repeatable = repeatable
        self.required = required
    }

    public var isFlag: Bool { valueName == nil }
}
