import CheckoutKit
import Foundation

public enum OutputFormat: String, CaseIterable, Sendable { case text, json, jsonl }

/// Options every command accepts, anywhere on the command line (docs/architecture.md, "Command line").
enum GlobalOptions {
    static let specs: [OptionSpec] = GlobalSettings.inputs.compactMap(\.option)
}

/// The global options of one invocation, typed, in groups as SwiftPM keeps its own: where the configuration comes from,
/// the state file, what is printed and written, and how long to wait.
struct GlobalSettings: CommandInput {
    /// `--env`, `--config`, `--env-file`, `--set`.
    struct ConfigOptions: Sendable {
        var environment: String?
        var configPath: String?
        /// `--env-file PATH`: a `.env` file beside `./.env`.
        var envFile: String?
        /// `--set NAME=VALUE`: configuration from the command line.
        var configurationFlags: [String: String] = [:]
        /// `--cacert FILE`: `--set CHECKOUT_DRIVER_CACERT=FILE` by its curl name.
        var caBundle: String?
    }

    /// `--session`, `--continue`, `--run`, `--force`.
    struct StateOptions: Sendable {
        var sessionPath: String?
        /// `--continue`: a whole flow works on the chain, not in a run scope of its own.
        var continueChain = false
        /// `--run ID`: the run scope a single step works in.
        var runScope: String?
        /// `--force`: pass over open outcomes in the state file (see `RunServices.force`).
        var force = false
    }

    /// `--format`, `-v`, `-q`, `--record`, `--junit`, `--html`, `--metrics`, `--ci`.
    struct OutputOptions: Sendable {
        var format = OutputFormat.text
        var verbose = false
        var quiet = false
        var recordPath: String?
        /// `--record DIR/` (a trailing slash, or a directory that exists): a HAR file per flow in it, named after the
        /// flow.
        var recordsDirectory = false
        var junitPath: String?
        /// `--html FILE`: the page a person attaches to a ticket.
        var htmlPath: String?
        /// `--metrics FILE.prom`: the run's figures in Prometheus' text format (`Metrics`).
        var metricsPath: String?
        /// `--ci NAME`: a CI service's own annotations, groups and summary besides the output (`GitHubActions`).
        var ci = CIService.auto

        /// Whether the run speaks GitHub Actions' workflow commands: read once (the environment is a dictionary made
        /// afresh on each read of it, and a batch asks for each run).
        var github = false
    }

    /// `--timeout`, `--deadline`.
    struct TimeOptions: Sendable {
        var timeout: Double = 30
        var deadline: Double?
    }

    var config = ConfigOptions()
    var state = StateOptions()
    var output = OutputOptions()
    var time = TimeOptions()

    static let inputs: [Input<GlobalSettings>] = [
        .value(
            "env", \.config.environment, value: "NAME",
            help:
                "Environment: local (the embedded emulator), sandbox, or a profile from the config file. Also CHECKOUT_DRIVER_ENV."
        ),
        .value(
            "config", \.config.configPath, value: "FILE",
            help: "Config file with profiles [default: $XDG_CONFIG_HOME/checkout-driver/config.json]."),
        .value(
            "env-file", \.config.envFile, value: "PATH",
            help: "A .env file (KEY=value lines) read after ./.env; its values win over it."),
        .pairs(
            "set", \.config.configurationFlags, value: "NAME=VALUE",
            help: "Set a configuration variable (beats the environment, .env and profiles)."),
        .value(
            "cacert", \.config.caBundle, value: "FILE",
            help:
                "Trust the CA certificates in FILE (PEM) instead of the system's, as curl's --cacert (a proxy's, a private sandbox's)."
        ),
        .value(
            "session", \.state.sessionPath, value: "FILE",
            help: "State file chaining invocations [default: $XDG_STATE_HOME/checkout-driver/<env>/state.json]."),
        .choice("format", \.output.format, value: "FORMAT", help: "Output format.", default: .text),
        .flag("verbose", short: "v", \.output.verbose, help: "Trace every request and response (redacted) to stderr."),
        .flag("quiet", short: "q", \.output.quiet, help: "Print only errors and results."),
        .seconds("timeout", \.time.timeout, help: "Timeout for each HTTP exchange.", default: 30),
        .seconds("deadline", \.time.deadline, help: "Time budget for the whole flow."),
        .value(
            "record", \.output.recordPath, value: "FILE.har",
            help: "Record every exchange (redacted) as HAR 1.2; DIR/ for a file per flow."),
        .value("junit", \.output.junitPath, value: "FILE", help: "Write a JUnit XML report."),
        .value(
            "html", \.output.htmlPath, value: "FILE",
            help: "Write one self-contained HTML page of the run: steps, timeline, redacted exchanges, money."),
        .value(
            "metrics", \.output.metricsPath, value: "FILE.prom",
            help: "Write the run's figures in Prometheus' text format, at once (node_exporter's textfile collector)."),
        .choice(
            "ci", \.output.ci, value: "NAME",
            help:
                "Also speak a CI service's language: github (annotations, groups, job summary; auto when GITHUB_ACTIONS=true) or none.",
            default: .auto),
        .flag(
            "continue", \.state.continueChain,
            help:
                "A whole flow continues the state file's chain (its session, cart, checkout) instead of a scope of its own."
        ),
        .identifier(
            "run", \.state.runScope,
            help: "A single step in the state file's scope of that run (as settle commands name it)."),
        .flag(
            "force", \.state.force,
            help: "Send a payment although the state file keeps an earlier one's outcome open (settled by other means)."
        ),
    ]

    init() {}

    init(_ invocation: Invocation) throws(Diagnostic) {
        self = try Self.read(invocation)
        if let bundle = config.caBundle { config.configurationFlags[NetworkOptions.caBundleVariable] = bundle }
        output.github = output.ci.resolved(ProcessInfo.processInfo.environment) == .github
        if let recordPath = output.recordPath {
            var isDirectory: ObjCBool = false
            output.recordsDirectory =
                recordPath.hasSuffix("/")
                || (FileManager.default.fileExists(atPath: recordPath, isDirectory: &isDirectory)
                    && isDirectory.boolValue)
        }
        if output.verbose && output.quiet {
            throw invocation.usage("--verbose and --quiet contradict each other; pick one")
        }
    }
}
