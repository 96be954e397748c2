import Foundation
import SandboxEmulator
import Testing

@testable import CheckoutKit

/// Lost answers on the calls that move money: what the driver reports must be what the ledger shows.
@Suite struct BahnReconciliationTests {
    /// Faults that lose, cut short or garble the answer after the emulator committed, on every attempt; and a
    /// latency past the request timeout (the first attempt commits after the client gave up on it).
    static let lostAnswers = ["drop", "truncate=12", "malformed", "latency=2000ms"]

    @Test(arguments: lostAnswers)
    func aConfirmWhoseAnswerIsLostIsReadBackAndReportedAsCharged(fault: String) async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => \(fault) @*")
        let result = try await rig.run(BahnRig.paySteps(order: "r-\(fault.prefix(4))"), requestTimeout: 1)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent) == [.authorization, .capture], "the ledger agrees: charged once")
        #expect(
            rig.notes.contains {
                $0.contains("confirm got no trustworthy answer")
                    && $0.contains("reading the intent \(intent) back: \(intent) is succeeded: the charge went through")
            },
            "\(rig.notes)")
        let output = try #require(result.step("confirm")?.output)
        #expect(output["payment_intent"]?["status"] == "succeeded")
        #expect(output["summary"]?["last4"] == "1234", "the read-back output carries the card details too")
        #expect(output["summary"]?["idempotencyKey"] == .string("order-r-\(fault.prefix(4))-applepay"))
        #expect(
            try BahnState(store: rig.state).spentTransactions() == [try #require(result.captures["txid"]?.stringValue)])
    }

    @Test(arguments: lostAnswers)
    func aCaptureWhoseAnswerIsLostIsReadBackAndReportedAsCaptured(fault: String) async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/capture => \(fault) @*")
        let result = try await rig.run(
            BahnRig.paySteps(order: "c-\(fault.prefix(4))", confirmExtra: #","captureMethod":"manual""#) + #"""
                ,{"name":"capture","use":"bahn.capture","with":{"intent":"${vars.intent}"}}
                """#, requestTimeout: 1)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent) == [.authorization, .capture])
        #expect(
            rig.notes.contains {
                $0.contains("capture got no trustworthy answer")
                    && $0.contains("\(intent) is succeeded: the capture went through")
            },
            "\(rig.notes)")
        #expect(result.step("capture")?.output?["payment_intent"]?["status"] == "succeeded")
    }

    @Test func aCancelWhoseAnswerIsLostIsReadBackAndReportedAsCanceled() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/cancel => drop @*")
        let result = try await rig.run(
            BahnRig.paySteps(order: "x-1", confirmExtra: #","captureMethod":"manual""#) + #"""
                ,{"name":"cancel","use":"bahn.cancel","with":{"intent":"${vars.intent}"}}
                """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent) == [.authorization, .void])
        #expect(rig.notes.contains { $0.contains("\(intent) is canceled: the cancel went through") }, "\(rig.notes)")
    }

    /// A capture whose answer is lost on an intent someone canceled meanwhile is a known outcome: nothing captured.
    @Test func aLostCaptureOnACanceledIntentReadsBackAsNotCaptured() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/capture => reset @*")
        let result = try await rig.run(
            BahnRig.paySteps(order: "x-2", confirmExtra: #","captureMethod":"manual""#) + #"""
                ,{"name":"cancel","use":"bahn.cancel","with":{"intent":"${vars.intent}"}},
                {"name":"capture","use":"bahn.capture","with":{"intent":"${vars.intent}"}}
                """#)
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(failure.message.contains("capture did not happen"), "\(failure)")
        #expect(failure.message.contains("nothing was captured"))
    }

    /// When the read-back cannot settle it either, the outcome is unknown: exit 75, the charge "may have gone
    /// through" (here it did), and two ways to settle it; the re-send replays, so there is still one charge.
    @Test func aLostConfirmThatCannotBeReadBackIsUnknownAndTheReSendReplays() async throws {
        let rig = try BahnRig(
            faults: "POST /api/payment_intents/*/confirm => drop @1-3; GET /api/payment_intents/* => status=503 @1-3")
        let result = try await rig.run(BahnRig.paySteps(order: "u-1"))
        let failure = try #require(result.failure)
        #expect(failure.code == .outcomeUnknown, "\(failure)")
        #expect(failure.message.contains("outcome unknown: the charge may have gone through"), "\(failure)")
        #expect(failure.message.contains("reading the intent"), "\(failure)")
        let intent = try #require(result.captures["intent"]?.stringValue)
        let tokenFile = try #require(result.captures["token_file"]?.stringValue)
        let hint = try #require(failure.hint)
        #expect(
            hint.contains(
                "`checkout-driver bahn confirm --intent \(intent) --token-file \(tokenFile) --idempotency-key order-u-1-applepay`"
            ), "\(hint)")
        #expect(hint.contains("`checkout-driver bahn intent \(intent)`"), "\(hint)")
        #expect(
            rig.movements(intent) == [.authorization, .capture],
            "the first attempt did charge: 'may have gone through' was right")
        // The key the re-send needs is in the state file.
        let txid = try #require(result.captures["txid"]?.stringValue)
        let tokens = (try rig.stateFile()["bahn"] as? [String: Any])?["tokens"] as? [String: [String: Any]]
        #expect(tokens?[txid]?["idempotencyKey"] as? String == "order-u-1-applepay")
        #expect(tokens?[txid]?["intent"] as? String == intent)

        // The re-send the hint gives: the same key replays the original answer.
        let settle = try await rig.run(
            #"""
            {"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(intent)","tokenFile":"\#(tokenFile)","idempotencyKey":"order-u-1-applepay"}}
            """#)
        #expect(settle.passed, "\(String(describing: settle.failure))")
        #expect(settle.step("confirm")?.output?["payment_intent"]?["status"] == "succeeded")
        #expect(rig.movements(intent) == [.authorization, .capture], "still one charge")
    }

    /// A confirm that never took effect (reset before the operation, every attempt) reads back as not charged, and
    /// that still settles nothing — an attempt in flight could complete it — so it is unknown too; the re-send
    /// charges exactly once.
    @Test func aConfirmResetBeforeTheOperationIsUnknownAndTheReSendChargesOnce() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => reset @1-3")
        let result = try await rig.run(BahnRig.paySteps(order: "u-2"))
        let failure = try #require(result.failure)
        #expect(failure.code == .outcomeUnknown, "\(failure)")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(failure.message.contains("\(intent) is requires_payment_method with no new charge"), "\(failure)")
        #expect(rig.movements(intent).isEmpty)
        let tokenFile = try #require(result.captures["token_file"]?.stringValue)
        let settle = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(intent)","tokenFile":"\#(tokenFile)"}}"#)
        #expect(settle.passed, "\(String(describing: settle.failure))")
        #expect(rig.movements(intent) == [.authorization, .capture])
    }

    /// A decline whose answer was lost is a known outcome once read back: exit 1, the decline's reason, no charge.
    @Test func aLostDeclineReadsBackAsADecline() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => drop @*")
        let result = try await rig.run(BahnRig.paySteps(amount: 5100, order: "d-1"))
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(failure.message.contains("confirm was declined"), "\(failure)")
        #expect(failure.message.contains("insufficient_funds"), "\(failure)")
        #expect(failure.hint == BahnProtocol.hint(forCode: "card_declined", type: "card_error"))
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent).isEmpty)
        #expect(
            try BahnState(store: rig.state).spentTransactions() == [try #require(result.captures["txid"]?.stringValue)])
    }

    /// A 500 says nothing about whether the operation ran: read back, and here it did not.
    @Test func aServerErrorOnConfirmIsReadBackNotTakenAsAFailure() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => status=500 @*")
        let result = try await rig.run(BahnRig.paySteps(order: "s-1"))
        #expect(result.failure?.code == .outcomeUnknown, "\(String(describing: result.failure))")
        #expect(result.failure?.message.contains("Bahn answered 500") == true)
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.requests("GET", suffix: intent).count == 1, "the intent was read back")
        #expect(rig.movements(intent).isEmpty)
    }

    /// The first attempt commits and loses its answer; the next ones are refused with 503 ("not now"). That 503 does
    /// not undo the first attempt: the outcome stays open, and the read-back finds the charge.
    @Test func aLostAttemptFollowedByA503IsStillReadBack() async throws {
        let rig = try BahnRig(
            faults:
                "POST /api/payment_intents/*/confirm => drop @1; POST /api/payment_intents/*/confirm => status=503 @2-3"
        )
        let result = try await rig.run(BahnRig.paySteps(order: "m-1"))
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent) == [.authorization, .capture])
        #expect(rig.notes.contains { $0.contains("is succeeded: the charge went through") }, "\(rig.notes)")
    }

    /// The same with the read-back failing too: unknown, never a plain "unavailable, try again later".
    @Test func aLostAttemptFollowedByA503AndNoReadBackIsUnknown() async throws {
        let rig = try BahnRig(
            faults:
                "POST /api/payment_intents/*/confirm => drop @1; POST /api/payment_intents/*/confirm => status=503 @2-3; GET /api/payment_intents/* => status=503 @*"
        )
        let result = try await rig.run(BahnRig.paySteps(order: "m-2"))
        #expect(result.failure?.code == .outcomeUnknown, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(rig.movements(intent) == [.authorization, .capture], "it did charge: unknown was the honest answer")
    }

    /// A read that only enriches the result (the PaymentMethod, for the last 4) never fails a confirm that succeeded.
    @Test func aFailedPaymentMethodReadIsAWarningNotAFailure() async throws {
        let rig = try BahnRig(faults: "GET /api/payment_methods/* => status=500 @*")
        let result = try await rig.run(BahnRig.paySteps(order: "pm-1"))
        #expect(result.passed, "\(String(describing: result.failure))")
        let output = try #require(result.step("confirm")?.output)
        #expect(output["payment_intent"]?["status"] == "succeeded")
        #expect(output["payment_method"] == nil)
        #expect(output["summary"]?["last4"] == nil)
        let pm = try #require(output["payment_intent"]?["payment_method_id"]?.stringValue)
        #expect(
            rig.notes.contains { $0.hasPrefix("warning: the payment method \(pm) (card brand and last 4) is missing") },
            "\(rig.notes)")
    }

    /// The deadline passing mid-exchange leaves nothing to read back with: unknown, at once.
    @Test func aConfirmCutShortByTheDeadlineIsUnknown() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => latency=3000ms @*")
        let json = #"{"name":"bahn-test","deadline":"1.5s","steps":[\#(BahnRig.paySteps(order: "dl-1"))]}"#
        let flow = try FlowFile.decode(Data(json.utf8), source: "test.json", registry: BahnRig.registry)
        let started = ContinuousClock.now
        let result = await rig.runner().run(flow)
        #expect(result.failure?.code == .outcomeUnknown, "\(String(describing: result.failure))")
        #expect(
            result.failure?.message.contains("no time is left to read the intent") == true,
            "\(String(describing: result.failure))")
        #expect(ContinuousClock.now - started < .seconds(3))
    }
}

@Suite struct BahnReconciliationAfterADeclineTests {
    /// An intent this state file never saw may carry an earlier decline: its charge is read before the confirm, so a
    /// read-back can tell it from this attempt's.
    @Test func aDeclineMadeElsewhereIsNotTakenForThisAttempts() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => reset @2-4")
        let declined = try await rig.run(BahnRig.paySteps(amount: 5100, order: "el-1"))
        #expect(declined.failure?.code == .failure)
        let intent = try #require(declined.captures["intent"]?.stringValue)
        let token = try rig.makeToken(amount: 5100)
        let elsewhere = StateStore(path: rig.directory + "/elsewhere.json")
        let retry = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(intent)","tokenFile":"\#(token.path)"}}"#,
            state: elsewhere)
        #expect(retry.failure?.code == .outcomeUnknown, "\(String(describing: retry.failure))")
        #expect(retry.failure?.message.contains("with no new charge") == true, "\(String(describing: retry.failure))")
        #expect(rig.requests("GET", suffix: intent).count == 2, "read before the confirm, and back after it")
    }

    /// After a decline the intent carries that attempt's charge and error. A new token's confirm whose every attempt
    /// was reset never reached Bahn: the read-back must not take the earlier decline for this attempt's.
    @Test func aLostConfirmAfterAnEarlierDeclineIsNotMistakenForADecline() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => reset @2-4")
        let declined = try await rig.run(BahnRig.paySteps(amount: 5100, order: "dd-1"))
        #expect(declined.failure?.code == .failure, "\(String(describing: declined.failure))")
        let intent = try #require(declined.captures["intent"]?.stringValue)

        let retry = try await rig.run(
            #"""
            {"name":"make-token","use":"applepay.makeToken","with":{"amount":5100,"currency":"704"},"capture":{"token_file":"path"}},
            {"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(intent)","tokenFile":"${vars.token_file}"}}
            """#)
        let failure = try #require(retry.failure)
        #expect(failure.code == .outcomeUnknown, "\(failure)")
        #expect(failure.message.contains("with no new charge"), "\(failure)")
    }

    /// A read of an intent waiting for its capture settles an open confirm (it authorised) but not an open capture.
    @Test func anAuthorisedIntentSettlesTheConfirmButNotTheCapture() async throws {
        let rig = try BahnRig()
        let paid = try await rig.run(
            BahnRig.paySteps(order: "s-1", confirmExtra: #","captureMethod":"manual""#), state: rig.state)
        #expect(paid.passed, "\(String(describing: paid.failure))")
        let intent = try #require(paid.captures["intent"]?.stringValue)
        let store = rig.state
        let read = #"{"name":"read","use":"bahn.getIntent","with":{"intent":"\#(intent)"}}"#
        func open(_ effect: String) throws {
            try OpenOutcomes.record(
                OpenOutcome(
                    provider: "bahn", reference: "intent \(intent)", replay: nil, effect: effect,
                    settle: ["bahn intent \(intent)"], since: "2026-12-02T00:00:00Z"), in: store)
        }
        try open("the capture")
        #expect(try await rig.run(read, state: store).passed)
        #expect(
            try OpenOutcomes.read(store).map(\.effect) == ["the capture"],
            "an authorised intent does not show a capture")
        try open(BahnReadBack.confirmEffect)
        #expect(try await rig.run(read, state: store).passed)
        #expect(try OpenOutcomes.read(store).isEmpty, "it shows the confirm went through")
        #expect(
            rig.notes.contains {
                $0.contains("settled: the charge of intent \(intent)") && $0.contains("the confirm authorised it")
            }, "\(rig.notes)")
    }
}
