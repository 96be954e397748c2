import Foundation
import SandboxEmulator
import Testing

@testable import CheckoutKit

/// Bahn's errors as the user meets them: exit code, Bahn's code in the message, the integration guide's hint
/// (docs/protocols/bahn.md).
@Suite struct BahnProtocolTests {
    @Test func aDeclineIsAFailureNamingCardDeclinedWithTheDeclineHint() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(BahnRig.paySteps(amount: 5100, order: "51"))
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(result.step("confirm")?.outcome == .failed)
        #expect(failure.message.contains("card_declined"), "\(failure)")
        #expect(failure.message.contains("insufficient_funds"), "\(failure)")
        #expect(failure.message.contains("402"))
        #expect(failure.hint == BahnProtocol.hint(forCode: "card_declined", type: "card_error"))
        #expect(failure.hint?.contains("declined") == true)
        // A decline uses the token up.
        let txid = try #require(result.captures["txid"]?.stringValue)
        #expect(try BahnState(store: rig.state).spentTransactions() == [txid])
        #expect(rig.emulator.ledger.entries().isEmpty)
    }

    @Test func aTokenChangedInTransitGetsTheSignatureOrInvalidTokenHint() async throws {
        let rig = try BahnRig()
        let made = try rig.makeToken(amount: 8000).token
        var text = String(decoding: made.bytes, as: UTF8.self)
        // One base64 character inside "data", swapped for another valid one.
        let dataStart = try #require(text.range(of: #""data":""#)).upperBound
        let target = text.index(dataStart, offsetBy: 20)
        let replacement: Character = text[target] == "A" ? "B" : "A"
        text.replaceSubrange(target...target, with: String(replacement))
        let tampered = Data(text.utf8)
        #expect(tampered.count == made.bytes.count)
        #expect(zip(tampered, made.bytes).filter { $0 != $1 }.count == 1)
        let path = try rig.write(tampered)

        let result = try await rig.run(
            #"""
            {"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"704"},"capture":{"intent":"payment_intent.id"}},
            {"name":"confirm","use":"bahn.confirm","with":{"intent":"${vars.intent}","tokenFile":"\#(path)"}}
            """#)
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(failure.message.contains("apple_pay_token_invalid"), "\(failure)")
        #expect(failure.hint?.contains("signature or invalid-token") == true, "\(failure)")
        #expect(try ReceivedJWS(try #require(rig.confirmRequests.first).body).appleToken() == tampered)
    }

    @Test func reusingAnIdempotencyKeyForAnotherIntentNamesTheErrorAndItsHint() async throws {
        let rig = try BahnRig()
        let first = try rig.makeToken(amount: 8000)
        let second = try rig.makeToken(amount: 9000)
        let result = try await rig.run(
            #"""
            {"name":"create-a","use":"bahn.createIntent","with":{"amount":8000,"currency":"704"},"capture":{"a":"payment_intent.id"}},
            {"name":"confirm-a","use":"bahn.confirm","with":{"intent":"${vars.a}","tokenFile":"\#(first.path)","idempotencyKey":"shared-key"}},
            {"name":"create-b","use":"bahn.createIntent","with":{"amount":9000,"currency":"704"},"capture":{"b":"payment_intent.id"}},
            {"name":"confirm-b","use":"bahn.confirm","with":{"intent":"${vars.b}","tokenFile":"\#(second.path)","idempotencyKey":"shared-key"}}
            """#)
        #expect(result.step("confirm-a")?.outcome == .passed)
        #expect(result.step("confirm-b")?.outcome == .failed)
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(failure.message.contains("idempotency_key_reused"), "\(failure)")
        #expect(failure.hint == BahnProtocol.hint(forCode: "idempotency_key_reused", type: nil))
        #expect(failure.hint?.contains("--idempotency-key") == true)
        #expect(rig.confirmRequests.map { $0.headers["Bn-Idempotency-Key"] } == ["shared-key", "shared-key"])
        #expect(rig.emulator.ledger.entries().filter { $0.kind == .authorization }.count == 1)
    }

    @Test func aWrongAPIKeyIsAConfigurationError() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"VND"}}"#,
            env: ["BAHN_API_KEY": "bn_test_wrong"])
        let failure = try #require(result.failure)
        #expect(failure.code == .configuration, "\(failure)")
        #expect(failure.message.contains("invalid_api_key"))
        #expect(failure.hint?.contains("BAHN_API_KEY") == true)
        #expect(rig.createRequests.count == 1, "a 401 is not retried")
    }

    @Test func missingConfigurationIsNamedBeforeAnythingIsSent() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"VND"}}"#,
            env: ["BAHN_API_KEY": ""])
        let failure = try #require(result.failure)
        #expect(failure.code == .configuration, "\(failure)")
        #expect(failure.text.contains("BAHN_API_KEY"))
        #expect(rig.bahnRequests.isEmpty)
    }

    @Test func everyErrorCodeOfTheSeedsTableHasAHint() {
        #expect(BahnProtocol.hint(forCode: "apple_pay_decryption_failed", type: nil)?.contains("CSR") == true)
        #expect(BahnProtocol.hint(forCode: "apple_pay_token_invalid", type: nil)?.contains("base64-wrapped") == true)
        #expect(
            BahnProtocol.hint(forCode: "apple_pay_token_already_used", type: nil)?.contains("same Bn-Idempotency-Key")
                == true)
        #expect(BahnProtocol.hint(forCode: "something_new", type: "authentication_error") != nil)
        #expect(BahnProtocol.hint(forCode: "something_new", type: "invalid_request_error") == nil)
    }
}
