import Crypto
import Foundation
import Testing

@testable import SandboxEmulator

@Suite struct ApplePayTokenVerifierTests {
    let verifier = ApplePayTokenVerifier.emulator

    private func expectError(
        _ token: Data, using verifier: ApplePayTokenVerifier = .emulator, now: Date = Date(),
        _ matches: (ApplePayTokenError) -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        do {
            _ = try verifier.open(token, now: now)
            Issue.record("expected the token to be refused", sourceLocation: sourceLocation)
        } catch {
            #expect(matches(error), "unexpected error: \(error)", sourceLocation: sourceLocation)
        }
    }

    private static func isSignature(_ e: ApplePayTokenError) -> Bool { if case .signature = e { true } else { false } }
    private static func isDecryption(_ e: ApplePayTokenError) -> Bool {
        if case .decryption = e { true } else { false }
    }
    private static func isMalformed(_ e: ApplePayTokenError) -> Bool { if case .malformed = e { true } else { false } }

    @Test func opensAGoodToken() throws {
        let token = try TestApplePayToken.make(amount: 8000, currency: "704", pan: "4817499999994242")
        let opened = try verifier.open(token.bytes)
        #expect(opened.transactionId == token.transactionId)
        #expect(opened.pan == "4817499999994242")
        #expect(opened.amount == 8000)
        #expect(opened.currencyCode == "704")
        #expect(opened.expiration == "301231")
        #expect(opened.eci == "7")
        #expect(opened.cryptogram == "AgAAAAAABk4DWZ4C28yUQAAAAAA=")
    }

    @Test func oneByteChangesBreakTheSignature() throws {
        let token = try TestApplePayToken.make()
        var changedData = token
        changedData.data = token.data.changingByte(at: 5)
        expectError(changedData.bytes, Self.isSignature)

        var changedSignature = token
        changedSignature.signature = token.signature.changingByte(at: -10)
        expectError(changedSignature.bytes) { Self.isSignature($0) || Self.isMalformed($0) }

        var changedTransaction = token
        changedTransaction.transactionId = Data(hex: token.transactionId)!.changingByte(at: 0).hexString
        expectError(changedTransaction.bytes, Self.isSignature)

        var changedKey = token
        changedKey.ephemeralPublicKey = token.ephemeralPublicKey.changingByte(at: -1)
        expectError(changedKey.bytes) { Self.isSignature($0) || Self.isMalformed($0) }
    }

    /// Apple's signature covers header.applicationData too (the hash of the app's applicationData): a token that
    /// carries it opens, and one whose applicationData was changed by one hex digit fails the signature check.
    @Test func applicationDataIsPartOfTheSignedContent() throws {
        let hash = Digest.sha256(Data(#"{"orderRef":"1234"}"#.utf8))
        let token = try TestApplePayToken.make(applicationData: hash)
        #expect(token.json.contains(#""applicationData":"\#(hash.hexString)""#))
        #expect(try verifier.open(token.bytes).transactionId == token.transactionId)

        for index in [0, 31, 63] {
            var changed = token
            changed.applicationData = hash.hexString.changingHexDigit(at: index)
            #expect(changed.applicationData != token.applicationData)
            expectError(changed.bytes, Self.isSignature)
        }
        var dropped = token
        dropped.applicationData = nil
        expectError(dropped.bytes, Self.isSignature)
        var notHex = token
        notHex.applicationData = "zz" + hash.hexString.dropFirst(2)
        expectError(notHex.bytes, Self.isMalformed)
    }

    @Test func rejectsAnUntrustedRoot() throws {
        let otherRootKey = P256PrivateKey()
        let otherRoot = try Certificate.issue(
            subjectCN: "Other Root", publicKey: otherRootKey.publicKey, issuer: nil,
            signingKey: otherRootKey, isCA: true)
        let strict = ApplePayTokenVerifier(
            trustedRoot: otherRoot,
            processingKey: try P256PrivateKey(pem: TestCredentials.paymentProcessingPrivateKeyPEM),
            merchantIdentifier: TestCredentials.merchantIdentifier)
        expectError(try TestApplePayToken.make().bytes, using: strict, Self.isSignature)
    }

    @Test func rejectsAMissingIntermediate() throws {
        // Signed by the leaf but carrying no intermediate: the chain cannot be built to the root.
        expectError(try TestApplePayToken.make(intermediates: []).bytes, Self.isSignature)
    }

    @Test func wrongMerchantIdentifierFailsDecryption() throws {
        expectError(try TestApplePayToken.make(merchantIdentifier: "merchant.some.other").bytes, Self.isDecryption)
    }

    @Test func wrongProcessingKeyHashFailsDecryption() throws {
        var token = try TestApplePayToken.make()
        token.publicKeyHash = Digest.sha256(Data("not our key".utf8)).base64EncodedString()
        expectError(token.bytes, Self.isDecryption)
    }

    @Test func badVersionAndBadJSONAreMalformed() throws {
        var token = try TestApplePayToken.make()
        token.version = "RSA_v1"
        expectError(token.bytes, Self.isMalformed)
        expectError(Data("not json".utf8), Self.isMalformed)
        expectError(Data(try TestApplePayToken.make().bytes.base64EncodedString().utf8), Self.isMalformed)
    }

    @Test func signatureAgeIsCheckedWhenLimited() throws {
        let limited = ApplePayTokenVerifier(
            trustedRoot: try Certificate(pem: TestCredentials.applePayRootCertificatePEM),
            processingKey: try P256PrivateKey(pem: TestCredentials.paymentProcessingPrivateKeyPEM),
            merchantIdentifier: TestCredentials.merchantIdentifier, maxSignatureAge: 300)
        let token = try TestApplePayToken.make()
        #expect(try limited.open(token.bytes).transactionId == token.transactionId)
        #expect(try limited.open(token.bytes, now: Date().addingTimeInterval(250)).amount == 8000, "within the limit")
        expectError(token.bytes, using: limited, now: Date().addingTimeInterval(3600), Self.isSignature)
        expectError(token.bytes, using: limited, now: Date().addingTimeInterval(-600), Self.isSignature)
    }

    @Test func requiresAppleMarkerExtensions() throws {
        // A private chain where exactly one marker is missing at a time.
        let rootKey = P256PrivateKey()
        let root = try Certificate.issue(
            subjectCN: "Root", publicKey: rootKey.publicKey, issuer: nil, signingKey: rootKey, isCA: true)
        func chain(intermediateOIDs: [String], leafOIDs: [String]) throws -> (Certificate, P256PrivateKey, Certificate)
        {
            let midKey = P256PrivateKey()
            let mid = try Certificate.issue(
                subjectCN: "Intermediate", publicKey: midKey.publicKey, issuer: (root, rootKey),
                signingKey: rootKey, isCA: true, extraExtensionOIDs: intermediateOIDs)
            let leafKey = P256PrivateKey()
            let leaf = try Certificate.issue(
                subjectCN: "Leaf", publicKey: leafKey.publicKey, issuer: (mid, midKey),
                signingKey: midKey, isCA: false, extraExtensionOIDs: leafOIDs)
            return (leaf, leafKey, mid)
        }
        let verifier = ApplePayTokenVerifier(
            trustedRoot: root,
            processingKey: try P256PrivateKey(pem: TestCredentials.paymentProcessingPrivateKeyPEM),
            merchantIdentifier: TestCredentials.merchantIdentifier)
        let good = try chain(
            intermediateOIDs: [ApplePayTokenVerifier.intermediateOID], leafOIDs: [ApplePayTokenVerifier.leafOID])
        let signedByGood = try TestApplePayToken.make(signer: (good.0, good.1), intermediates: [good.2])
        #expect(try verifier.open(signedByGood.bytes).transactionId == signedByGood.transactionId)

        let noLeafMarker = try chain(intermediateOIDs: [ApplePayTokenVerifier.intermediateOID], leafOIDs: [])
        expectError(
            try TestApplePayToken.make(signer: (noLeafMarker.0, noLeafMarker.1), intermediates: [noLeafMarker.2]).bytes,
            using: verifier
        ) { $0 == .signature("the signing certificate lacks the Apple Pay leaf marker 1.2.840.113635.100.6.29") }
        let noMidMarker = try chain(intermediateOIDs: [], leafOIDs: [ApplePayTokenVerifier.leafOID])
        expectError(
            try TestApplePayToken.make(signer: (noMidMarker.0, noMidMarker.1), intermediates: [noMidMarker.2]).bytes,
            using: verifier
        ) { if case .signature(let m) = $0 { m.contains("intermediate") } else { false } }
        // A leaf that carries the intermediate's marker as well does not stand in for the intermediate.
        let leafWithBoth = try chain(
            intermediateOIDs: [],
            leafOIDs: [ApplePayTokenVerifier.leafOID, ApplePayTokenVerifier.intermediateOID])
        expectError(
            try TestApplePayToken.make(signer: (leafWithBoth.0, leafWithBoth.1), intermediates: [leafWithBoth.2]).bytes,
            using: verifier
        ) { if case .signature(let m) = $0 { m.contains("intermediate") } else { false } }
    }

    @Test func acceptsIndefiniteLengthSignatures() throws {
        // Apple's real signatures are BER with an indefinite-length outer SEQUENCE ("MIAG..."): re-frame ours that way.
        var token = try TestApplePayToken.make()
        let der = [UInt8](token.signature)
        #expect(der[0] == 0x30 && der[1] & 0x80 != 0)
        let headerLength = 2 + Int(der[1] & 0x7F)
        token.signature = Data([0x30, 0x80] + der[headerLength...] + [0x00, 0x00])
        #expect(token.signature.base64EncodedString().hasPrefix("MIA"))
        #expect(try verifier.open(token.bytes).transactionId == token.transactionId)
    }
}
