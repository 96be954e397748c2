import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver sandbox serve`: the emulator as a standalone server; the commands that read and drive a running one
/// are in SandboxCommands+Reads.swift.
enum SandboxCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "sandbox", abstract: "Run the sandbox emulator, and read and drive a running one.",
            subcommands: [serve, ledger, requests, events, trigger])
    }

    static let serve = CommandSpec(
        name: "serve", abstract: "Serve the sandbox emulator until interrupted (Ctrl-C).",
        discussion: """
            Prints its base URL on the first line of stdout, then serves every emulated provider plus
            GET /_sandbox/health, GET /_sandbox/ledger and GET /_sandbox/requests.
            On 127.0.0.1 it announces itself in $XDG_STATE_HOME/checkout-driver/local/emulator.json: while it runs,
            --env local commands use it (instead of an emulator of their own), so separate invocations chain.

            SCENARIOS (magic values):
            \(Emulator.scenariosHelp)

            FAULT INJECTION (--faults):
            \(FaultSpec.help)
            """,
        input: ServeInput.self
    ) { input, invocation throws(Diagnostic) in
        let port = input.port ?? 0
        var faults = FaultSpec.none
        if let text = input.faults {
            do { faults = try FaultSpec(parsing: text) } catch {
                throw invocation.usage("--faults: \(error)")
            }
        }
        let settings = try GlobalSettings(invocation)
        let host = input.host ?? "127.0.0.1"
        let environment = ProcessInfo.processInfo.environment
        // On loopback it announces itself: `--env local` runs then use this emulator, and chain through its state. Two
        // at once would leave runs guessing which one chains: a second one refuses while the first is alive.
        let announcing = host == "127.0.0.1" && !input.noAnnounce
        if announcing, let other = LocalEmulatorFile.running(processEnvironment: environment) {
            throw .unavailable(
                "another sandbox serve is announced for --env local runs: \(other.url) (pid \(other.pid))",
                hint: "stop that one first, or start this one with --no-announce (runs will then not use it)")
        }
        if announcing, let stale = LocalEmulatorFile.withdrawStale(processEnvironment: environment) {
            Console.shared.err(
                "note: replacing the announcement of a sandbox serve that is gone: \(stale.url) (pid \(stale.pid)); what it kept in memory is lost"
            )
        }
        let emulator: Emulator
        do {
            emulator = try Emulator(host: host, port: UInt16(port), faults: faults, webhookURL: input.webhookURL)
        } catch {
            throw .unavailable(
                "cannot start the emulator: \(error)", hint: "pick another --port, or 0 for any free port")
        }
        if input.cashAppApproval == .manual { emulator.cashapp.setApproval(.manual) }
        emulator.start()
        onTerminationSignals { emulator.shutdown() }
        Console.shared.whenReaderGone { emulator.shutdown() }
        if settings.output.format == .text {
            Console.shared.out(emulator.baseURL)
        } else {
            Console.shared.out(
                JSON.object([
                    "event": "serving", "url": .string(emulator.baseURL), "pid": .number(Double(getpid())),
                    "announced": .bool(announcing),
                ]).serialized())
        }
        let announced = announcing
        if announced { try LocalEmulatorFile.announce(url: emulator.baseURL, processEnvironment: environment) }
        emulator.waitUntilShutdown()
        if announced { LocalEmulatorFile.withdraw(processEnvironment: environment) }
        return .ok
    }

    /// `sandbox serve`: where to listen, what faults to inject, where webhooks go, and how Cash App decides.
    struct ServeInput: CommandInput {
        /// `--cashapp-approval`, as `CashAppRules.Approval` names its cases.
        enum CashAppApproval: String, CaseIterable, Sendable { case auto, manual }

        var host: String?
        var port: Int?
        /// `--faults SPEC` as typed: `FaultSpec(parsing:)` reads it.
        var faults: String?
        var webhookURL: String?
        var noAnnounce = false
        var cashAppApproval = CashAppApproval.auto

        static let inputs: [Input<ServeInput>] = [
            .value("host", \.host, value: "ADDRESS", help: "Address to listen on.", default: "127.0.0.1"),
            .integer("port", \.port, range: 0...65535, help: "Port to listen on; 0 picks a free one.", default: "0"),
            .value("faults", \.faults, value: "SPEC", help: "Inject faults (see below)."),
            // The emulator posts webhooks with its own plain HTTP/1.1 client (never libcurl): http:// only.
            .url("webhook-url", \.webhookURL, help: "Where emulated providers POST their webhooks.", schemes: ["http"]),
            .flag("no-announce", \.noAnnounce, help: "Do not offer this emulator to --env local runs."),
            .choice(
                "cashapp-approval", \.cashAppApproval, value: "MODE",
                help:
                    "How Cash App customer requests are decided: auto (on the 2nd poll) or manual (`cashapp approve|decline`).",
                default: .auto),
        ]
    }
}
