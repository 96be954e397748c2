import COpenSSL
import Foundation
import Testing

@testable import Crypto

/// A generated root → leaf chain, as the sandbox uses for Apple Pay style fixtures.
struct Chain {
    static let merchantOID = "1.2.840.113635.100.6.29"  // Apple Pay leaf marker extension

    let rootKey = P256PrivateKey()
    let leafKey = P256PrivateKey()
    let root: Certificate
    let leaf: Certificate

    init(rootName: String = "Test Root CA") throws {
        root = try Certificate.issue(
            subjectCN: rootName, publicKey: rootKey.publicKey, issuer: nil,
            signingKey: rootKey, isCA: true, extraExtensionOIDs: [], validDays: 30)
        leaf = try Certificate.issue(
            subjectCN: "Test Leaf", publicKey: leafKey.publicKey,
            issuer: (root, rootKey), signingKey: rootKey, isCA: false,
            extraExtensionOIDs: [Chain.merchantOID], validDays: 10)
    }
}

@Suite struct CertificateTests {
    @Test func issuedChainHasExpectedFields() throws {
        let chain = try Chain()
        #expect(chain.root.subjectCommonName == "Test Root CA")
        #expect(chain.leaf.subjectCommonName == "Test Leaf")
        #expect(chain.leaf.hasExtension(oid: Chain.merchantOID))
        #expect(!chain.root.hasExtension(oid: Chain.merchantOID))
        #expect(chain.leaf.hasExtension(oid: "2.5.29.19"))  // basicConstraints
        #expect(chain.leaf.p256PublicKey == chain.leafKey.publicKey)
        #expect(chain.leaf.publicKey == .es256(chain.leafKey.publicKey))
        let now = Date()
        #expect(chain.leaf.notBefore < now && now < chain.leaf.notAfter)
        #expect(abs(chain.leaf.notAfter.timeIntervalSince(now) - 10 * 86_400) < 120)
    }

    @Test func pemAndDERRoundTrip() throws {
        let chain = try Chain()
        let pem = chain.leaf.pemRepresentation
        #expect(pem.hasPrefix("-----BEGIN CERTIFICATE-----"))
        let fromPEM = try Certificate(pem: pem)
        #expect(fromPEM == chain.leaf)
        #expect(fromPEM.derRepresentation == chain.leaf.derRepresentation)
        #expect(try Certificate(der: chain.leaf.derRepresentation) == chain.leaf)
        #expect(fromPEM.hasExtension(oid: Chain.merchantOID))
        let bundle = try Certificate.chain(pem: chain.leaf.pemRepresentation + chain.root.pemRepresentation)
        #expect(bundle == [chain.leaf, chain.root])
        #expect(try VerifyingKey(pem: pem) == .es256(chain.leafKey.publicKey))
        // A corrupt second block is an error, not a silently shorter chain.
        let corrupt = chain.leaf.pemRepresentation + "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
        #expect(throws: CryptoError.self) { try Certificate.chain(pem: corrupt) }
    }

    @Test func rejectsGarbageAndKeyMixUps() throws {
        #expect(throws: CryptoError.self) {
            try Certificate(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
        }
        #expect(throws: CryptoError.self) { try Certificate(der: Data([0x30, 0x00])) }
        let chain = try Chain()
        #expect(throws: CryptoError.self) {
            try Certificate.issue(
                subjectCN: "x", publicKey: chain.leafKey.publicKey, issuer: (chain.root, chain.rootKey),
                signingKey: chain.leafKey, isCA: false, extraExtensionOIDs: [], validDays: 1)
        }
    }

    @Test func readsOpenSSLIssuedCertificates() throws {
        let root = try Certificate(pem: OpenSSLFixture.rootPEM)
        let leaf = try Certificate(pem: OpenSSLFixture.leafPEM)
        #expect(root.subjectCommonName == "Fixture Root CA")
        #expect(leaf.subjectCommonName == "Fixture Leaf")
        #expect(leaf.hasExtension(oid: Chain.merchantOID))
        #expect(!root.hasExtension(oid: Chain.merchantOID))
    }

    @Test func errorMessageIncludesOpenSSLReason() {
        do {
            _ = try P256PublicKey(spkiDER: Data([0x30, 0x03, 0x02, 0x01, 0x01]))
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("SubjectPublicKeyInfo"))
            #expect("\(error)".contains("error:"))  // OpenSSL's error string is carried along
            #expect(!"\(error)".contains("\n"))
        }
    }
}

@Suite struct CMSTests {
    let content = Data("{\"data\":\"payment\",\"version\":\"EC_v1\"}".utf8)

    @Test func signAndVerifyDetached() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        let signers = try CMS.verifyDetached(signature: signature, content: content, trustedRoots: [chain.root])
        #expect(signers == [chain.leaf])
        // At a given time inside the validity window.
        try CMS.verifyDetached(
            signature: signature, content: content, trustedRoots: [chain.root],
            at: Date().addingTimeInterval(86_400))
    }

    @Test func intermediateTravelsInTheSignature() throws {
        let chain = try Chain()
        let intermediateKey = P256PrivateKey()
        let signerKey = P256PrivateKey()
        let intermediate = try Certificate.issue(
            subjectCN: "Intermediate", publicKey: intermediateKey.publicKey,
            issuer: (chain.root, chain.rootKey), signingKey: chain.rootKey,
            isCA: true, extraExtensionOIDs: [], validDays: 10)
        let signer = try Certificate.issue(
            subjectCN: "Signer", publicKey: signerKey.publicKey,
            issuer: (intermediate, intermediateKey), signingKey: intermediateKey,
            isCA: false, extraExtensionOIDs: [Chain.merchantOID], validDays: 5)
        let signature = try CMS.signDetached(
            content: content, signer: signer, key: signerKey,
            extraCertificates: [intermediate])
        #expect(try CMS.verifyDetached(signature: signature, content: content, trustedRoots: [chain.root]) == [signer])
        // The certificates it carries come back from the same parse, the intermediate among them.
        let verified = try CMS.verify(signature: signature, content: content, trustedRoots: [chain.root])
        #expect(verified.signers == [signer])
        #expect(verified.certificates.count == 2)
        #expect(verified.certificates.contains(intermediate) && verified.certificates.contains(signer))
        #expect(!verified.certificates.contains(chain.root))
        #expect(try Certificate(der: intermediate.derRepresentation) == intermediate)
        #expect(intermediate != signer)
        let withoutIntermediate = try CMS.signDetached(content: content, signer: signer, key: signerKey)
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(signature: withoutIntermediate, content: content, trustedRoots: [chain.root])
        }
    }

    /// The certificates a signature carries are cut off its DER and parsed once per distinct bytes; what is left is
    /// still the same SignedData, and OpenSSL still judges the whole.
    @Test func carriedCertificatesAreSplitOffAndParsedOnce() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        let bytes = [UInt8](signature)
        let (rest, field) = try #require(CMS.splitCertificates(bytes))
        #expect(rest.count == bytes.count - field.count)
        // The field's own bytes hold the leaf's DER; the rest does not.
        let leaf = [UInt8](chain.leaf.derRepresentation)
        #expect(bytes[field].firstRange(of: leaf) != nil)
        #expect(rest.firstRange(of: leaf) == nil)
        #expect(CMS.parseCertificates(bytes[field]) == [chain.leaf])
        // The rest is a SignedData that carries no certificate, so on its own no signer can be found.
        #expect(CMS.splitCertificates(rest) == nil)
        #expect(throws: CryptoError.self) {
            try CMS.verify(signature: Data(rest), content: content, trustedRoots: [chain.root])
        }
        // Verified twice, the second time from the parsed certificates kept: the same answer, the same objects.
        let first = try CMS.verify(signature: signature, content: content, trustedRoots: [chain.root])
        let again = try CMS.verify(
            signature: try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey),
            content: content, trustedRoots: [chain.root])
        #expect(first.signers == [chain.leaf] && again.signers == [chain.leaf] && again.certificates == [chain.leaf])
        // Another signer's certificates are its own, never those of the signature verified before.
        let other = try Chain()
        let theirs = try CMS.signDetached(content: content, signer: other.leaf, key: other.leafKey)
        #expect(try CMS.verify(signature: theirs, content: content, trustedRoots: [other.root]).signers == [other.leaf])
        #expect(throws: CryptoError.self) {
            try CMS.verify(signature: theirs, content: content, trustedRoots: [chain.root])
        }
    }

    /// A chain verified once is not built again while every certificate involved is valid; the signature, the content,
    /// the signer, the roots and the time are still checked every time.
    @Test func aVerifiedChainIsNotBuiltAgainButEverythingElseIsChecked() throws {
        let chain = try Chain()
        let other = try Chain()
        let rogueKey = P256PrivateKey()
        let rogue = try Certificate.issue(
            subjectCN: "Test Leaf", publicKey: rogueKey.publicKey, issuer: nil, signingKey: rogueKey,
            isCA: false, extraExtensionOIDs: [Chain.merchantOID], validDays: 10)
        // Both carry the same certificates (a SET OF, in DER order): the leaf, which chains to the root, and the rogue,
        // which is self-signed. Each is signed by one of them.
        let byLeaf = try CMS.signDetached(
            content: content, signer: chain.leaf, key: chain.leafKey, extraCertificates: [rogue])
        let byRogue = try CMS.signDetached(
            content: content, signer: rogue, key: rogueKey, extraCertificates: [chain.leaf])
        let leafField = try #require(CMS.splitCertificates([UInt8](byLeaf))).certificates
        let rogueField = try #require(CMS.splitCertificates([UInt8](byRogue))).certificates
        #expect([UInt8](byLeaf)[leafField] == [UInt8](byRogue)[rogueField])

        #expect(try CMS.verify(signature: byLeaf, content: content, trustedRoots: [chain.root]).signers == [chain.leaf])
        #expect(try CMS.verify(signature: byLeaf, content: content, trustedRoots: [chain.root]).signers == [chain.leaf])
        #expect(throws: CryptoError.self, "a signer whose chain was never verified") {
            try CMS.verify(signature: byRogue, content: content, trustedRoots: [chain.root])
        }
        #expect(throws: CryptoError.self, "other content") {
            try CMS.verify(signature: byLeaf, content: content.flippingBit(at: 3), trustedRoots: [chain.root])
        }
        #expect(throws: CryptoError.self, "another root") {
            try CMS.verify(signature: byLeaf, content: content, trustedRoots: [other.root])
        }
        #expect(throws: CryptoError.self, "after the leaf expired") {
            try CMS.verify(
                signature: byLeaf, content: content, trustedRoots: [chain.root],
                at: chain.leaf.notAfter.addingTimeInterval(86_400))
        }
        #expect(throws: CryptoError.self, "before the leaf was valid") {
            try CMS.verify(
                signature: byLeaf, content: content, trustedRoots: [chain.root],
                at: chain.leaf.notBefore.addingTimeInterval(-86_400))
        }
        #expect(
            try CMS.verify(
                signature: byLeaf, content: content, trustedRoots: [chain.root],
                at: Date().addingTimeInterval(86_400)
            ).signers == [chain.leaf])
    }

    /// DER that is not the expected SignedData shape is left whole to OpenSSL: a certificate field with a byte
    /// changed inside a certificate, a field whose length runs past its parent, a BER indefinite length.
    @Test func anythingElseIsLeftToOpenSSL() throws {
        let chain = try Chain()
        let signature = [UInt8](try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey))
        let field = try #require(CMS.splitCertificates(signature)).certificates
        var broken = signature
        let leaf = try #require(signature.firstRange(of: [UInt8](chain.leaf.derRepresentation)))
        broken[leaf.lowerBound] = 0x31  // the leaf's SEQUENCE made a SET
        #expect(CMS.parseCertificates(broken[field]) == nil)
        #expect(throws: CryptoError.self) {
            try CMS.verify(signature: Data(broken), content: content, trustedRoots: [chain.root])
        }
        var indefinite = signature
        indefinite[1] = 0x80  // the outer SEQUENCE's length made indefinite
        #expect(CMS.splitCertificates(indefinite) == nil)
        #expect(CMS.splitCertificates(Array(signature.dropLast())) == nil)
        // A length running past the bytes is an error OpenSSL's reader records; it is not left behind for the next
        // reader on this thread to take for its own.
        #expect(ERR_peek_error() == 0)
        #expect(throws: Never.self) { try Certificate(pem: OpenSSLFixture.rootPEM) }
        // Nor does a reader of PEM take an error some other call left behind for one of its blocks'.
        let junk: [UInt8] = [0x30, 0x7F]
        junk.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            #expect(d2i_X509(nil, &cursor, buffer.count) == nil)
        }
        #expect(ERR_peek_error() != 0)
        #expect(throws: Never.self) { try Certificate(pem: OpenSSLFixture.rootPEM) }
        #expect(CMS.splitCertificates(signature + [0]) == nil)
        #expect(CMS.splitCertificates([]) == nil)
    }

    @Test func otherRootFails() throws {
        let chain = try Chain()
        let other = try Chain(rootName: "Test Root CA")  // same name, different key
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        #expect {
            try CMS.verifyDetached(signature: signature, content: content, trustedRoots: [other.root])
        } throws: { error in
            "\(error)".contains("not trusted")
        }
    }

    @Test func changedContentFails() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        #expect {
            try CMS.verifyDetached(
                signature: signature, content: content.flippingBit(at: 3), trustedRoots: [chain.root])
        } throws: { error in
            "\(error)".contains("content does not match")
        }
    }

    @Test func changedSignatureByteFails() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        // The last bytes are inside the ECDSA signature value of the SignerInfo.
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(
                signature: signature.flippingBit(at: signature.count - 3), content: content,
                trustedRoots: [chain.root])
        }
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(
                signature: signature.prefix(signature.count - 1), content: content,
                trustedRoots: [chain.root])
        }
    }

    @Test func expiredAtGivenTimeFails() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(
                signature: signature, content: content, trustedRoots: [chain.root],
                at: Date().addingTimeInterval(20 * 86_400))  // leaf is valid 10 days
        }
    }

    @Test func signingTimeIsNow() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        let time = try #require(CMS.signingTime(of: signature))
        #expect(abs(time.timeIntervalSinceNow) < 60)
        #expect(CMS.signingTime(of: Data([1, 2, 3])) == nil)
    }

    /// Apple's token signatures sign content type, signing time and message digest (and CMS algorithm protection), no
    /// S/MIME capabilities; OpenSSL adds those unless told not to, looking a dozen algorithms up by name each time.
    @Test func signedAttributesHoldNoSMIMECapabilities() throws {
        let chain = try Chain()
        let signature = try CMS.signDetached(content: content, signer: chain.leaf, key: chain.leafKey)
        func oid(_ last: UInt8) -> [UInt8] { [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, last] }
        let bytes = [UInt8](signature)
        func carries(_ needle: [UInt8]) -> Bool {
            bytes.indices.contains { bytes[$0...].starts(with: needle) }
        }
        #expect(carries(oid(0x03)))  // contentType
        #expect(carries(oid(0x05)))  // signingTime
        #expect(carries(oid(0x04)))  // messageDigest
        #expect(!carries(oid(0x0F)))  // smimeCapabilities
    }

    @Test func verifiesSignatureMadeByOpenSSLCommandLine() throws {
        let root = try Certificate(pem: OpenSSLFixture.rootPEM)
        let leaf = try Certificate(pem: OpenSSLFixture.leafPEM)
        let signers = try CMS.verifyDetached(
            signature: OpenSSLFixture.signature, content: OpenSSLFixture.content,
            trustedRoots: [root])
        #expect(signers == [leaf])
        #expect(CMS.signingTime(of: OpenSSLFixture.signature) == OpenSSLFixture.signingTime)
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(
                signature: OpenSSLFixture.signature, content: Data("other".utf8), trustedRoots: [root])
        }
    }
}
