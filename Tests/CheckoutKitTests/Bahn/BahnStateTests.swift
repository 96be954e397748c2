import Foundation
import SandboxEmulator
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
        #expect(entry["confirmKey"] as? String == "order-1234-applepay")
        #expect(entry["status"] as? String == "succeeded")
        #expect(entry["amount"] as? Int == 8000)
        #expect(entry["currency"] as? String == "704")
        #expect(bahn["orders"] as? [String: String] == ["1234": intent])
        #expect(bahn["lastIntent"] as? String == intent)
        #expect(bahn["spentTransactions"] as? [String] == [txid])
    }

    @Test func theConfirmKeyIsRecordedBeforeTheRequestSoACrashedRunsRetryReusesIt() async throws {
        // Every confirm attempt is lost: the run fails, but the key it used is in the state file.
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => reset @*")
        let failed = try await rig.run(BahnRig.paySteps(order: "88", confirmExtra: #","idempotencyKey":"my-key-1""#))
        #expect(failed.failure?.code == .outcomeUnknown, "\(String(describing: failed.failure))")
        let intent = try #require(failed.captures["intent"]?.stringValue)
        let tokenFile = try #require(failed.captures["token_file"]?.stringValue)
        let entry = try #require((try rig.stateFile()["bahn"] as? [String: Any])?["intents"] as? [String: Any])[intent] as? [String: Any]
        #expect(entry?["confirmKey"] as? String == "my-key-1")
        #expect((try rig.stateFile()["bahn"] as? [String: Any])?["spentTransactions"] == nil, "an unanswered confirm spends nothing")

        // The retry (same state, no explicit key) reuses it rather than the order default.
        let before = rig.confirmRequests.count
        let retry = try await rig.run(#"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"88","tokenFile":"\#(tokenFile)"}}"#)
        #expect(retry.failure?.code == .outcomeUnknown, "every confirm is reset: \(String(describing: retry.failure))")
        let retried = rig.confirmRequests.dropFirst(before)
        #expect(!retried.isEmpty)
        #expect(retried.allSatisfy { $0.headers["Bn-Idempotency-Key"] == "my-key-1" })
    }
}
