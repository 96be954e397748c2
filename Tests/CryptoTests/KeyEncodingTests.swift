@testable import Crypto
import Foundation
import Testing

/// A key's SubjectPublicKeyInfo is encoded once and kept: a fixed key (a token's recipient, the verifier's own) is asked
/// for it with every token, and encoding it again each time was a measurable share of a checkout.
@Suite struct KeyEncodingTests {
    @Test func aKeysSPKIIsEncodedOnceAndKept() throws {
        let key = P256PrivateKey()
        #expect(!key.box.keepsSPKI)
        let first = key.publicKeySPKI
        #expect(key.box.keepsSPKI)
        #expect(key.publicKeySPKI == first)
        // P-256's SubjectPublicKeyInfo: a 26-byte algorithm prefix, then the uncompressed point.
        #expect(first.count == 91)
        // The public key made from the private one starts with the same encoding kept, and it is that key's.
        let publicKey = key.publicKey
        #expect(publicKey.box.keepsSPKI)
        #expect(publicKey.spkiDER == first)
        #expect(try P256PublicKey(spkiDER: first).x963Representation == publicKey.x963Representation)
        #expect(first.suffix(65) == publicKey.x963Representation)
    }

    @Test func eachKeyKeepsItsOwn() {
        let one = P256PrivateKey(), other = P256PrivateKey()
        #expect(one.publicKeySPKI != other.publicKeySPKI)
        #expect(one.publicKey.spkiDER == one.publicKeySPKI)
        #expect(other.publicKey.spkiDER == other.publicKeySPKI)
    }
}
