import CheckoutKit
import Foundation

public enum OutputFormat: String, Sendable { case text, json, jsonl }

/// Options every command accepts, anywhere on the command line (docs/architecture.md, "Command line").
enum GlobalOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(
            "env", value: "NAME",
            help:
                "Environment: local (the embedded emulator), sandbox, or a profile from the config file. Also CHECKOUT_DRIVER_ENV.",
            default: nil),
        OptionSpec(
            "config", value: "FILE",
            help: "Config file with profiles [default: $XDG_CONFIG_HOME/checkout-driver/config.json]."),
        OptionSpec(
            "env-file", value: "PATH", help: "A .env file (KEY=value lines) read after ./.env; its values win over it."),
        OptionSpec(
            "set", value: "NAME=VALUE",
            help: "Set a configuration variable (beats the environment, .env and profiles).",
            repeatable: true),
        OptionSpec(
            "session", value: "FILE",
            help: "State file chaining invocations [default: $XDG_STATE_HOME/checkout-driver/<env>/state.json]."),
        OptionSpec(
            "format", value: "FORMAT", help: "Output format.", default: "text", choices: ["text", "json", "jsonl"]),
        OptionSpec("verbose", short: "v", help: "Trace every request and response (redacted) to stderr."),
        OptionSpec("quiet", short: "q", help: "Print only errors and results."),
        OptionSpec("timeout", value: "SECONDS", help: "Timeout for each HTTP exchange.", default: "30"),
        OptionSpec("deadline", value: "SECONDS", help: "Time budget for the whole flow."),
        OptionSpec(
            "record", value: "FILE.har", help: "Record every exchange (redacted) as HAR 1.2; DIR/ for a file per flow."),
        OptionSpec("junit", value: "FILE", help: "Write a JUnit XML report."),
        OptionSpec(
            "html", value: "FILE",
            help: "Write one self-contained HTML page of the run: steps, timeline, redacted exchanges, money."),
        OptionSpec(
            "continue",
            help:
                "A whole flow continues the state file's chain (its session, cart, checkout) instead of a scope of its own."
        ),
        OptionSpec(
            "run", value: "ID",
            help: "A single step in the state file's scope of that run (as settle commands name it)."),
        OptionSpec(
            "force",
            help: "Send a payment although the state file keeps an earlier one's outcome open (settled by other means)."
        ),
    ]
}

/// The global options of one invocation, typed, in groups as SwiftPM keeps its own: where the configuration comes from,
/// the state file, what is printed and written, and how long to wait.
struct GlobalSettings: Sendable {
    /// `--env`, `--config`, `--env-file`, `--set`.
    struct ConfigOptions: Sendable {
        var environment: String?
        var configPath: String?
        /// `--env-file PATH`: a `.env` file beside `./.env`.
        var envFile: String?
        /// `--set NAME=VALUE`: configuration from the command line.
        var configurationFlags: [String: String]
    }

    /// `--session`, `--continue`, `--run`, `--force`.
    struct StateOptions: Sendable {
        var sessionPath: String?
        /// `--continue`: a whole flow works on the chain, not in a run scope of its own.
        var continueChain: Bool
        /// `--run ID`: the run scope a single step works in.
        var runScope: String?
        /// `--force`: pass over open outcomes in the state file (see `RunServices.force`).
        var force: Bool
    }

    /// `--format`, `-v`, `-q`, `--record`, `--junit`, `--html`.
    struct OutputOptions: Sendable {
        var format: OutputFormat
        var verbose: Bool
        var quiet: Bool
        var recordPath: String?
        /// `--record DIR/` (a trailing slash, or a directory that exists): a HAR file per flow in it, named after the
        /// flow.
        var recordsDirectory: Bool
        var junitPath: String?
        /// `--html FILE`: the page a person attaches to a ticket.
        var htmlPath: String?
    }

    /// `--timeout`, `--deadline`.
    struct TimeOptions: Sendable {
        var timeout: Double
        var deadline: Double?
    }

    var config: ConfigOptions
    var state: StateOptions
    var output: OutputOptions
    var time: TimeOptions

    init(_ invocation: Invocation) throws(Diagnostic) {
        config = ConfigOptions(
            environment: invocation.string("env"), configPath: invocation.string("config"),
            envFile: invocation.string("env-file"), configurationFlags: try invocation.pairs("set"))
        let recordPath = invocation.string("record")
        var isDirectory: ObjCBool = false
        let recordsDirectory =
            recordPath.map {
                $0.hasSuffix("/")
                    || (FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && isDirectory.boolValue)
            } ?? false
        output = OutputOptions(
            format: OutputFormat(rawValue: invocation.string("format") ?? "text") ?? .text,
            verbose: invocation.flag("verbose"), quiet: invocation.flag("quiet"), recordPath: recordPath,
            recordsDirectory: recordsDirectory, junitPath: invocation.string("junit"),
            htmlPath: invocation.string("html"))
        time = TimeOptions(
            timeout: try invocation.seconds("timeout") ?? 30, deadline: try invocation.seconds("deadline"))
        state = StateOptions(
            sessionPath: invocation.string("session"), continueChain: invocation.flag("continue"),
            runScope: try invocation.identifier("run"), force: invocation.flag("force"))
        if output.verbose && output.quiet {
            throw invocation.usage("--verbose and --quiet contradict each other; pick one")
        }
    }
}
