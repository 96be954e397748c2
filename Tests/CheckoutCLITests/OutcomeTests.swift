import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// "Outcome unknown" as a user meets it: exit 75, a message that says the charge may have gone through, and
/// commands that settle it — which, run, leave exactly one charge in the ledger.
@Suite struct UnknownOutcomeTests {
    /// The commands a hint gives between backticks, as argument lists without the program name. Words are split
    /// on blanks; a single-quoted word keeps its blanks (ShellWords.join quotes that way).
    static func commands(in text: String) -> [[String]] {
        text.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map {
            _, command in
            var words: [String] = []
            var word = ""
            var quoted = false
            for character in command {
                if character == "'" {
                    quoted.toggle()
                } else if character == " " && !quoted {
                    if !word.isEmpty { words.append(word) }
                    word = ""
                } else {
                    word.append(character)
                }
            }
            if !word.isEmpty { words.append(word) }
            return Array(words.dropFirst())
        }
    }

    @Test func anUnknownConfirmExits75AndTheCommandsItGivesSettleIt() async throws {
        let s = try Scratch()
        // Every confirm attempt of the run commits and loses its answer; every read-back of the intent fails.
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /api/payment_intents/*/confirm => drop @1-3; GET /api/payment_intents/* => status=503 @1-3",
            ])
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--junit", s.path + "/run.xml"], home: s.path)
        #expect(r.status == 75, "\(r.all)")
        #expect(r.stderr.contains("error: outcome unknown: the charge may have gone through"), "\(r.stderr)")
        #expect(r.stdout.contains("✗ confirm"))
        #expect(try s.read("run.xml").contains("outcome unknown"))
        let hint = try #require(
            r.stderr.split(separator: "\n").first { $0.hasPrefix("hint: settle it safely") }.map(String.init))
        let commands = Self.commands(in: hint)
        #expect(commands.count == 2, "\(hint)")
        let resend = try #require(commands.first)
        #expect(Array(resend.prefix(2)) == ["bahn", "confirm"])

        // The token the run made lived in its scratch directory; it is kept, owner-only, for the re-send.
        let tokenIndex = try #require(resend.firstIndex(of: "--token-file"))
        let kept = resend[tokenIndex + 1]
        #expect(kept.hasPrefix(s.path + "/state/checkout-driver/local/kept/"), "\(kept)")
        let mode = try FileManager.default.attributesOfItem(atPath: kept)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(r.stderr.contains("the token is kept at \(kept)"))

        let settled = try await BinaryRunner.run(resend, home: s.path)
        #expect(settled.status == 0, "\(settled.all)")
        #expect(settled.stderr.contains("Bahn replayed the original response"))
        #expect(settled.stdout.contains("succeeded"))
        let status = try await BinaryRunner.run(commands[1], home: s.path)
        #expect(status.status == 0, "\(status.all)")
        #expect(status.stdout.contains("succeeded"))

        let intent = resend[try #require(resend.firstIndex(of: "--intent")) + 1]
        let ledger = try #require(
            try JSONSerialization.jsonObject(with: Data(curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
                as? [String: Any])
        let kinds = (ledger["entries"] as? [[String: Any]] ?? []).filter { $0["reference"] as? String == intent }
            .compactMap { $0["kind"] as? String }
        #expect(kinds == ["authorization", "capture"], "one charge, whatever was re-sent")
    }

    @Test func aLostAnswerThatReadsBackAsChargedPasses() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /api/payment_intents/*/confirm => drop @*"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("confirm got no trustworthy answer"))
        #expect(r.stderr.contains("is succeeded: the charge went through"))
        #expect(r.stdout.contains("passed: bahn-apple-pay"))
    }

    /// Interrupted while the confirm was on its way: unknown too, with the same commands; they settle it once the
    /// emulator has finished the confirm it was holding.
    @Test func aConfirmInterruptedInFlightIsUnknownAndTheCommandsSettleIt() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /api/payment_intents/*/confirm => latency=3000ms @1"])
        defer { server.stop() }
        let token = try await BahnCommandTests.makeToken(s)
        let run = try LiveProcess(
            ["bahn", "confirm", "--order-id", "f-1", "--amount", "8000", "--currency", "704", "--token-file", token],
            home: s.path)
        #expect(
            await eventually(timeout: 10) {
                (try? curl(["-s", server.url + "/_sandbox/requests"]))?.contains("/confirm") == true
            },
            "the confirm is in flight")
        run.send(SIGINT)
        #expect(run.exitStatus(within: 5) == 130, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                "error: outcome unknown: the charge may have gone through — interrupted during step 'confirm' while confirm was on its way"
            ),
            "\(run.stderr)")
        let hint = try #require(
            run.stderr.split(separator: "\n").first { $0.hasPrefix("hint: settle it safely") }.map(String.init))
        let commands = Self.commands(in: hint)
        #expect(commands.first?.contains("--idempotency-key") == true, "\(hint)")
        usleep(3_000_000)  // the held confirm completes meanwhile
        let settled = try await BinaryRunner.run(try #require(commands.first), home: s.path)
        #expect(settled.status == 0, "\(settled.all)")
        #expect(settled.stdout.contains("succeeded"))
    }

    /// The settling commands point where the run pointed: the same --env, --config, --session and non-secret --set;
    /// secret --set values are never printed, the message says to add them.
    @Test func theCommandsRepeatTheRunsOptionsButNoSecret() async throws {
        let s = try Scratch()
        let emulator = try Emulator(
            faults: try FaultSpec(
                parsing: "POST /api/payment_intents/*/confirm => drop @*; GET /api/payment_intents/* => status=503 @*"))
        emulator.start()
        defer { emulator.shutdown() }
        var env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        env["BAHN_KEY_ID"] = nil
        let token = try await BahnCommandTests.makeToken(s)
        let config = try s.write("config.json", #"{"profiles": {}}"#)
        let r = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "o-9", "--amount", "8000", "--currency", "704", "--token-file", token,
                "--env", "sandbox", "--config", config, "--session", s.path + "/s.json",
                "--set", "EMULATOR_URL=http://127.0.0.1:9", "--set", "BAHN_KEY_ID=\(TestCredentials.bahnKeyID)",
            ],
            home: s.path, environment: env)
        #expect(r.status == 75, "\(r.all)")
        let hint = try #require(
            r.stderr.split(separator: "\n").first { $0.hasPrefix("hint: settle it safely") }.map(String.init))
        let status = try #require(Self.commands(in: hint).last)
        #expect(
            status == [
                "bahn", "intent", try #require(status.dropFirst(2).first), "--config", config, "--env", "sandbox",
                "--session", s.path + "/s.json", "--set", "EMULATOR_URL=http://127.0.0.1:9",
            ], "\(status)")
        #expect(hint.contains("add this run's --set options for BAHN_KEY_ID"))
        #expect(!r.stderr.contains(TestCredentials.bahnKeyID))
    }
}
