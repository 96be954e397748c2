import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// A batch killed (SIGKILL) right after one of its durable state-file writes, and a disk that fills up: compared with
/// the emulator's ledger, every money movement of a run that did not finish is an open outcome on disk, and nothing
/// else is.
@Suite struct StateCrashTests {
    /// Runs of the batch below: fewer than the finished runs a file keeps (20), so every run that wrote is still there.
    static let runs = 16

    /// bahn-apple-pay up to its charge (the emulator in the test sends its webhooks nowhere).
    static func checkout(_ s: Scratch) throws -> String {
        try s.write(
            "checkout.json",
            #"""
            {"name": "checkout", "vars": {"order_id": "${uuid}"}, "steps": [
              {"name": "make-token", "use": "applepay.makeToken", "with": {"amount": 8000, "currency": "704"}, "capture": {"token_file": "path"}},
              {"name": "create-intent", "use": "bahn.createIntent",
               "with": {"amount": 8000, "currency": "704", "orderId": "${vars.order_id}"}, "capture": {"intent": "payment_intent.id"}},
              {"name": "confirm", "use": "bahn.confirm", "with": {"intent": "${vars.intent}", "tokenFile": "${vars.token_file}"}}]}
            """#)
    }

    /// The file as the tool reads it: its document with the records a killed batch appended folded in.
    static func file(_ path: String) throws -> [String: Any] { try stateFileObject(path) }

    static func openOutcomes(_ file: [String: Any]) -> [[String: Any]] {
        ((file["openOutcomes"] as? [String: Any]) ?? [:]).values.compactMap { $0 as? [String: Any] }
    }

    /// Each run of the file by id: whether it finished, and the intents its Bahn section holds.
    static func runs(_ file: [String: Any]) -> [String: (finished: Bool, intents: Set<String>)] {
        ((file["runs"] as? [String: Any]) ?? [:]).compactMapValues { value in
            guard let scope = value as? [String: Any] else { return nil }
            let intents = ((scope["bahn"] as? [String: Any])?["intents"] as? [String: Any])?.keys ?? [:].keys
            return ((scope["run"] as? [String: Any])?["finishedAt"] != nil, Set(intents))
        }
    }

    /// Killed after its Nth durable write (a test hook, counted as the writes land: deterministic), or in the middle
    /// of it (`torn`: half a record appended); 1000 is past the batch's last write, the control.
    @Test(arguments: ["kill@1", "kill@2", "kill@4", "kill@7", "kill@11", "kill@16", "torn@2", "torn@9", "kill@1000"])
    func aBatchKilledAtADurableWriteLeavesEveryUnfinishedMovementOpenAndNothingElse(fault: String) async throws {
        let n = Int(fault.split(separator: "@")[1])!
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        var env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        env["CHECKOUT_DRIVER_TEST_STATE_WRITE_FAULT"] = fault
        let session = s.path + "/state.json"
        let batch = try await BinaryRunner.run(
            [
                "flow", "run", try Self.checkout(s), "--env", "sandbox", "--repeat", "\(Self.runs)", "--parallel", "8",
                "-q", "--session", session,
            ], home: s.path, environment: env)
        // How many durable writes a batch makes depends on how its parallel runs' changes fall into group commits — at
        // least five here (16 runs of two changes each, at most eight in one write, and the compaction at the end) —
        // so the first points always kill it, a later one may come after its last write, and 1000 always does.
        let killed = batch.status == -9
        #expect(killed || batch.status == 0, "\(batch.all)")
        if n <= 4 { #expect(killed, "\(batch.all)") }
        if n == 1000 { #expect(!killed, "\(batch.all)") }

        let file = try Self.file(session)
        let runs = Self.runs(file)
        let open = Self.openOutcomes(file)
        let charged = Set(emulator.ledger.entries().filter { $0.kind == .capture }.compactMap(\.reference))
        if !killed { #expect(charged.count == Self.runs && open.isEmpty && runs.values.allSatisfy(\.finished)) }
        for intent in charged {
            // The confirm went out after its run's intent was on disk: every charged intent is in a run there.
            let holders = runs.filter { $0.value.intents.contains(intent) }
            #expect(holders.count == 1, "charged \(intent) is in one run on disk: \(file)")
            guard let (run, record) = holders.first else { continue }
            let isOpen = open.contains {
                $0["reference"] as? String == "intent \(intent)" && $0["run"] as? String == run
            }
            #expect(record.finished || isOpen, "run \(run) charged \(intent), did not finish, and left nothing open")
        }
        for outcome in open {
            // Only calls in flight in the killed process, each of a run that did not finish.
            let run = try #require(outcome["run"] as? String)
            #expect(outcome["inFlight"] != nil, "\(outcome)")
            #expect(runs[run]?.finished == false, "an outcome of a finished run is settled: \(outcome)")
            let reference = try #require(outcome["reference"] as? String)
            #expect(runs[run]?.intents.contains(String(reference.dropFirst("intent ".count))) == true, "\(outcome)")
        }

        // Half a record at the end (the write torn was an append; the second write is one): read without it, with a
        // note.
        let raw =
            FileManager.default.fileExists(atPath: session)
            ? try Data(contentsOf: URL(fileURLWithPath: session)) : Data()
        let torn = !raw.isEmpty && raw.last != UInt8(ascii: "\n")
        #expect(torn == (fault == "torn@2") || fault == "torn@9", "\(fault): torn \(torn)")
        if torn {
            let shown = try await BinaryRunner.run(
                ["state", "show", "--session", session], home: s.path,
                environment: try BahnCommandTests.sandboxEnvironment(emulator, scratch: s))
            #expect(
                shown.status == 0 && shown.stderr.contains("was cut short") && shown.stderr.contains("is ignored"),
                "\(shown.all)")
        }

        // What a person does next reads the file: `state show` counts what is open, `state clear` refuses to forget it,
        // and a single step in the run's scope (`--run`) reads the intent, which settles a charge it shows.
        guard let first = open.first, let reference = first["reference"] as? String, let run = first["run"] as? String
        else { return }
        let plain = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        let shown = try await BinaryRunner.run(
            ["state", "show", "--session", session, "--format", "json"], home: s.path, environment: plain)
        #expect(shown.status == 0, "\(shown.all)")
        #expect(
            try JSON.parse(Data(shown.stdout.utf8))["openOutcomes"] == .number(JSON.Number(open.count)),
            "\(shown.stdout.prefix(300))")
        let clear = try await BinaryRunner.run(
            ["state", "clear", "--session", session], home: s.path, environment: plain)
        #expect(clear.status == 75 && clear.stderr.contains("which ended before it was settled"), "\(clear.all)")
        let intent = String(reference.dropFirst("intent ".count))
        let read = try await BinaryRunner.run(
            ["bahn", "intent", intent, "--env", "sandbox", "--session", session, "--run", run], home: s.path,
            environment: plain)
        #expect(read.status == 0, "\(read.all)")
        if charged.contains(intent) {
            #expect(read.stderr.contains("settled: the charge of intent \(intent)"), "\(read.all)")
            #expect(!Self.openOutcomes(try Self.file(session)).contains { $0["reference"] as? String == reference })
        }
    }

    /// The disk fills in the middle of a record's append (the file-size limit stands in for it): the half written is
    /// cut away, so the file is as it was, and no confirm is sent.
    @Test func anAppendCutShortByAFullDiskLeavesTheFileAsItWas() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        let session = s.path + "/state.json"
        // A file near the limit (4 KiB): the batch's first write is a record appended to it, which crosses the limit.
        let original = Data(("{\n  \"pad\": \"" + String(repeating: "x", count: 3900) + "\"\n}\n").utf8)
        try original.write(to: URL(fileURLWithPath: session))
        let r = try runTool(
            "/bin/bash",
            [
                "-c", "trap '' XFSZ; ulimit -f 4; exec \"$0\" \"$@\"", BinaryRunner.binary,
                "flow", "run", try Self.checkout(s), "--env", "sandbox", "--repeat", "2", "-q", "--session", session,
            ],
            environment: BinaryRunner.environment(home: s.path, extra: env), mergingErrors: true)
        #expect(r.status != 0 && r.output.contains("File too large"), "\(r.output)")
        // Had the half stayed, the second run would have read a record cut short (and the command's end mended it).
        #expect(!r.output.contains("cut short"), "\(r.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: session)) == original)
        #expect(emulator.ledger.entries().filter { $0.kind == .capture }.isEmpty)
    }

    /// No space left for the write before the money call: the call is not sent, and the file stays as it was.
    @Test func aFullDiskBeforeTheConfirmSendsNothing() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        var env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        env["CHECKOUT_DRIVER_TEST_STATE_WRITE_FAULT"] = "nospace@1"
        let session = s.path + "/state.json"
        let r = try await BinaryRunner.run(
            ["flow", "run", try Self.checkout(s), "--env", "sandbox", "-q", "--session", session], home: s.path,
            environment: env)
        #expect(r.status == 74, "\(r.all)")
        #expect(r.stderr.contains("No space left on device"), "\(r.all)")
        #expect(
            !emulator.receivedRequests().contains { $0.method == "POST" && $0.path.hasSuffix("/confirm") },
            "the confirm was not sent")
        #expect(emulator.ledger.entries().isEmpty)
        #expect(Self.openOutcomes(try Self.file(session)).isEmpty)
    }

    /// No space left for the run's last write after the charge: 75, and the file keeps the charge open, which refuses
    /// the next one until it is settled.
    @Test func aFullDiskAfterTheChargeIs75AndTheChargeStaysOpen() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        let session = s.path + "/state.json"
        let full = try await BinaryRunner.run(
            ["flow", "run", try Self.checkout(s), "--env", "sandbox", "-q", "--session", session], home: s.path,
            environment: env.merging(["CHECKOUT_DRIVER_TEST_STATE_WRITE_FAULT": "nospace@2"]) { $1 })
        #expect(full.status == 75, "\(full.all)")
        let intent = try #require(emulator.ledger.entries().first { $0.kind == .capture }?.reference, "it charged")
        #expect(
            full.stderr.contains(
                "No space left on device; the state file still holds the charge of intent \(intent) as in flight"),
            "\(full.all)")
        #expect(full.stderr.contains("checkout-driver bahn intent \(intent)"), "the settle command: \(full.all)")
        let open = Self.openOutcomes(try Self.file(session))
        #expect(open.count == 1 && open.first?["reference"] as? String == "intent \(intent)", "\(open)")
        let next = try await BinaryRunner.run(
            ["flow", "run", try Self.checkout(s), "--env", "sandbox", "-q", "--session", session], home: s.path,
            environment: env)
        #expect(next.status == 75 && next.stderr.contains("which ended before it was settled"), "\(next.all)")
        #expect(emulator.ledger.entries().filter { $0.kind == .capture }.count == 1, "refused before sending")
    }
}
