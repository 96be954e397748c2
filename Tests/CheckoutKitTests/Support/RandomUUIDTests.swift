import Foundation
import Testing

@testable import CheckoutKit

@Suite struct RandomUUIDTests {
    /// Version 4, RFC 4122's variant, and random: what a request id or an idempotency key must be.
    @Test func isARandomVersionFourUUID() {
        let ids = (0..<200).map { _ in UUID.random() }
        #expect(Set(ids).count == 200)
        for id in ids {
            let text = id.uuidString
            #expect(text.count == 36)
            let characters = Array(text)
            #expect(characters[14] == "4", "version 4: \(text)")
            #expect("89AB".contains(characters[19]), "RFC 4122 variant: \(text)")
        }
        // Every other digit varies: over 200 ids each takes more than four values (the version and variant digits do
        // not).
        for position in 0..<36 where ![8, 13, 14, 18, 19, 23].contains(position) {
            #expect(Set(ids.map { Array($0.uuidString)[position] }).count > 4, "position \(position)")
        }
    }
}
