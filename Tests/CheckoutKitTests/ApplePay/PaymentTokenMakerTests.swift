import Crypto
import Foundation
import SandboxEmulator
import Testing

@testable import CheckoutKit

@Suite struct PaymentTokenMakerTests {
    let recipient = try! P256PublicKey(pem: TestCredentials.paymentProcessingPublicKeyPEM)
    let signer = try! PaymentTokenSigner(
        leafPEM: TestCredentials.applePayLeafCertificatePEM,
        leafKeyPEM: TestCredentials.applePayLeafPrivateKeyPEM,
        intermediatePEMs: [TestCredentials.applePayIntermediateCertificatePEM])

    func request(applicationData: Data? = nil) -> PaymentTokenRequest {
        PaymentTokenRequest(
            amount: 8000, currencyNumeric: "704", merchantIdentifier: TestCredentials.merchantIdentifier,
            expiration: "291130", applicationData: applicationData)
    }

    func object(_ token: MadeToken) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: token.bytes) as? [String: Any])
    }

    /// The bytes the signature covers, rebuilt from the token by the verifier's rules.
    func signedContent(_ token: [String: Any]) throws -> Data {
        let header = try #require(token["header"] as? [String: String])
        var content = try #require(Data(base64Encoded: header["ephemeralPublicKey"] ?? ""))
        content += try #require(Data(base64Encoded: token["data"] as? String ?? ""))
        content += try #require(Data(hex: header["transactionId"] ?? ""))
        if let applicationData = header["applicationData"] { content += try #require(Data(hex: applicationData)) }
        return content
    }

    @Test func hasExactlyTheDocumentedShapeAndKeyOrder() throws {
        let made = try PaymentTokenMaker.make(request(), recipient: recipient, signer: signer)
        let text = try #require(String(data: made.bytes, encoding: .utf8))
        let b64 = "[A-Za-z0-9+/]+=*"
        let pattern =
            #"\{"data":"\#(b64)","signature":"\#(b64)","header":\{"ephemeralPublicKey":"\#(b64)","publicKeyHash":"\#(b64)","transactionId":"[0-9a-f]{64}"\},"version":"EC_v1"\}"#
        #expect(try Regex(pattern).wholeMatch(in: text) != nil, "\(text)")
        #expect(text.contains("\"transactionId\":\"\(made.transactionId)\""))
    }

    @Test func applicationDataIsHashedIntoTheHeader() throws {
        let appData = Data("order-1234".utf8)
        let made = try PaymentTokenMaker.make(request(applicationData: appData), recipient: recipient, signer: signer)
        let header = try #require(try object(made)["header"] as? [String: String])
        #expect(header["applicationData"] == Digest.sha256(appData).hexString)
        let text = String(decoding: made.bytes, as: UTF8.self)
        #expect(text.contains("\"header\":{\"applicationData\":"))
    }

    @Test func publicKeyHashIsTheRecipientSPKIHash() throws {
        let made = try PaymentTokenMaker.make(request(), recipient: recipient, signer: signer)
        let header = try #require(try object(made)["header"] as? [String: String])
        #expect(header["publicKeyHash"] == Digest.sha256(recipient.spkiDER).base64EncodedString())
    }

    @Test func kdfOtherInfoMatchesAppleTable() {
        var expected: [UInt8] = [0x0D]
        expected += Array("id-aes256-GCM".utf8)  // AlgorithmID, length-prefixed
        expected += [0x41, 0x70, 0x70, 0x6C, 0x65]  // PartyUInfo "Apple"
        expected += Array(Digest.sha256(Data("merchant.example".utf8)))  // PartyVInfo
        #expect(PaymentTokenMaker.kdfOtherInfo(merchantIdentifier: "merchant.example") == Data(expected))
        #expect(expected.count == 1 + 13 + 5 + 32)
    }

    @Test func decryptsWithTheProcessingPrivateKey() throws {
        let made = try PaymentTokenMaker.make(request(), recipient: recipient, signer: signer)
        let token = try object(made)
        let header = try #require(token["header"] as? [String: String])

        // Independent path: the processor's side, built from Apple's steps rather than the maker's helpers.
        let processingKey = try P256PrivateKey(pem: TestCredentials.paymentProcessingPrivateKeyPEM)
        let ephemeral = try P256PublicKey(
            spkiDER: try #require(Data(base64Encoded: header["ephemeralPublicKey"] ?? "")))
        let z = processingKey.sharedSecret(with: ephemeral)
        let otherInfo =
            Data([0x0D]) + Data("id-aes256-GCM".utf8) + Data("Apple".utf8)
            + Digest.sha256(Data(TestCredentials.merchantIdentifier.utf8))
        let key = ConcatKDF.sha256(sharedSecret: z, otherInfo: otherInfo, length: 32)
        let data = try #require(Data(base64Encoded: token["data"] as? String ?? ""))
        let plaintext = try AESGCM.open(
            key: key, iv: Data(count: 16), ciphertext: data.dropLast(16), tag: data.suffix(16))

        let payment = try #require(try JSONSerialization.jsonObject(with: plaintext) as? [String: Any])
        #expect(payment["applicationPrimaryAccountNumber"] as? String == PaymentTokenMaker.testDPAN)
        #expect(payment["applicationExpirationDate"] as? String == "291130")
        #expect(payment["currencyCode"] as? String == "704")
        #expect((payment["transactionAmount"] as? NSNumber)?.intValue == 8000)
        #expect(payment["paymentDataType"] as? String == "3DSecure")
        #expect(payment["deviceManufacturerIdentifier"] as? String == "040010030273")
        let details = try #require(payment["paymentData"] as? [String: String])
        #expect(Data(base64Encoded: details["onlinePaymentCryptogram"] ?? "")?.count == 20)
        #expect(details["eciIndicator"] == "7")
    }

    @Test func signatureVerifiesAgainstTheTestRootAndNotAfterTampering() throws {
        let made = try PaymentTokenMaker.make(
            request(applicationData: Data("x".utf8)), recipient: recipient, signer: signer)
        let token = try object(made)
        let signature = try #require(Data(base64Encoded: token["signature"] as? String ?? ""))
        let root = try Certificate(pem: TestCredentials.applePayRootCertificatePEM)
        let content = try signedContent(token)
        let signers = try CMS.verifyDetached(signature: signature, content: content, trustedRoots: [root])
        #expect(signers.first?.hasExtension(oid: "1.2.840.113635.100.6.29") == true)

        var tampered = token
        var data = try #require(Data(base64Encoded: token["data"] as? String ?? ""))
        data[data.startIndex + 5] ^= 0x01
        tampered["data"] = data.base64EncodedString()
        #expect(throws: CryptoError.self) {
            try CMS.verifyDetached(signature: signature, content: try signedContent(tampered), trustedRoots: [root])
        }
    }

    @Test func everyTokenIsFresh() throws {
        let first = try object(try PaymentTokenMaker.make(request(), recipient: recipient, signer: signer))
        let second = try object(try PaymentTokenMaker.make(request(), recipient: recipient, signer: signer))
        let h1 = try #require(first["header"] as? [String: String])
        let h2 = try #require(second["header"] as? [String: String])
        #expect(h1["transactionId"] != h2["transactionId"])
        #expect(h1["ephemeralPublicKey"] != h2["ephemeralPublicKey"])
    }

    // Three years on from 2025 is a leap year (2028), from 2097 a century that is not one (2100).
    @Test(arguments: [
        ("2026-02-10T12:00:00Z", "290228"), ("2026-11-29T12:00:00Z", "291130"), ("2025-02-01T00:00:00Z", "280229"),
        ("2097-02-28T23:59:59Z", "000228"), ("2026-12-31T23:59:59Z", "291231"), ("2026-04-30T23:00:00Z", "290430"),
    ])
    func defaultExpirationIsMonthEndThreeYearsOut(now: String, expiry: String) throws {
        let date = try #require(ISO8601DateFormatter().date(from: now))
        #expect(PaymentTokenMaker.defaultExpiration(now: date) == expiry)
    }

    @Test func rejectsBadRequests() {
        var bad = request()
        bad.amount = 0
        #expect(throws: Diagnostic.self) { try PaymentTokenMaker.make(bad, recipient: recipient, signer: signer) }
        bad = request()
        bad.currencyNumeric = "VND"
        #expect(throws: Diagnostic.self) { try PaymentTokenMaker.make(bad, recipient: recipient, signer: signer) }
    }

    @Test func recipientFromPublicKeyOrCertificatePEM() throws {
        #expect(
            try PaymentTokenMaker.recipientKey(pem: TestCredentials.paymentProcessingPublicKeyPEM, source: "k")
                == recipient)
        let certificate = try Certificate(pem: TestCredentials.applePayLeafCertificatePEM)
        #expect(
            try PaymentTokenMaker.recipientKey(pem: TestCredentials.applePayLeafCertificatePEM, source: "c")
                == certificate.p256PublicKey)
        let error = #expect(throws: Diagnostic.self) {
            try PaymentTokenMaker.recipientKey(pem: "junk", source: "f.pem")
        }
        #expect(error?.code == .dataError)
        #expect(error?.message.contains("f.pem") == true)
    }
}
