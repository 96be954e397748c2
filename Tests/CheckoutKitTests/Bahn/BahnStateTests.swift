import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutKit

/// The state file layout that chains Bahn invocations (BahnState's documented layout).
@Suite struct BahnStateTests {
    @Test func createAndConfirmRecordTheIntentItsOrderItsKeyAndTheSpentToken() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(BahnRig.paySteps(order: "1234"))
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        let txid = try #require(result.captures["txid"]?.stringValue)

        let bahn = try #require(try rig.stateFile()["bahn"] as? [String: Any])
        let intents = try #require(bahn["intents"] as? [String: Any])
        let entry = try #require(intents[intent] as? [String: Any])
        #expect(entry["orderId"] as? String == "1234")
        #expect(entry["confirmTransaction"] as? String == txid)
        #expect(entry["status"] as? String == "succeeded")
        #expect((entry["latest_charge_id"] as? String)?.hasPrefix("ch_") == true)
        #expect(entry["amount"] as? Int == 8000)
        #expect(entry["currency"] as? String == "704")
        #expect(bahn["orders"] as? [String: String] == ["1234": intent])
        #expect(bahn["lastIntent"] as? String == intent)
        let tokens = try #require(bahn["tokens"] as? [String: [String: Any]])
        #expect(tokens.keys.sorted() == [txid])
        #expect(tokens[txid]?["intent"] as? String == intent)
        #expect(tokens[txid]?["idempotencyKey"] as? String == "order-1234-applepay")
        #expect(tokens[txid]?["spent"] as? Bool == true)
    }

    @Test func theConfirmKeyIsRecordedBeforeTheRequestSoACrashedRunsRetryReusesIt() async throws {
        // Every confirm attempt is lost: the run fails, but the key it used is in the state file.
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => reset @*")
        let failed = try await rig.run(BahnRig.paySteps(order: "88", confirmExtra: #","idempotencyKey":"my-key-1""#))
        #expect(failed.failure?.code == .outcomeUnknown, "\(String(describing: failed.failure))")
        let intent = try #require(failed.captures["intent"]?.stringValue)
        let tokenFile = try #require(failed.captures["token_file"]?.stringValue)
        let entry =
            try #require((try rig.stateFile()["bahn"] as? [String: Any])?["intents"] as? [String: Any])[intent]
            as? [String: Any]
        let txid = try #require(failed.captures["txid"]?.stringValue)
        #expect(entry?["confirmTransaction"] as? String == txid)
        let tokens = (try rig.stateFile()["bahn"] as? [String: Any])?["tokens"] as? [String: [String: Any]]
        #expect(tokens?[txid]?["idempotencyKey"] as? String == "my-key-1")
        #expect(tokens?[txid]?["spent"] as? Bool == false, "an unanswered confirm spends nothing")

        // The retry (same state, no explicit key) reuses it rather than the order default.
        let before = rig.confirmRequests.count
        let retry = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"88","tokenFile":"\#(tokenFile)"}}"#)
        #expect(retry.failure?.code == .outcomeUnknown, "every confirm is reset: \(String(describing: retry.failure))")
        let retried = rig.confirmRequests.dropFirst(before)
        #expect(!retried.isEmpty)
        #expect(retried.allSatisfy { $0.headers["Bn-Idempotency-Key"] == "my-key-1" })
    }

    /// A token pays one intent once: sent to another intent — an existing one, or one still to be created for a new
    /// order — it is refused before anything reaches Bahn.
    @Test func aTokenSentToOneIntentIsRefusedForAnotherBeforeAnythingIsSent() async throws {
        let rig = try BahnRig()
        let first = try await rig.run(BahnRig.paySteps(order: "t-1"))
        #expect(first.passed, "\(String(describing: first.failure))")
        let tokenFile = try #require(first.captures["token_file"]?.stringValue)
        let other = try await rig.run(
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"704"},"capture":{"intent":"payment_intent.id"}}"#
        )
        let otherIntent = try #require(other.captures["intent"]?.stringValue)
        let sent = rig.bahnRequests.count

        let toExisting = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(otherIntent)","tokenFile":"\#(tokenFile)"}}"#)
        #expect(toExisting.failure?.code == .dataError, "\(String(describing: toExisting.failure))")
        #expect(
            toExisting.failure?.message.contains(
                "was already sent to \(try #require(first.captures["intent"]?.stringValue))") == true)
        let toNew = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"t-2","amount":8000,"currency":"704","tokenFile":"\#(tokenFile)"}}"#
        )
        #expect(toNew.failure?.code == .dataError, "\(String(describing: toNew.failure))")
        #expect(rig.bahnRequests.count == sent, "nothing reached Bahn, not even a create")
    }

    /// The section is read by one typed decoder: a wrong type anywhere is exit 65 naming the file and the JSON path,
    /// and the file is left exactly as it was.
    @Test(arguments: [
        (#"{"bahn": "x"}"#, "$.bahn: expected an object, found a string"),
        (#"{"bahn": {"intents": []}}"#, "$.bahn.intents: expected an object, found an array"),
        (
            #"{"bahn": {"intents": {"pi_1": {"amount": "8000"}}}}"#,
            "$.bahn.intents.pi_1.amount: expected an integer, found a string"
        ),
        (#"{"bahn": {"orders": {"o-1": 5}}}"#, "$.bahn.orders.o-1: expected a string, found a number"),
        (
            #"{"bahn": {"tokens": {"ab": {"intent": "pi_1", "idempotencyKey": "k", "spent": "yes"}}}}"#,
            "$.bahn.tokens.ab.spent: expected true or false, found a string"
        ),
        (
            #"{"bahn": {"tokens": {"ab": {"intent": "pi_1"}}}}"#,
            "$.bahn.tokens.ab.idempotencyKey: expected an idempotency key, found nothing"
        ),
        (#"{"bahn": {"tokens": []}}"#, "$.bahn.tokens: expected an object, found an array"),
        (#"{"bahn": {"tokens": {"ab": "x"}}}"#, "$.bahn.tokens.ab: expected an object, found a string"),
    ])
    func aWrongTypedSectionIsExit65NamingThePath(content: String, message: String) async throws {
        let rig = try BahnRig()
        try Data(content.utf8).write(to: URL(fileURLWithPath: rig.state.path))
        let token = try rig.makeToken(amount: 8000)
        let result = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"s-1","amount":8000,"currency":"704","tokenFile":"\#(token.path)"}}"#
        )
        let failure = try #require(result.failure)
        #expect(failure.code == .dataError, "\(failure)")
        #expect(failure.message == "state file \(rig.state.path): \(message)", "\(failure)")
        #expect(rig.bahnRequests.isEmpty)
        #expect(try String(contentsOfFile: rig.state.path, encoding: .utf8) == content)
    }

    /// Members this version does not know — sections, and fields inside Bahn's — are kept as they are.
    @Test func unknownMembersFromANewerVersionAreKept() async throws {
        let rig = try BahnRig()
        try Data(#"{"centra": {"session": "s"}, "bahn": {"future": [1, 2], "intents": {}}}"#.utf8).write(
            to: URL(fileURLWithPath: rig.state.path))
        let result = try await rig.run(BahnRig.paySteps(order: "n-1"))
        #expect(result.passed, "\(String(describing: result.failure))")
        let state = try rig.stateFile()
        #expect((state["centra"] as? [String: Any])?["session"] as? String == "s")
        #expect((state["bahn"] as? [String: Any])?["future"] as? [Int] == [1, 2])
    }

    /// The check under the state file's lock, which holds even when another process recorded the token after this
    /// one's early check: a token sent to one intent is refused for another, and the same intent gets its key back.
    @Test func confirmKeyRefusesUnderTheLockATokenSentToAnotherIntent() throws {
        let s = try Scratch()
        let path = try s.write("token.json", TokenFileTests.goodToken)
        let token = try PaymentTokenFile.read(path: path, redactor: nil)
        let state = BahnState(store: StateStore(path: s.path + "/state.json"))
        let first = try state.confirmKey(intent: "pi_A", proposed: "order-1-applepay", explicit: false, token: token)
        #expect(first.key == "order-1-applepay")
        #expect(
            try state.confirmKey(intent: "pi_A", proposed: "other", explicit: false, token: token).key
                == "order-1-applepay",
            "a retry to the same intent reuses its key")
        let refused = diagnostic { () throws(Diagnostic) in
            try state.confirmKey(intent: "pi_B", proposed: "order-2-applepay", explicit: false, token: token)
        }
        #expect(refused?.message.contains("pi_A") == true, "\(String(describing: refused))")
    }
}
