import Foundation

/// Resolved configuration for one run: which environment, and every variable's value.
///
/// Precedence, highest first: command-line flags (`--set NAME=VALUE`); for `--env local`, the embedded emulator's own
/// endpoints and test credentials; the process environment; `.env` in the working directory; the
/// profile's variables from the config file; built-in defaults.
public struct Configuration: Sendable {
    public enum Kind: String, Sendable { case local, sandbox }

    /// A variable the driver knows about (docs/architecture.md, "Configuration variables").
    public struct Variable: Sendable {
        public var name: String
        public var meaning: String
        public var defaultValue: String?
        /// Every variable is a secret except base URLs and the environment selector.
        public var isSecret: Bool
        /// The variable holds a PEM key or a path to one: a path is no secret (the file's contents are), so messages
        /// name it.
        public var pemOrPath = false

        init(name: String, meaning: String, defaultValue: String?, isSecret: Bool, pemOrPath: Bool = false) {
            self.name = name
            self.meaning = meaning
            self.defaultValue = defaultValue
            self.isSecret = isSecret
            self.pemOrPath = pemOrPath
        }
    }

    /// The driver's own variables, then each provider's (declared in its folder, `Provider.variables`).
    public static let variables: [Variable] =
        [
            .init(
                name: "CHECKOUT_DRIVER_ENV", meaning: "environment or profile when --env is absent",
                defaultValue: "local", isSecret: false),
            .init(
                name: "EMULATOR_URL", meaning: "a standalone `sandbox serve` (raw emulator flows)", defaultValue: nil,
                isSecret: false),
            .init(
                name: NetworkOptions.caBundleVariable,
                meaning:
                    "a CA bundle (PEM) trusted instead of the system's, as --cacert (a proxy's or a private sandbox's CA)",
                defaultValue: nil, isSecret: false),
        ] + Providers.all.flatMap(\.variables)

    /// The environment or profile name the user chose.
    public var environment: String
    public var kind: Kind
    private var values: [String: String]
    /// Where each value came from ("flag", "environment", ".env", "profile staging", "emulator", "default").
    private var sources: [String: String]
    /// A one-line description for the "environment: …" line every run prints.
    public var summary: String

    public init(
        environment: String, kind: Kind, values: [String: String], sources: [String: String] = [:],
        summary: String? = nil
    ) {
        self.environment = environment
        self.kind = kind
        self.values = values
        self.sources = sources
        self.summary = summary ?? environment
    }

    public func value(_ name: String) -> String? { values[name].flatMap { $0.isEmpty ? nil : $0 } }
    public func source(of name: String) -> String? { sources[name] }

    public mutating func set(_ name: String, _ value: String, source: String) {
        values[name] = value
        sources[name] = source
    }

    /// The values of every secret variable, for the redactor. Values of variables the driver doesn't know
    /// are treated as secrets too unless they look like URLs.
    public var secretValues: [String] {
        values.compactMap { name, value in
            let known = Self.variablesByName[name]
            // A key's path is no secret (its file is): an error that cannot read it names it.
            if let known, known.pemOrPath, !Bytes.occurs(Self.pemBegin, in: Array(value.utf8)) { return nil }
            let secret = known?.isSecret ?? !(value.hasPrefix("http://") || value.hasPrefix("https://"))
            return secret ? value : nil
        }
    }

    /// (Asked for each run's settle commands: the table made once, the PEM looked for as bytes, not through
    /// `NSString`.)
    private static let variablesByName = Dictionary(uniqueKeysWithValues: variables.map { ($0.name, $0) })
    private static let pemBegin = Array("-----BEGIN".utf8)

    /// The values that are not secrets (base URLs, the environment selector): what a recording keeps of the
    /// configuration, so that a replay sends its requests to the same places.
    public var publicValues: [String: String] {
        let secret = Set(secretValues)
        return values.filter { !$0.value.isEmpty && !secret.contains($0.value) }
    }

    /// The error for a variable the run needs and does not have (exit 78).
    public func missing(_ name: String, neededBy: String) -> Diagnostic {
        .configuration(
            "\(name) is not set for environment '\(environment)' (needed by \(neededBy))",
            hint:
                "export \(name)=…, put it in ./.env or in the profile's \"variables\" in the config file; --env local needs none"
        )
    }

    /// A variable that goes into a header (an API key, a token): one line, or exit 78 naming it (see HeaderSafety).
    public func headerValue(_ name: String) throws(Diagnostic) -> String? {
        guard let value = value(name) else { return nil }
        if let problem = HeaderSafety.problem(value) {
            throw .configuration(
                "configuration variable \(name) \(problem), which cannot go into a header; nothing was sent",
                hint: "give \(name) a one-line value (--set, the environment, .env or the profile)")
        }
        return value
    }

    /// Stops the run before any request when a variable is missing.
    /// Every one of `names` that is not set, all at once (a user should not discover them one run at a time).
    public func require(_ names: [String], for purpose: String) throws(Diagnostic) {
        let unset = names.filter { value($0) == nil }
        if !unset.isEmpty { throw missing(unset, neededBy: [purpose]) }
    }

    /// The variables that are not set, named together with what needs them.
    public func missing(_ names: [String], neededBy purposes: [String]) -> Diagnostic {
        guard names.count > 1 else { return missing(names[0], neededBy: purposes.joined(separator: ", ")) }
        return .configuration(
            "\(names.joined(separator: ", ")) are not set for environment '\(environment)' (needed by \(purposes.joined(separator: ", ")))",
            hint:
                "export each (NAME=…), put them in ./.env or in the profile's \"variables\" in the config file; --env local needs none"
        )
    }
}
