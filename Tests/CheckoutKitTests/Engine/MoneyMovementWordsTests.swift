import Testing

@testable import CheckoutKit

/// A provider's statuses as a movement reports them: in lower case, words apart, the empty and absent left out.
@Suite struct MoneyMovementWordsTests {
    @Test func statusesReadAsWords() {
        #expect(MoneyMovement.words("REQUIRES_CAPTURE") == "requires capture")
        #expect(
            MoneyMovement.words("APPROVED", nil, "", "CAPTURE_PENDING_SETTLEMENT")
                == "approved, capture pending settlement")
        #expect(MoneyMovement.words(nil) == "")
    }
}
