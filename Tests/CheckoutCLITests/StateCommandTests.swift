import CheckoutKit
import Foundation
import TestSupport
import Testing

/// `state show` masks what the file keeps in the clear; `state clear` never forgets an open money outcome unless told.
@Suite struct StateCommandTests {
    @Test func showMasksTheKeptSessionCredential() async throws {
        let s = try Scratch()
        let file = s.path + "/state.json"
        let run = try await BinaryRunner.run(["flow", "run", "centra-express", "--session", file, "-q"], home: s.path)
        #expect(run.status == 0, "\(run.all)")
        let raw = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: file)))
        let session = try #require(raw["centra"]?["session"]?.stringValue)
        #expect(session != Redactor.mask, "the file keeps the session for the next command")
        let shown = try await BinaryRunner.run(["state", "show", "--session", file], home: s.path)
        #expect(shown.status == 0, "\(shown.all)")
        #expect(shown.stdout.hasPrefix("state file \(file)\n"))
        #expect(!shown.stdout.contains(session) && shown.stdout.contains("\"session\": \"[REDACTED]\""))
        let json = try await BinaryRunner.run(
            ["state", "show", "--session", file, "--provider", "bahn", "--format", "json"], home: s.path)
        #expect(try JSON.parse(Data(json.stdout.utf8)) == ["file": .string(file), "state": [:], "openOutcomes": 0])
    }

    /// A wrong-typed section, in the chain or in a run's scope, of any provider, is refused (65) by every reader — a
    /// whole flow, a single step, `state show` — naming its path and the way to recover, and the file is left as it
    /// was; `state clear --provider P` recovers it, and the next run passes.
    @Test(arguments: [
        (#"{"bahn": "x"}"#, "$.bahn: expected an object, found a string", "bahn"),
        (#"{"bahn": {"tokens": "x"}}"#, "$.bahn.tokens: expected an object, found a string", "bahn"),
        (
            #"{"runs": {"r1": {"run": {"finishedAt": "2026-12-01T10:00:00Z"}, "bahn": 3}}}"#,
            "$.runs.r1.bahn: expected an object, found a number", "bahn"
        ),
        (#"{"centra": []}"#, "$.centra: expected an object, found an array", "centra"),
        (#"{"cashapp": {"amount": "x"}}"#, "$.cashapp.amount: expected an integer, found a string", "cashapp"),
    ])
    func aWrongTypedSectionIsRefusedByEveryReaderAndNeverOverwritten(
        document: String, problem: String, provider: String
    ) async throws {
        let s = try Scratch()
        let file = try s.write("state.json", document)
        for command in [
            ["flow", "run", "bahn-apple-pay"], ["bahn", "intent", "pi_1"], ["state", "show"],
            ["flow", "validate", "centra-express"],
        ] {
            let r = try await BinaryRunner.run(command + ["--session", file], home: s.path)
            #expect(r.status == 65, "\(command): \(r.all)")
            #expect(r.stderr.contains("error: state file \(file): \(problem)\n"), "\(command): \(r.stderr)")
            #expect(
                r.stderr.contains(
                    "hint: fix or remove that entry, or reset the \(provider) sections with `checkout-driver state clear --provider \(provider) --session \(file)`"
                ), "\(r.stderr)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == document, "\(command) left the file as it was")
        }
        #expect(
            try await BinaryRunner.run(["state", "clear", "--provider", provider, "--session", file], home: s.path)
                .status == 0)
        let again = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--session", file, "-q"], home: s.path)
        #expect(again.status == 0, "\(again.all)")
    }

    /// The file-wide sections too — captures, in the chain or a run's scope, and the record of spent values: a wrong
    /// type is refused by a run and by `state show` alike, and never pruned or overwritten.
    @Test(arguments: [
        (#"{"captures": {"f": "x"}}"#, "$.captures.f: expected an object (the captures of flow 'f'), found a string"),
        (
            #"{"runs": {"r1": {"run": {"finishedAt": "2026-12-01T10:00:00Z"}, "captures": {"f": 3}}}}"#,
            "$.runs.r1.captures.f: expected an object (the captures of flow 'f'), found a number"
        ),
        (
            #"{"spent": {"Apple Pay token sha256:1": "x"}}"#,
            "$.spent[\"Apple Pay token sha256:1\"]: expected an object, found a string"
        ),
        (
            #"{"spent": {"Apple Pay token sha256:1": {"at": 5}}}"#,
            "$.spent[\"Apple Pay token sha256:1\"].at: expected a string, found a number"
        ),
    ])
    func aWrongTypedCaptureOrSpentRecordIsRefusedToo(document: String, problem: String) async throws {
        let s = try Scratch()
        let file = try s.write("state.json", document)
        for command in [["flow", "run", "bahn-apple-pay"], ["state", "show"]] {
            let r = try await BinaryRunner.run(command + ["--session", file], home: s.path)
            #expect(
                r.status == 65 && r.stderr.contains("error: state file \(file): \(problem)\n"), "\(command): \(r.all)")
            #expect(try String(contentsOfFile: file, encoding: .utf8) == document, "\(command) left the file as it was")
        }
    }

    static let open: JSON = [
        "bahn": ["intents": ["pi_1": ["status": "requires_payment_method"]]],
        "centra": ["lastOrder": "ord_1"],
        "spent": ["tokens": ["t1": ["at": "2026-12-03T10:00:00Z"]]],
        "openOutcomes": [
            "bahn pi_1": [
                "provider": "bahn", "reference": "pi_1", "effect": "a confirm",
                "settle": ["checkout-driver bahn intent pi_1"], "since": "2026-12-03T10:00:00Z",
            ]
        ],
    ]

    @Test func clearRefusesWhileAMoneyOutcomeIsUnknownAndForceClearsAllButTheSpentRecord() async throws {
        let s = try Scratch()
        let file = try s.write("state.json", Self.open.serialized())
        let refused = try await BinaryRunner.run(["state", "clear", "--session", file], home: s.path)
        #expect(refused.status == 75, "\(refused.all)")
        #expect(
            refused.stderr.contains(
                "refused: a confirm of pi_1 (left open 2026-12-03T10:00:00Z) may have gone through"),
            "\(refused.stderr)")
        #expect(refused.stderr.contains("settle it first: checkout-driver bahn intent pi_1; or pass --force"))
        #expect(try JSON.parse(Data(contentsOf: URL(fileURLWithPath: file))) == Self.open, "nothing changed")

        // Another provider's sections clear: the open outcome is Bahn's.
        let centra = try await BinaryRunner.run(
            ["state", "clear", "--session", file, "--provider", "centra"], home: s.path)
        #expect(centra.status == 0, "\(centra.all)")
        #expect(centra.stdout.contains("cleared centra; the record of spent single-use values is kept"))

        let forced = try await BinaryRunner.run(["state", "clear", "--session", file, "--force"], home: s.path)
        #expect(forced.status == 0, "\(forced.all)")
        #expect(forced.stdout.contains("cleared bahn, 1 open outcome"), "\(forced.stdout)")
        let after = try JSON.parse(Data(contentsOf: URL(fileURLWithPath: file)))
        #expect(after == ["spent": Self.open["spent"]!])
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o600)
    }

    /// A single step holds the chain while it sends: clearing from under it is refused (69, naming the holder).
    @Test func clearRefusesWhileACommandHoldsTheChain() async throws {
        let s = try Scratch()
        let file = try s.write("state.json", #"{"bahn": {}}"#)
        var held = try StateStore(path: file).holdChain(wait: 0, command: "bahn confirm")
        #expect(held != nil)
        let refused = try await BinaryRunner.run(["state", "clear", "--session", file], home: s.path)
        #expect(refused.status == 69, "\(refused.all)")
        #expect(
            refused.stderr.contains("is in use by another command (pid \(getpid()): bahn confirm)"), "\(refused.stderr)"
        )
        held = nil  // the command ends: the chain is free
        let cleared = try await BinaryRunner.run(["state", "clear", "--session", file], home: s.path)
        #expect(cleared.status == 0, "\(cleared.all)")
    }

    @Test func clearRefusesWhileARunIsGoing() async throws {
        let s = try Scratch()
        let file = try s.write("state.json", #"{"runs": {"r1": {"bahn": {}}}}"#)
        let refused = try await BinaryRunner.run(["state", "clear", "--session", file], home: s.path)
        #expect(refused.status == 64, "\(refused.all)")
        #expect(refused.stderr.contains("refused: run r1 is still going on \(file)"))
        let missing = try await BinaryRunner.run(["state", "clear", "--session", s.path + "/none.json"], home: s.path)
        #expect(missing.status == 0 && missing.stdout.contains("nothing to clear (none yet)"), "\(missing.all)")
    }
}
