import Testing

@testable import CheckoutKit

/// The rules that decide what a Cash App (Afterpay) money call whose answer was lost did, from what the read-back
/// finds.
@Suite struct CashAppReadBackTests {
    static func payment(_ status: String, _ paymentState: String) -> JSON {
        [
            "id": "100101", "status": .string(status), "paymentState": .string(paymentState),
            "originalAmount": ["amount": "20.00", "currency": "USD"],
            "openToCaptureAmount": ["amount": "0.00", "currency": "USD"],
        ]
    }

    /// A capture is seen only in CAPTURED; an authorisation in any state that holds or took the money.
    @Test(arguments: [("CAPTURED", true, true), ("AUTH_APPROVED", false, true), ("PARTIALLY_CAPTURED", false, true)])
    func onlyAStateThatShowsTheCallIsItsEffect(state: String, capture: Bool, auth: Bool) {
        let p = Self.payment("APPROVED", state)
        let asCapture = CashAppPayments.finding(p, action: "capture", done: ["CAPTURED"])
        #expect(
            asCapture.described
                == (capture ? "took: order 100101 is \(state)" : "not seen: the checkout's payment is \(state)"))
        let asAuth = CashAppPayments.finding(
            p, action: "auth", done: ["AUTH_APPROVED", "PARTIALLY_CAPTURED", "CAPTURED"])
        #expect(asAuth.described.hasPrefix(auth ? "took:" : "not seen:"))
    }

    @Test func aDeclinedPaymentMeansNothingWasCharged() {
        let found = CashAppPayments.finding(
            Self.payment("DECLINED", "AUTH_DECLINED"), action: "capture", done: ["CAPTURED"])
        #expect(found.described == "refused: Afterpay declined the capture: paymentState AUTH_DECLINED")
    }

    /// A lost deferred capture went through only if the order shows a capture and what is open dropped by its whole
    /// amount: a void or an expiry empties what is open too, and captures nothing.
    @Test(arguments: [
        (2000, 2000, 0, "CAPTURED", true), (2000, 1500, 500, "PARTIALLY_CAPTURED", true),
        (2000, 1500, 1000, "PARTIALLY_CAPTURED", false), (2000, 1500, 1500, "AUTH_APPROVED", false),
        (2000, 1500, 400, "PARTIALLY_CAPTURED", true), (2000, 1500, 0, "VOIDED", false),
        (2000, 1500, 0, "EXPIRED", false),
    ])
    func aDeferredCaptureIsSeenWhenTheOpenAmountDroppedByIt(
        open: Int, amount: Int, left: Int, state: String, captured: Bool
    ) {
        #expect(CashAppPayments.captured(amount, open: open, leftOpen: left, paymentState: state) == captured)
        #expect(!CashAppPayments.captured(amount, open: open, leftOpen: left, paymentState: nil))
    }
}
