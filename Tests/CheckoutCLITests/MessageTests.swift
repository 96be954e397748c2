import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// Messages that help: each names the thing to fix where it is, says it once, and never shows what is not so.
@Suite struct MessageTests {
    /// A key file that cannot be read is named by its path (a path is no secret) before the first step; a PEM given
    /// inline stays masked.
    @Test func aKeyFileIsNamedByItsPathBeforeTheFirstStep() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        var env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        env["BAHN_SIGNING_KEY"] = s.path + "/missing/key.pem"
        let missing = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--env", "sandbox"], home: s.path, environment: env)
        #expect(missing.status == 78, "\(missing.all)")
        #expect(
            missing.stderr.contains(
                "error: cannot read BAHN_SIGNING_KEY's file \(s.path)/missing/key.pem: No such file or directory"),
            "\(missing.stderr)")
        #expect(!missing.stdout.contains("make-token"), "refused before the first step: \(missing.stdout)")
        #expect(emulator.receivedRequests().isEmpty)
        let validate = try await BinaryRunner.run(
            ["flow", "validate", "bahn-apple-pay", "--env", "sandbox"], home: s.path, environment: env)
        #expect(
            validate.status == 78 && validate.stderr.contains("cannot read BAHN_SIGNING_KEY's file"), "\(validate.all)")

        env["BAHN_SIGNING_KEY"] = "-----BEGIN PRIVATE KEY-----\nnot-a-key-secret-material\n-----END PRIVATE KEY-----"
        let inline = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--env", "sandbox"], home: s.path, environment: env)
        #expect(
            inline.status == 78 && inline.stderr.contains("error: BAHN_SIGNING_KEY is not a usable private key"),
            "\(inline.all)")
        #expect(!inline.all.contains("not-a-key-secret-material"), "an inline PEM is never shown")
    }

    /// `cashapp pay` at the decline amount says what happened, never a PENDING beside the decline.
    @Test func aDeclineIsNotShownPending() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["cashapp", "pay", "--amount", "13.13", "--poll-interval", "0.02"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(!r.stdout.contains("PENDING") && r.stdout.contains("sent to Cash App"), "\(r.stdout)")
        #expect(r.stderr.contains("error: the customer declined the payment in Cash App"), "\(r.stderr)")
    }

    /// Two includes of one flow are told apart by the include steps; a capture of an included flow that replaces a
    /// variable another part declares is warned about; an unknown variable is named with its file and path.
    @Test func includesAndVariablesAreNamedWhereTheyAre() async throws {
        let s = try Scratch()
        let twice = try s.write(
            "twice.json",
            #"{"name": "twice", "steps": [{"include": "emulator-orders"}, {"include": "emulator-orders"}]}"#)
        let duplicate = try await BinaryRunner.run(["flow", "validate", twice], home: s.path)
        #expect(duplicate.status == 65, "\(duplicate.all)")
        #expect(
            duplicate.stderr.contains(
                "\(twice): $.steps[1].name: duplicate step name 'health' ($.steps[0] (include emulator-orders): $.steps[0] and $.steps[1] (include emulator-orders): $.steps[0])"
            ), "\(duplicate.stderr)")

        let captured = try s.write(
            "captured.json",
            #"""
            {"name": "captured", "vars": {"intent": "pi_x"},
             "steps": [{"include": "bahn-apple-pay"}, {"name": "read", "use": "bahn.getIntent", "with": {"intent": "${vars.intent}"}}]}
            """#)
        let warned = try await BinaryRunner.run(["flow", "validate", captured], home: s.path)
        #expect(warned.status == 0, "\(warned.all)")
        #expect(
            warned.stderr.contains(
                "warning: \(captured): $.steps[0] (include bahn-apple-pay): $.steps[1] (step 'create-intent') captures 'intent', which this flow's $.vars.intent declares"
            ), "\(warned.stderr)")
        let quiet = try await BinaryRunner.run(["flow", "validate", captured, "-q"], home: s.path)
        #expect(!quiet.stderr.contains("warning"), "\(quiet.stderr)")
        // The other way round: this flow's own step captures a variable the included flow declares (its amount).
        let shadowed = try s.write(
            "shadowed.json",
            #"""
            {"name": "shadowed", "steps": [{"name": "grab", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "capture": {"amount": "json.status"}},
                                           {"include": "bahn-apple-pay"}]}
            """#)
        let shadowing = try await BinaryRunner.run(["flow", "validate", shadowed], home: s.path)
        #expect(shadowing.status == 0, "\(shadowing.all)")
        #expect(
            shadowing.stderr.contains(
                "warning: \(shadowed): $.steps[0] (step 'grab') captures 'amount', which the flow included at $.steps[1] declares"
            ), "\(shadowing.stderr)")
        // Its own variable, captured by its own step, is no one else's business.
        let own = try await BinaryRunner.run(["flow", "validate", "bahn-apple-pay"], home: s.path)
        #expect(!own.stderr.contains("warning"), "\(own.stderr)")

        let unknown = try s.write(
            "unknown.json",
            #"{"name": "u", "steps": [{"name": "a", "request": {"url": "${env.EMULATOR_URL}/${vars.who}"}}]}"#)
        let named = try await BinaryRunner.run(["flow", "run", unknown], home: s.path)
        #expect(
            named.status == 65
                && named.stderr.contains(
                    "error: \(unknown): $.steps[0] (step 'a'): ${vars.who} names an unknown variable"),
            "\(named.all)")
    }

    /// A file cut short — a flow file, a vars file, a recording — is named with the line and column where it ends.
    @Test func aTruncatedFileGetsALineAndColumn() async throws {
        let s = try Scratch()
        let flow = try s.write("cut.json", #"{"name": "cut", "steps": [{"name": "a", "request": {"url": "http://x"#)
        let r = try await BinaryRunner.run(["flow", "validate", flow], home: s.path)
        #expect(
            r.status == 65
                && r.stderr.contains(
                    "\(flow): not valid JSON: unterminated string at line 1, column 69 (the text ends early — truncated?)"
                ), "\(r.all)")
        let vars = try s.write("vars.json", "{\n  \"amount\": 12")
        let v = try await BinaryRunner.run(["flow", "validate", "bahn-apple-pay", "--vars-file", vars], home: s.path)
        #expect(
            v.status == 65
                && v.stderr.contains(
                    "--vars-file \(vars): not valid JSON: expected ',' or '}' at line 2, column 15 (the text ends early — truncated?)"
                ), "\(v.all)")
        let har = try s.write("run.har", "{\"log\": {\"entries\": [")
        let h = try await BinaryRunner.run(["flow", "replay", har], home: s.path)
        #expect(
            h.status == 65
                && h.stderr.contains(
                    "\(har) is not JSON, so not a HAR file: expected a value at line 1, column 22 (the text ends early — truncated?)"
                ), "\(h.all)")
    }

    /// Usage errors say how to fix them: a shard out of range, `flow show` given a file (never suggesting a path it
    /// refuses).
    @Test func usageErrorsSayTheFix() async throws {
        let s = try Scratch()
        let shard = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--shard", "5/4"], home: s.path)
        #expect(
            shard.status == 64
                && shard.stderr.contains(
                    "\nhint: shard i of n runs one n-th of the runs: give each of n CI jobs its own i, from 1 to n"),
            "\(shard.all)")
        let file = try s.write(
            "mine.json", #"{"name": "mine", "steps": [{"name": "a", "request": {"url": "http://x"}}]}"#)
        let show = try await BinaryRunner.run(["flow", "show", file], home: s.path)
        #expect(
            show.status == 64
                && show.stderr.contains("flow show prints a built-in flow, and \(file) is a flow file's path"),
            "\(show.all)")
        let typo = try await BinaryRunner.run(["flow", "show", "bahn-aple-pay"], home: s.path)
        #expect(
            typo.status == 64 && !typo.stderr.contains("path of a flow file"),
            "show takes no file, so its hint offers none: \(typo.stderr)")
    }
}
