import Testing
import WireTypes

@testable import CheckoutKit

@Suite struct IdentityMemoTests {
    private struct Refused: Error {}

    /// The very value given again costs nothing; a value built anew is worked out again, even when equal (telling
    /// equal values apart would walk them, which is what the memo saves), and a changed one is too.
    @Test func aResultHoldsForTheVeryValueItCameFrom() {
        let memo = IdentityMemo<Int>()
        var worked = 0
        let first: JSON = ["token": "tok_1", "amount": 1000]
        #expect(
            memo.result("run-1", of: first) {
                worked += 1
                return 1
            } == 1)
        let handedRound = first
        #expect(
            memo.result("run-1", of: handedRound) {
                worked += 1
                return 2
            } == 1)
        #expect(worked == 1)
        let rebuilt: JSON = ["token": "tok_1", "amount": 1000]
        #expect(
            memo.result("run-1", of: rebuilt) {
                worked += 1
                return 3
            } == 3)
        let changed: JSON = ["token": "tok_2", "amount": 1000]
        #expect(
            memo.result("run-1", of: changed) {
                worked += 1
                return 4
            } == 4)
        // Another key has a result of its own, even for the same value.
        #expect(
            memo.result("run-2", of: changed) {
                worked += 1
                return 5
            } == 5)
        #expect(worked == 4)
    }

    @Test func aRefusedValueKeepsNothing() throws {
        let memo = IdentityMemo<Int>()
        let value: JSON = ["broken": true]
        #expect(throws: Refused.self) {
            try memo.result("k", of: value) { () throws(Refused) -> Int in throw Refused() }
        }
        var worked = false
        #expect(
            memo.result("k", of: value) {
                worked = true
                return 7
            } == 7)
        #expect(worked)
    }

    /// Keys no longer current go once they outnumber the current ones: worked out again if they come back.
    @Test func keysGoneAreForgottenOnceTheyPileUp() {
        let memo = IdentityMemo<String>()
        let values = (0..<40).map { JSON.object(["n": .number(Double($0))]) }
        for (i, value) in values.enumerated() { _ = memo.result("run-\(i)", of: value) { "first" } }
        memo.trim(current: 30) { _ in true }
        #expect(memo.result("run-0", of: values[0]) { "again" } == "first")
        memo.trim(current: 2) { $0 == "run-39" || $0 == "run-38" }
        #expect(memo.result("run-39", of: values[39]) { "again" } == "first")
        #expect(memo.result("run-0", of: values[0]) { "again" } == "again")
    }
}
