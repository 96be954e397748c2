import CheckoutKit
import Foundation

/// `checkout-driver state show | clear`: the state file that chains invocations, seen masked, and reset safely.
enum StateCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "state", abstract: "Show or clear the state file (--session, or the environment's).",
            subcommands: [show, clear])
    }

    /// `state show | clear`: all providers, or `--provider P`'s sections only.
    struct ProviderInput: CommandInput {
        var provider: String?

        static let inputs: [Input<ProviderInput>] = [
            .value(
                "provider", \.provider, value: "P", help: "Only this provider's sections.",
                choices: Providers.all.map(\.name))
        ]
    }

    static let show = CommandSpec(
        name: "show", abstract: "Print what the state file holds, credentials masked.",
        discussion:
            "The chain's sections, each run's, the open outcomes of money calls and the spent single-use values.",
        input: ProviderInput.self
    ) { input, invocation throws(Diagnostic) in
        let environment = try RunEnvironment.prepare(invocation, startingEmulator: false)
        defer { environment.shutdown() }
        let store = environment.state
        var document = try store.masked()
        if let provider = input.provider {
            var only: JSON.Object = [:]
            only[provider] = document[provider]
            let runs = (document["runs"]?.objectValue ?? [:]).compactMapValues { $0[provider] }
            if !runs.isEmpty { only["runs"] = .object(runs.mapValues { [provider: $0] }) }
            let open = (document["openOutcomes"]?.objectValue ?? [:]).filter {
                $0.value["provider"]?.stringValue == provider
            }
            if !open.isEmpty { only["openOutcomes"] = .object(open) }
            document = .object(only)
        }
        let open = try store.openOutcomes(provider: input.provider).count
        if environment.settings.output.format == .text {
            let exists = FileManager.default.fileExists(atPath: store.path)
            Console.shared.out(
                "state file \(store.path)" + (exists ? "" : " (none yet)")
                    + (open > 0 ? " · \(open) money outcome\(open == 1 ? "" : "s") unknown" : ""))
            Console.shared.out(document.serialized(pretty: true))
        } else {
            Console.shared.out(
                JSON.object(["file": .string(store.path), "state": document, "openOutcomes": JSON(open)])
                    .serialized(pretty: environment.settings.output.format == .json))
        }
        return .ok
    }

    static let clear = CommandSpec(
        name: "clear",
        abstract: "Reset the state file (or a provider's sections); refused while a money outcome is unknown.",
        discussion: """
            Removes the chain's and every run's sections (a provider's only, with --provider). The record of spent
            single-use tokens and nonces stays: it is what refuses one that already paid. While the outcome of a money
            call is unknown (exit 75 left it open) the reset is refused with 75 and the commands that settle it; a run
            still going is refused with 64. --force clears anyway, open outcomes included (you settled them yourself).
            """,
        input: ProviderInput.self
    ) { input, invocation throws(Diagnostic) in
        let environment = try RunEnvironment.prepare(invocation, startingEmulator: false)
        defer { environment.shutdown() }
        let store = environment.state
        guard FileManager.default.fileExists(atPath: store.path) else {
            if environment.settings.output.format == .text {
                Console.shared.out("state file \(store.path): nothing to clear (none yet)")
            } else {
                Console.shared.out(
                    JSON.object(["file": .string(store.path), "cleared": []]).serialized(
                        pretty: environment.settings.output.format == .json))
            }
            return .ok
        }
        // A single step or a --continue flow holds the chain while it sends: what it keeps for its outcome (an
        // idempotency key, a request id) must not go from under it. Refused at once (69, naming the holder) unless
        // --force.
        let chain = environment.settings.state.force ? nil : try store.holdChain(wait: 0, command: "state clear")
        let removed = try withExtendedLifetime(chain) { () throws(Diagnostic) -> [String] in
            try store.clear(provider: input.provider, force: environment.settings.state.force)
        }
        if environment.settings.output.format == .text {
            Console.shared.out(
                "state file \(store.path): "
                    + (removed.isEmpty ? "nothing to clear" : "cleared \(removed.joined(separator: ", "))")
                    + "; the record of spent single-use values is kept")
        } else {
            Console.shared.out(
                JSON.object(["file": .string(store.path), "cleared": .array(removed.map(JSON.string))])
                    .serialized(pretty: environment.settings.output.format == .json))
        }
        return .ok
    }
}
