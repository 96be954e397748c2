import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// The command line as a user meets it: help, version, parsing errors and exit codes, through the built binary.
@Suite struct CommandLineTests {
    @Test func versionPrintsNameAndVersion() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["--version"], home: s.path)
        #expect(r.status == 0)
        // A build nobody stamped says so; Scripts/check-package checks a stamped one's version and commit.
        #expect(
            r.stdout
                == "checkout-driver \(DriverVersion.current) (a development build: Scripts/package stamps the commit)\n"
        )
    }

    @Test(arguments: [
        [], ["--help"], ["flow", "--help"], ["flow", "run", "--help"], ["sandbox", "serve", "-h"],
        ["help-me", "--help"],
    ])
    func helpAtEveryLevel(_ args: [String]) async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(args, home: s.path)
        if args.first == "help-me" {
            // An unknown command is a usage error even when --help follows it.
            #expect(r.status == 64)
            return
        }
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.contains("USAGE: checkout-driver"))
        #expect(r.stdout.contains("--format FORMAT"))
    }

    @Test func commandHelpListsItsOwnOptionsAndDefaults() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["sandbox", "serve", "--help"], home: s.path)
        #expect(r.stdout.contains("--port N"))
        #expect(r.stdout.contains("[default: 127.0.0.1]"))
        #expect(r.stdout.contains("latency"))  // the fault grammar comes from the emulator's own help text
        // The magic values too: each provider's scenarios, from the emulator's rules.
        #expect(r.stdout.contains("  3001-M  3DS redirect jacket, 1299.00 SEK: 3DS redirect"), "\(r.stdout)")
        #expect(r.stdout.contains("5100"))
    }

    @Test func unknownOptionSuggestsTheClosestOne() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--fromat", "json"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '--fromat'; did you mean '--format'?"))
        #expect(r.stdout.isEmpty)
    }

    @Test func unknownCommandSuggestsTheClosestOne() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flwo", "list"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown command 'flwo'"))
        #expect(r.stderr.contains("did you mean 'flow'?"))
    }

    @Test func invalidChoiceIsRejectedWithTheChoices() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "list", "--format=yaml"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("invalid value 'yaml' for --format"))
        #expect(r.stderr.contains("text, json, jsonl"))
    }

    @Test func bothOptionSpellingsWork() async throws {
        let s = try Scratch()
        let a = try await BinaryRunner.run(["flow", "list", "--format", "json"], home: s.path)
        let b = try await BinaryRunner.run(["--format=json", "flow", "list"], home: s.path)
        #expect(a.status == 0 && b.status == 0)
        #expect(a.stdout == b.stdout)
        #expect(a.stdout.contains("\"emulator-orders\""))
    }

    @Test func missingArgumentAndMissingValueAreUsageErrors() async throws {
        let s = try Scratch()
        let a = try await BinaryRunner.run(["flow", "run"], home: s.path)
        #expect(a.status == 64)
        #expect(a.stderr.contains("missing argument FLOW"))
        let b = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--timeout"], home: s.path)
        #expect(b.status == 64)
        #expect(b.stderr.contains("--timeout needs a value"))
        let c = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--timeout", "soon"], home: s.path)
        #expect(c.status == 64)
        #expect(c.stderr.contains("--timeout expects a duration"))
    }

    @Test func doubleDashEndsOptions() async throws {
        let s = try Scratch()
        // After `--`, "--odd.json" is a file name, not an option: the error is about the missing file.
        let r = try await BinaryRunner.run(["flow", "run", "--", "--odd.json"], home: s.path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("cannot read flow file --odd.json"))
    }

    @Test func groupWithoutSubcommandIsAUsageError() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow"], home: s.path)
        #expect(r.status == 64)
        #expect(
            r.stderr.contains(
                "needs a subcommand: run, replay, list, show, describe, ops, schema, validate, junit-merge"))
    }

    @Test func unknownBuiltinFlowSuggestsOne() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-order"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("did you mean 'emulator-orders'?"))
    }

    @Test func flowListNamesTheBuiltins() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "list"], home: s.path)
        #expect(r.status == 0)
        #expect(r.stdout.contains("emulator-orders"))
    }

    @Test func anUnknownEnvironmentIs78NamingTheKnownOnes() async throws {
        let r = try await BinaryRunner.run(["--env", "sandbx", "bahn", "intent", "pi_1"])
        #expect(r.status == 78, "\(r.all)")
        #expect(
            r.stderr.contains(
                "unknown environment 'sandbx'; did you mean 'sandbox'?: the known ones are local, sandbox"),
            "\(r.stderr)")
    }

    @Test func everyMissingVariableOfAFlowIsNamedAtOnce() async throws {
        let r = try await BinaryRunner.run(["--env", "sandbox", "flow", "run", "bahn-apple-pay"])
        #expect(r.status == 78, "\(r.all)")
        #expect(
            r.stderr.contains(
                "BAHN_API_KEY, BAHN_SIGNING_KEY, BAHN_WEBHOOK_SECRET are not set for environment 'sandbox'"),
            "\(r.stderr)")
    }

    /// Help says each default once: from the declaration's `default`, never again in the option's own words.
    @Test func helpSaysEachDefaultOnce() {
        func walk(_ spec: CommandSpec, _ path: [String]) -> [String] {
            let options = spec.options + (path.isEmpty ? GlobalOptions.specs : [])
            // Help prints `[default: …]` for an option with a default value: its own text saying so again ("… by
            // default", "[default: …]") is the second time.
            let twice = options.filter { $0.defaultValue != nil && $0.help.lowercased().contains("default") }
                .map { "\(path.joined(separator: " ")) --\($0.long): \($0.help)" }
            return twice + spec.subcommands.flatMap { walk($0, path + [$0.name]) }
        }
        #expect(walk(CheckoutDriver.root, []).isEmpty)
        let help = Help.render(
            CashAppCommands.spec.subcommands.first { $0.name == "pay" }!, path: ["cashapp", "pay"],
            globalOptions: GlobalOptions.specs)
        #expect(help.components(separatedBy: "[default: 10.00]").count == 2, "\(help)")
    }

    @Test func helpCommandIsTheCommandsHelpAndListsEveryExitCode() async throws {
        let help = try await BinaryRunner.run(["help", "bahn", "confirm"])
        let flag = try await BinaryRunner.run(["bahn", "confirm", "--help"])
        #expect(help.status == 0 && help.stdout == flag.stdout, "\(help.all)")
        let root = try await BinaryRunner.run(["--help"])
        for code in [
            "0 ok", "1 flow failed", "64 usage", "65 bad input data", "69 service unavailable", "70 internal error",
            "74 an output could not be written", "75 outcome", "78 configuration missing", "130/143",
            "141 stdout's reader closed the pipe",
        ] {
            #expect(root.stdout.contains(code), "\(code) in --help")
        }
    }
}
