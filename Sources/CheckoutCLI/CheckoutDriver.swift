import CheckoutKit
import Foundation

/// The command line's entry point. The executable hands it the arguments and exits with its code.
public enum CheckoutDriver {
    /// The build's version (stamped by Scripts/package), else the release's.
    public static let version = DriverVersion.stamped ?? DriverVersion.current

    /// The process's one redactor: the run environment teaches it the configured secrets, the token reader
    /// the token's, and every output — reporters, files, the error printer below — masks through it.
    static let redactor = Redactor()

    static var root: CommandSpec {
        CommandSpec(
            name: "checkout-driver",
            abstract: "Drive native-app wallet checkouts against payment sandboxes — no phone needed.",
            discussion: """
                With no configuration every command runs against the built-in sandbox emulator (--env local).
                Exit codes: 0 ok, 1 flow failed, 64 usage, 65 bad input data, 69 service unavailable,
                70 internal error, 74 an output could not be written, 75 outcome of a money-moving step unknown
                (the message says how to settle it; also a payment refused while an earlier one is open),
                78 configuration missing, 130/143 a run interrupted (SIGINT/SIGTERM; sandbox serve and bahn listen stop
                with 0), 141 stdout's reader closed the pipe (| head). `help COMMAND` = COMMAND --help.
                """,
            subcommands: [FlowCommands.spec] + providerCommands.map(\.commands)
                + [
                    ApplePayCommands.spec, SandboxCommands.spec, StateCommands.spec, DoctorCommands.spec,
                    MonitorCommands.spec, CompletionCommands.spec, ManualCommands.spec,
                ])
    }

    /// Each provider's command group, in `Providers.all`'s order: a new provider adds its line here
    /// (`ProviderListTests` fails when a provider has none).
    static var providerCommands: [(provider: Provider, commands: CommandSpec)] {
        [
            (.bahn, BahnCommands.spec), (.centra, CentraCommands.spec), (.cashApp, CashAppCommands.spec),
            (.braintree, BraintreeCommands.spec),
        ]
    }

    /// Parses, runs, and prints any error — the one place where diagnostics reach the user.
    public static func main(arguments: [String]) async -> Int32 {
        // A closed pipe on stdout must be seen (EPIPE: the reader went, 141), not a signal that kills the process.
        signal(SIGPIPE, SIG_IGN)
        let console = Console.shared
        StateStore.notes.withLock { $0 = { console.err($0) } }
        let code = await run(arguments, console: console)
        // A batch appended its writes to the state file as records: at rest it is plain JSON again.
        StateStore.compactFiles()
        // The reader of standard output went (`… | head -1`): quietly, with SIGPIPE's status, as other tools end.
        if code == ExitCode.ok.rawValue && console.stdoutReaderGone { return ExitCode.readerGone.rawValue }
        if code == ExitCode.ok.rawValue, let reason = console.outputFailure {
            report(
                .ioError(
                    "cannot write to standard output: \(reason)",
                    hint: "check where the output goes: a full disk, a read-only file, a device that refuses writes"),
                console: console)
            return ExitCode.ioError.rawValue
        }
        return code
    }

    /// The command line as the tool reads it, run or not: what `main` acts on (and what the fuzzer feeds).
    public static func parse(_ arguments: [String]) throws(Diagnostic) -> ParseResult {
        try Parser(root: root, globalOptions: GlobalOptions.specs).parse(arguments)
    }

    private static func run(_ arguments: [String], console: Console) async -> Int32 {
        let parser = Parser(root: root, globalOptions: GlobalOptions.specs)
        // `help bahn confirm` is `bahn confirm --help`.
        let arguments = arguments.first == "help" ? Array(arguments.dropFirst()) + ["--help"] : arguments
        do {
            switch try parser.parse(arguments) {
            case .version:
                if let format = requestedFormat(arguments), format != .text {
                    // (commit null: a development build, which nobody stamped, or one built outside git.)
                    let document: JSON = [
                        "name": "checkout-driver", "version": .string(version),
                        "commit": DriverVersion.commit.map(JSON.string) ?? .null,
                    ]
                    console.out(document.serialized(pretty: format == .json))
                } else {
                    console.out("checkout-driver \(DriverVersion.described)")
                }
                return 0
            case .help(let command, let path):
                console.out(Help.render(command, path: path, globalOptions: GlobalOptions.specs))
                return 0
            case .run(let command, let invocation):
                return try await command.run!(invocation).rawValue
            }
        } catch {
            report(error, console: console)
            // In GitHub Actions the error is also an annotation on the run's page (a flow's stand at its step: the
            // suite's report made them).
            if CIService(rawValue: requestedOption("ci", arguments) ?? "auto")?.resolved(
                ProcessInfo.processInfo.environment) == .github
            {
                console.err(
                    GitHubActions(redactor: redactor).commandError(
                        error, title: "checkout-driver: exit \(error.code.rawValue)"))
            }
            // Asked for JSON, a script reads stdout: the error comes there too, as a document, unless the run's own
            // document (which carries its error) already went out.
            if let format = requestedFormat(arguments), format != .text, !console.wroteOutcome {
                let document: JSON = [
                    "error": [
                        "message": .string(redactor.text(error.message)),
                        "hint": error.hint.map { .string(redactor.text($0)) } ?? .null,
                        "exitCode": .number(Double(error.code.rawValue)),
                    ]
                ]
                console.out(document.serialized(pretty: format == .json))
            }
            return error.code.rawValue
        }
    }

    /// `--format` as written, even when the rest of the command line did not parse (a usage error in JSON mode).
    static func requestedFormat(_ arguments: [String]) -> OutputFormat? {
        requestedOption("format", arguments).flatMap(OutputFormat.init(rawValue:))
    }

    /// A global option's value as written (the last one), whether or not the rest of the command line parsed.
    static func requestedOption(_ long: String, _ arguments: [String]) -> String? {
        var value: String?
        for (i, argument) in arguments.enumerated() {
            if argument == "--" { break }
            if argument.hasPrefix("--\(long)=") { value = String(argument.dropFirst(long.count + 3)) }
            if argument == "--\(long)", i + 1 < arguments.count { value = arguments[i + 1] }
        }
        return value
    }

    static func report(_ error: Diagnostic, console: Console) {
        // Messages are built from configuration and responses; the redactor is the last line of defence.
        console.err("error: " + redactor.text(error.message))
        if let hint = error.hint { console.err("hint: " + redactor.text(hint)) }
    }
}
