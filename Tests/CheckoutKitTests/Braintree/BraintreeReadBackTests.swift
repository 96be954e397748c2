import Testing

@testable import CheckoutKit

/// The rules that decide what a Braintree money call whose answer was lost did, from what the read-back finds.
@Suite struct BraintreeReadBackTests {
    static func transaction(_ id: String, _ status: String, amount: String = "10.00") -> JSON {
        [
            "id": .string(id), "status": .string(status), "amount": ["value": .string(amount), "currencyCode": "USD"],
            "orderId": "o-1",
        ]
    }

    @Test func aChargeIsTheOneTransactionOfItsAmount() {
        let found = BraintreeReadBack.finding(
            [
                Self.transaction("t-other", "SETTLED", amount: "99.00"),
                Self.transaction("t-1", "SUBMITTED_FOR_SETTLEMENT"),
            ],
            orderID: "o-1", amount: "10.00", action: "charge")
        #expect(found.described == "took: transaction t-1 is SUBMITTED_FOR_SETTLEMENT")
        #expect(found.output?.document["transaction"]?["id"] == "t-1")
    }

    @Test func aTransactionOfAnotherAmountIsNotThisCalls() {
        let found = BraintreeReadBack.finding(
            [Self.transaction("t-other", "SETTLED", amount: "99.00")], orderID: "o-1", amount: "10.00", action: "charge"
        )
        #expect(found.described == "not seen: no transaction of 10.00 has orderId o-1")
    }

    @Test func twoTransactionsOfTheAmountCannotTellWhichOneThisCallMade() {
        let found = BraintreeReadBack.finding(
            [Self.transaction("t-1", "PROCESSOR_DECLINED"), Self.transaction("t-2", "SETTLED")],
            orderID: "o-1", amount: "10.00", action: "charge")
        #expect(
            found.described
                == "not seen: order o-1 has 2 transactions of 10.00, so which one this charge made cannot be told")
    }

    /// Every status in which nothing moved is a refusal — on a read-back as in a direct answer.
    @Test(arguments: ["PROCESSOR_DECLINED", "FAILED", "GATEWAY_REJECTED", "SETTLEMENT_DECLINED"])
    func aRefusedTransactionMeansNothingWasCharged(status: String) throws {
        let found = BraintreeReadBack.finding(
            [Self.transaction("t-1", status)], orderID: "o-1", amount: "10.00", action: "authorization")
        #expect(found.described == "refused: Braintree refused the authorization: transaction t-1 is \(status)")
        #expect(throws: Diagnostic.self) {
            try BraintreeOperations.outcome(Self.transaction("t-1", status), action: "charge", orderID: "o-1")
        }
    }

    @Test(arguments: [
        "AUTHORIZED", "AUTHORIZING", "SUBMITTED_FOR_SETTLEMENT", "SETTLING", "SETTLED", "SETTLEMENT_PENDING",
        "SETTLEMENT_CONFIRMED",
    ])
    func anAcceptedTransactionTookTheMoney(status: String) throws {
        let found = BraintreeReadBack.finding(
            [Self.transaction("t-1", status)], orderID: "o-1", amount: "10.00", action: "charge")
        #expect(found.described == "took: transaction t-1 is \(status)")
        #expect(
            try BraintreeOperations.outcome(Self.transaction("t-1", status), action: "charge", orderID: "o-1").document[
                "transaction"]?["id"] == "t-1")
    }

    /// A capture went through only once the transaction is submitted for settlement or beyond; a void only once VOIDED.
    @Test(arguments: [
        ("AUTHORIZED", false), ("SUBMITTED_FOR_SETTLEMENT", true), ("SETTLING", true), ("SETTLED", true),
        ("SETTLEMENT_PENDING", true), ("SETTLEMENT_CONFIRMED", true), ("VOIDED", false),
    ])
    func aCaptureIsSeenOnlyInACapturedStatus(status: String, captured: Bool) {
        let found = BraintreeReadBack.finding(
            Self.transaction("t-1", status), id: "t-1", action: "capture", done: BraintreeProtocol.capturedStatuses)
        #expect(
            found.described
                == (captured ? "took: t-1 is \(status): the capture went through" : "not seen: t-1 is still \(status)"))
        let void = BraintreeReadBack.finding(
            Self.transaction("t-1", status), id: "t-1", action: "void", done: BraintreeProtocol.voidedStatuses)
        #expect(void.described.hasPrefix(status == "VOIDED" ? "took:" : "not seen:"))
    }

    /// An answer whose transaction is in a status that does not show the action went through fails, naming it.
    @Test func anAnswerInAStatusThatShowsNothingDoneFails() throws {
        #expect(throws: Diagnostic.self) {
            try BraintreeOperations.outcome(
                Self.transaction("t-1", "AUTHORIZATION_EXPIRED"), action: "charge", orderID: "o-1")
        }
        #expect(throws: Diagnostic.self) {
            try BraintreeOperations.outcome(
                Self.transaction("t-1", "AUTHORIZED"), action: "capture", orderID: nil,
                accepted: BraintreeProtocol.capturedStatuses)
        }
        let voided = try BraintreeOperations.outcome(
            Self.transaction("t-1", "VOIDED"), action: "void", orderID: nil, accepted: BraintreeProtocol.voidedStatuses)
        #expect(voided.document["transaction"]?["status"] == "VOIDED")
        do {
            _ = try BraintreeOperations.outcome(Self.transaction("t-9", "VOIDED"), action: "charge", orderID: "o-1")
            Issue.record("a VOIDED charge passed")
        } catch {
            #expect(
                error.message
                    == "Braintree answered the charge with transaction t-9 in status VOIDED, which does not show that it went through"
            )
            #expect(error.code == .failure)
        }
    }

    /// A transaction the order already had before the call (a reused order id) is never this call's.
    @Test func aTransactionThatWasThereBeforeIsNotThisCalls() {
        let old = Self.transaction("t-old", "PROCESSOR_DECLINED")
        let new = Self.transaction("t-new", "SUBMITTED_FOR_SETTLEMENT")
        #expect(
            BraintreeReadBack.finding([old, new], orderID: "o-1", amount: "10.00", action: "charge", prior: ["t-old"])
                .described
                == "took: transaction t-new is SUBMITTED_FOR_SETTLEMENT")
        #expect(
            BraintreeReadBack.finding([old], orderID: "o-1", amount: "10.00", action: "charge", prior: ["t-old"])
                .described
                == "not seen: no transaction of 10.00 has orderId o-1",
            "the earlier decline says nothing of this charge")
    }

    /// A transaction in a status that holds no money settles nothing: whether this call made it cannot be told.
    @Test(arguments: ["VOIDED", "AUTHORIZATION_EXPIRED"])
    func aTransactionThatHoldsNoMoneySettlesNothing(status: String) {
        #expect(
            BraintreeReadBack.finding(
                [Self.transaction("t-1", status)], orderID: "o-1", amount: "10.00", action: "charge"
            ).described
                == "not seen: transaction t-1 is \(status), which holds no money")
    }
}
