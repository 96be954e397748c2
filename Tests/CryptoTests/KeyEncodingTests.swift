import Foundation
import Testing

@testable import Crypto

/// A key's SubjectPublicKeyInfo is encoded once and kept: a fixed key (a token's recipient, the verifier's own) is
/// asked for it with every token, and encoding it again each time was a measurable share of a checkout.
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

    /// A P-256 key's SPKI is put together from its point, and is byte for byte what OpenSSL's encoder writes; the
    /// public key taken from a private one is built from the point too, and is the same key.
    @Test func aP256SPKIIsThePrefixAndThePointAsOpenSSLWritesIt() throws {
        let key = P256PrivateKey()
        let byOpenSSL = try PKeyBox.privateKey(pem: key.pemRepresentation).spkiDER
        #expect(key.publicKeySPKI == byOpenSSL)
        let publicKey = key.publicKey
        #expect(try PKeyBox.publicKey(pem: publicKey.pemRepresentation).spkiDER == byOpenSSL)
        let message = Data("signed".utf8)
        #expect(publicKey.verifyES256(signature: key.signES256(message), message: message))
        #expect(!P256PrivateKey().publicKey.verifyES256(signature: key.signES256(message), message: message))
    }

    @Test func eachKeyKeepsItsOwn() {
        let one = P256PrivateKey()
        let other = P256PrivateKey()
        #expect(one.publicKeySPKI != other.publicKeySPKI)
        #expect(one.publicKey.spkiDER == one.publicKeySPKI)
        #expect(other.publicKey.spkiDER == other.publicKeySPKI)
    }

    /// A P-256 SPKI in the usual form is read from its point, without OpenSSL's decoder chain; what it gives is what
    /// the decoder gives, a point off the curve is still refused, and any other form still goes to the decoder.
    @Test func anSPKIInTheUsualFormIsReadFromItsPoint() throws {
        let privateKey = P256PrivateKey()
        let key = privateKey.publicKey
        let spki = key.spkiDER
        #expect(spki.prefix(26) == Data(P256PublicKey.uncompressedSPKIPrefix))
        let read = try P256PublicKey(spkiDER: spki)
        #expect(read == key)
        #expect(read.x963Representation == P256PublicKey(box: try PKeyBox.publicKey(spkiDER: spki)).x963Representation)

        var offCurve = spki
        offCurve[offCurve.count - 1] ^= 0x01
        #expect(throws: CryptoError.self) { try P256PublicKey(spkiDER: offCurve) }
        // The same length and point under another algorithm identifier is not a P-256 key.
        var otherAlgorithm = spki
        otherAlgorithm[12] ^= 0x03
        #expect(throws: CryptoError.self) { try P256PublicKey(spkiDER: otherAlgorithm) }

        // The compressed form (RFC 5480 allows it) is decoded by OpenSSL into the same key: it verifies the key's
        // signatures (it keeps its form, so its encoding differs).
        let point = key.x963Representation
        let compressed =
            Data([0x30, 0x39]) + spki[2..<24] + Data([0x22, 0x00, 0x02 | (point[64] & 1)]) + point[1...32]
        let message = Data("signed".utf8)
        #expect(
            try P256PublicKey(spkiDER: compressed).verifyES256(
                signature: privateKey.signES256(message), message: message))
    }

    /// OpenSSL's SPKI decoder takes the point at infinity (the one-byte encoding 00); no P256PublicKey holds it, so an
    /// ECDH with a key from a token can only be with a valid point (ECDH relies on that and validates nothing more).
    @Test func thePointAtInfinityIsNoPublicKey() throws {
        let infinity =
            Data([0x30, 0x19]) + Data(P256PublicKey.uncompressedSPKIPrefix[2..<23]) + Data([0x03, 0x02, 0x00, 0x00])
        #expect(throws: Never.self) { try PKeyBox.publicKey(spkiDER: infinity) }
        // What OpenSSL's decoders left in this thread's error queue is not taken for a later reader's error.
        #expect(throws: Never.self) { try Certificate(pem: OpenSSLFixture.rootPEM) }
        #expect(throws: CryptoError.self) { try P256PublicKey(spkiDER: infinity) }
        #expect(throws: Never.self) { try Certificate(pem: OpenSSLFixture.rootPEM) }
        // A valid peer still agrees with its counterpart.
        let a = P256PrivateKey()
        let b = P256PrivateKey()
        #expect(a.sharedSecret(with: try P256PublicKey(spkiDER: b.publicKeySPKI)) == b.sharedSecret(with: a.publicKey))
    }
}
