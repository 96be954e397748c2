import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutCLI

/// `--record` then `flow replay`: every built-in flow runs again from its recording with no socket, and a replay that
/// sends something else says where, path by path.
@Suite struct ReplayTests {
    /// Every built-in flow, recorded once for the whole suite (`flow run --all --record DIR/`).
    static let recordings: (directory: String, files: [String]) = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "cd-replay-\(UUID().uuidString.prefix(8))"
        ).path
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let r = try! BinaryRunner.runBlocking(
            ["flow", "run", "--all", "--record", directory + "/hars/"], home: directory, timeout: 120)
        precondition(r.status == 0, "recording the built-in flows failed: \(r.all)")
        let files =
            (try? FileManager.default.contentsOfDirectory(atPath: directory + "/hars"))?.filter { $0.hasSuffix(".har") }
            .sorted() ?? []
        return (directory, files.map { directory + "/hars/" + $0 })
    }()

    static func recording(_ flow: String) throws -> String {
        try #require(recordings.files.first { $0.hasSuffix("-\(flow).har") }, "no recording of \(flow)")
    }

    /// The AF_INET and AF_INET6 sockets a run made, as strace saw them.
    static func internetSockets(_ trace: String) throws -> [String] {
        try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("socket(AF_INET") }.map(String.init)
    }

    @Test func everyBuiltinFlowReplaysFromItsRecordingWithoutASocket() async throws {
        let files = Self.recordings.files
        #expect(files.count == BuiltinFlows.all.count, "\(files)")
        let s = try Scratch()
        for file in files {
            let trace = s.path + "/trace-\((file as NSString).lastPathComponent).txt"
            let r = try await BinaryRunner.run(
                ["flow", "replay", file], home: s.path,
                under: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=socket", "-o", trace])
            #expect(r.status == 0, "\(file): \(r.all)")
            #expect(
                r.stdout.contains(
                    /replay: matched (all \d+ recorded requests|the one recorded request), and every step ended as recorded/
                ), "\(file): \(r.stdout)")
            let sockets = try Self.internetSockets(trace)
            #expect(sockets.isEmpty, "\(file) opened a socket: \(sockets)")
        }
        // The proof can fail: the run that made a recording opens sockets, and strace sees them.
        let trace = s.path + "/trace-run.txt"
        let run = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders"], home: s.path,
            under: ["/usr/bin/strace", "-f", "-qq", "-e", "trace=socket", "-o", trace])
        #expect(run.status == 0, "\(run.all)")
        #expect(try !Self.internetSockets(trace).isEmpty)
    }

    @Test func aRecordingNamesItsFlowVariablesVersionAndDefinition() throws {
        let har = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: try Self.recording("bahn-apple-pay"))))
        let run = try #require(har["log"]?["_run"])
        #expect(run["flow"] == "bahn-apple-pay")
        #expect(run["kind"] == "local")
        #expect(run["vars"] == .object([:]))
        #expect(har["log"]?["creator"]?["version"]?.stringValue == CheckoutDriver.version)
        #expect(
            run["definition"]?["steps"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == [
                "make-token", "create-intent", "confirm", "poll", "webhook",
            ])
        #expect(run["configuration"]?["BAHN_API_URL"]?.stringValue?.hasPrefix("http://127.0.0.1:") == true)
        #expect(har["log"]?["comment"]?.stringValue?.contains("run of flow bahn-apple-pay") == true)
    }

    @Test func noSecretIsInAnyRecording() throws {
        // The emulator's credentials are the secrets a local run knows; a recording must hold none of them, nor a
        // token's payment data, nor a JWT's signature.
        let secrets = Configuration(
            environment: "local", kind: .local, values: LocalEnvironment.values(baseURL: "http://127.0.0.1:1")
        ).secretValues
            .filter { $0.count >= 6 }
        #expect(secrets.count >= 5)
        var jwts = 0
        for file in Self.recordings.files {
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for secret in secrets { #expect(!text.contains(secret), "\(file) holds a configured secret") }
            #expect(!text.contains("-----BEGIN"), "\(file) holds a key")
            // What stands for a JWT is unsigned: its third part is the mask's.
            for jwt in text.matches(of: /eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)/) {
                #expect(jwt.output.1 == "REDACTED", "\(file) holds a signed JWT")
                jwts += 1
            }
        }
        #expect(jwts >= 4, "the Cash App recordings each hold Afterpay's signing JWT, unsigned")
    }

    /// Runs `flow replay` with `arguments` after the recording; it must diverge (exit 1) and show `lines`.
    static func expectDivergence(
        _ recording: String, _ arguments: [String], headline: String, lines: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "replay", recording] + arguments, home: s.path)
        #expect(r.status == 1, "\(r.all)", sourceLocation: sourceLocation)
        #expect(r.stderr.contains("replay: diverged at " + headline), "\(r.stderr)", sourceLocation: sourceLocation)
        for line in lines {
            #expect(r.stderr.contains("\n  " + line + "\n"), "\(line) in \(r.stderr)", sourceLocation: sourceLocation)
        }
        #expect(r.stderr.contains("error: the replay diverged from \(recording)"), sourceLocation: sourceLocation)
        #expect(!r.stdout.contains("replay: matched"), sourceLocation: sourceLocation)
    }

    @Test func aChangedAmountDivergesWithItsPath() async throws {
        try await Self.expectDivergence(
            try Self.recording("bahn-apple-pay"), ["--var", "amount=9000"],
            headline:
                "request 1 of 4, sent by step 'create-intent': sent POST /api/payment_intents, which differs from the recorded one",
            lines: ["$.payload.amount: recorded 8000, sent 9000"])
    }

    @Test func aChangedGraphQLVariableDivergesWithItsPath() async throws {
        try await Self.expectDivergence(
            try Self.recording("centra-express-pdp"), ["--var", "item=1003-M"],
            headline:
                "request 3 of 9, sent by step 'add-item': sent POST /centra/graphql (CentraAddItem), which differs from the recorded one",
            lines: [#"$.variables.item: recorded "1002-M", sent "1003-M""#])
    }

    /// The recorded flow's definition, changed by `change`, written as a flow file.
    static func changedFlow(_ recording: String, in s: Scratch, _ change: (inout JSON.Object) -> Void) throws -> String
    {
        let har = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: recording)))
        var definition = try #require(har["log"]?["_run"]?["definition"]?.objectValue)
        change(&definition)
        return try s.write("changed.json", JSON.object(definition).serialized())
    }

    /// A replay shows no live link for a person to act on: the link was the recording's, and the recorded answers
    /// decide.
    @Test func anOfflineReplayOffersNoLink() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "replay", try Self.recording("cashapp-server")], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(!r.all.contains("approve in Cash App: http"), "\(r.all)")
        #expect(
            r.stderr.contains(
                "note: request: approve in Cash App: the recording's link is not offered; this replay takes the recorded answers"
            ), "\(r.stderr)")
    }

    /// A replay names the step and attempt of its own that sent the diverging request, the recording's that sent the
    /// one in its place, and the recorded answer it acted on last: a recorded 500 that the run retried, replayed by a
    /// flow that does not retry, and the other way round; and a flow with other steps altogether.
    @Test func aDivergenceNamesTheStepAndAttemptThatSentItAndTheAnswerBefore() async throws {
        let s = try Scratch()
        let fault = ["--faults", "POST /api/payment_intents => status=500 @1"]
        var server = try ServeProcess(home: s.path, arguments: fault)
        let retried = s.path + "/retried.har"
        #expect(
            try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--record", retried], home: s.path).status == 0
        )
        server.stop()
        let noRetry = try Self.changedFlow(retried, in: s) { definition in
            var steps = definition["steps"]!.arrayValue!
            var intent = steps[1].objectValue!
            intent["retry"] = ["attempts": 1]
            steps[1] = .object(intent)
            definition["steps"] = .array(steps)
        }
        let once = s.path + "/once.har"
        server = try ServeProcess(home: s.path, arguments: fault)
        #expect(
            try await BinaryRunner.run(["flow", "run", noRetry, "--record", once], home: s.path).status == 69,
            "a 500 that is not retried")
        server.stop()

        let fewer = try await BinaryRunner.run(["flow", "replay", retried, "--flow", noRetry], home: s.path)
        #expect(fewer.status == 1, "\(fewer.all)")
        #expect(
            fewer.stderr.contains(
                "replay: diverged at request 2 of 5: the replay made 1 request, and the recording has 4 more it never made\n"
                    + "  after the recorded answer to request 1, sent by step 'create-intent': status 500\n"
                    + "  request 2: POST /api/payment_intents, sent by step 'create-intent' (attempt 2) when recorded\n"
            ), "\(fewer.stderr)")
        let more = try await BinaryRunner.run(["flow", "replay", once, "--flow", "bahn-apple-pay"], home: s.path)
        #expect(more.status == 1, "\(more.all)")
        #expect(
            more.stderr.contains(
                "replay: diverged at request 2 of 1, sent by step 'create-intent' (attempt 2): sent POST /api/payment_intents, but the recording ends after 1 request\n"
                    + "  after the recorded answer to request 1, sent by step 'create-intent': status 500\n"),
            "\(more.stderr)")
        #expect(
            more.stderr.contains(
                "error: the replay diverged from \(once) at request 2, sent by step 'create-intent' (attempt 2)"),
            "\(more.stderr)")
        let other = try await BinaryRunner.run(["flow", "replay", retried, "--flow", "emulator-orders"], home: s.path)
        #expect(
            other.stderr.contains(
                "replay: diverged at request 1 of 5, sent by step 'health': sent GET /_sandbox/health, but the recording's request 1 is POST /api/payment_intents, sent by step 'create-intent'\n"
            ), "\(other.stderr)")
    }

    /// A recording made when the Braintree flows had a second amount variable, `amount_minor`: its own definition still
    /// replays, and replayed against today's flow, the variable that is gone is said with what took its place.
    @Test func anOlderRecordingsRetiredVariableIsSaidWithWhatChanged() async throws {
        let s = try Scratch()
        var har = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: try Self.recording("braintree-apple-pay"))))
            .objectValue!
        var log = har["log"]!.objectValue!
        var run = log["_run"]!.objectValue!
        var definition = run["definition"]!.objectValue!
        var vars = definition["vars"]!.objectValue!
        vars["amount_minor"] = 1000
        definition["vars"] = .object(vars)
        var steps = definition["steps"]!.arrayValue!
        steps[0] = [
            "name": "make-token", "use": "applepay.makeToken",
            "with": ["amount": "${vars.amount_minor}", "currency": "${vars.currency}"],
            "capture": ["token_file": "path"],
        ]
        definition["steps"] = .array(steps)
        run["definition"] = .object(definition)
        run["vars"] = ["amount": "10.00", "amount_minor": 1000]
        log["_run"] = .object(run)
        har["log"] = .object(log)
        let old = try s.write("old.har", JSON.object(har).serialized())

        let own = try await BinaryRunner.run(["flow", "replay", old], home: s.path)
        #expect(own.status == 0 && !own.stderr.contains("amount_minor"), "\(own.all)")
        let today = try await BinaryRunner.run(["flow", "replay", old, "--flow", "braintree-apple-pay"], home: s.path)
        #expect(today.status == 0, "\(today.all)")
        #expect(
            today.stderr.contains(
                "note: the recording's variable amount_minor=1000 is not a variable of braintree-apple-pay any more: the flow's one amount is 'amount' now"
            ), "\(today.stderr)")
    }

    @Test func anExtraRequestDiverges() async throws {
        let s = try Scratch()
        let recording = try Self.recording("emulator-orders")
        let flow = try Self.changedFlow(recording, in: s) { definition in
            let extra: JSON = ["name": "again", "request": ["url": "${env.EMULATOR_URL}/_sandbox/health"]]
            definition["finally"] = .array((definition["finally"]?.arrayValue ?? []) + [extra])
        }
        try await Self.expectDivergence(
            recording, ["--flow", flow],
            headline:
                "request 6 of 5, sent by step 'again': sent GET /_sandbox/health, but the recording ends after 5 requests",
            lines: ["after the recorded answer to request 5, sent by step 'ledger': status 200"])
    }

    @Test func aMissingRequestDiverges() async throws {
        let s = try Scratch()
        let recording = try Self.recording("emulator-orders")
        let flow = try Self.changedFlow(recording, in: s) { $0["finally"] = nil }
        try await Self.expectDivergence(
            recording, ["--flow", flow],
            headline: "request 5 of 5: the replay made 4 requests, and the recording has 1 more it never made",
            lines: [
                "after the recorded answer to request 4, sent by step 'await-paid': status 200",
                "request 5: GET /_sandbox/ledger, sent by step 'ledger' when recorded",
            ])
    }

    @Test func aCommandsRecordingReplaysItsTypedOptions() async throws {
        let s = try Scratch()
        let har = s.path + "/charge.har"
        let recorded = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--amount", "12.34", "--record", har], home: s.path)
        #expect(recorded.status == 0, "\(recorded.all)")
        let replayed = try await BinaryRunner.run(["flow", "replay", har], home: s.path)
        #expect(replayed.status == 0, "\(replayed.all)")
        #expect(replayed.stdout.contains("replay: matched all 3 recorded requests"), "\(replayed.stdout)")
        // The amount came from the recorded flow's charge step, where the option put it, not through a variable …
        let variable = try await BinaryRunner.run(["flow", "replay", har, "--var", "amount=10.00"], home: s.path)
        #expect(variable.status == 64 && variable.stderr.contains("has no variable 'amount'"), "\(variable.all)")
        // … and a flow that charges another amount diverges from the recording.
        let flow = try ReplayTests.changedFlow(har, in: s) { definition in
            var steps = definition["steps"]?.arrayValue ?? []
            let charge = steps.firstIndex { $0["name"] == "charge" }!
            var step = steps[charge].objectValue!
            #expect(step["with"]?["amount"] == "12.34")
            step["with"] = .object((step["with"]?.objectValue ?? [:]).merging(["amount": "10.00"]) { $1 })
            steps[charge] = .object(step)
            definition["steps"] = .array(steps)
        }
        let other = try await BinaryRunner.run(["flow", "replay", har, "--flow", flow], home: s.path)
        #expect(other.status == 1, "\(other.all)")
    }

    @Test func aLostAnswerReplaysAsLostAndItsReadBackToo() async throws {
        // The charge's answer was lost (the emulator charged, then reset the connection); the run read it back. The
        // replay meets the same lost answer, reads back the same way, and matches the recording.
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /braintree/graphql => drop @1"])
        defer { server.stop() }
        let har = s.path + "/lost.har"
        let recorded = try await BinaryRunner.run(
            ["flow", "run", "braintree-apple-pay", "--record", har], home: s.path)
        server.stop()
        let text = try String(contentsOfFile: har, encoding: .utf8)
        #expect(recorded.status == 0, "\(recorded.all)")
        #expect(text.contains(#""_error": "connection lost"#), "\(text)")
        let replayed = try await BinaryRunner.run(["flow", "replay", har], home: s.path)
        #expect(replayed.status == 0, "\(replayed.all)")
        #expect(replayed.stdout.contains("replay: matched all 4 recorded requests"), "\(replayed.stdout)")
        // As the recorded run did, the replay says the charge was found by reading it back.
        for said in [recorded.stderr, replayed.stderr] {
            #expect(said.contains("note: charge: charge got no trustworthy answer"), "\(said)")
            #expect(
                said.contains(
                    /reading the transactions of order cd-[0-9a-f]+ back: transaction \w+ is SUBMITTED_FOR_SETTLEMENT/),
                "\(said)")
        }
    }

    @Test func whatIsNotARecordingIsRefusedClearly() async throws {
        let s = try Scratch()
        let cases: [(String, String)] = [
            ("{not json", "is not JSON, so not a HAR file"),
            (
                #"{"log": {"version": "1.2", "entries": []}}"#,
                "has no log._run: it was not written by checkout-driver's --record"
            ),
            (#"{"log": {"_run": {"flow": "x"}}}"#, "is not a HAR file: it has no log.entries"),
            (
                #"{"log": {"entries": [{"request": {}}], "_run": {"flow": "x"}}}"#,
                "an entry needs request.method, request.url and response.status"
            ),
        ]
        for (index, (text, message)) in cases.enumerated() {
            let file = try s.write("bad-\(index).har", text)
            let r = try await BinaryRunner.run(["flow", "replay", file], home: s.path)
            #expect(r.status == 65, "\(text): \(r.all)")
            #expect(r.stderr.contains(message), "\(text): \(r.stderr)")
        }
        let missing = try await BinaryRunner.run(["flow", "replay", s.path + "/none.har"], home: s.path)
        #expect(missing.status == 65 && missing.stderr.contains("cannot read the recording"), "\(missing.all)")
    }
}
