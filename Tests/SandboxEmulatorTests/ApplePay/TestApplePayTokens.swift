import Crypto
import Foundation
import SandboxEmulator

/// Mints Apple Pay `EC_v1` tokens the way Apple does, with the emulator's test PKI: encrypt to the processing
/// PUBLIC key (ECDH + Concat KDF + AES-256-GCM), then sign with the leaf, carrying the intermediate.
struct TestApplePayToken {
    var data: Data
    var signature: Data
    var ephemeralPublicKey: Data
    var publicKeyHash: String
    var transactionId: String
    /// `header.applicationData`, hex: SHA-256 of the app's PKPaymentRequest.applicationData, when it set one.
    var applicationData: String? = nil
    var version = "EC_v1"

    /// The token JSON as PassKit would hand it over, in a fixed key order.
    var json: String {
        let application = applicationData.map { #","applicationData":"\#($0)""# } ?? ""
        return
            #"{"data":"\#(data.base64EncodedString())","signature":"\#(signature.base64EncodedString())","header":{"publicKeyHash":"\#(publicKeyHash)","ephemeralPublicKey":"\#(ephemeralPublicKey.base64EncodedString())","transactionId":"\#(transactionId)"\#(application)},"version":"\#(version)"}"#
    }
    var bytes: Data { Data(json.utf8) }

    static func make(
        amount: Int = 8000, currency: String = "704", pan: String = "4817499999994242",
        merchantIdentifier: String = TestCredentials.merchantIdentifier,
        signer: (cert: Certificate, key: P256PrivateKey)? = nil,
        intermediates: [Certificate]? = nil, applicationData: Data? = nil
    ) throws -> TestApplePayToken {
        let processing = try P256PublicKey(pem: TestCredentials.paymentProcessingPublicKeyPEM)
        let ephemeral = P256PrivateKey()
        var otherInfo = Data([0x0D]) + Data("id-aes256-GCM".utf8) + Data("Apple".utf8)
        otherInfo += Digest.sha256(Data(merchantIdentifier.utf8))
        let key = ConcatKDF.sha256(
            sharedSecret: ephemeral.sharedSecret(with: processing), otherInfo: otherInfo, length: 32)
        let payload =
            #"{"applicationPrimaryAccountNumber":"\#(pan)","applicationExpirationDate":"301231","currencyCode":"\#(currency)","transactionAmount":\#(amount),"deviceManufacturerIdentifier":"040010030273","paymentDataType":"3DSecure","paymentData":{"onlinePaymentCryptogram":"AgAAAAAABk4DWZ4C28yUQAAAAAA=","eciIndicator":"7"}}"#
        let sealed = try AESGCM.seal(key: key, iv: Data(count: 16), plaintext: Data(payload.utf8))
        let data = sealed.ciphertext + sealed.tag
        let transactionId = SecureRandom.bytes(32).hexString
        let ephemeralDER = ephemeral.publicKey.spkiDER
        let leaf =
            try signer ?? (
                Certificate(pem: TestCredentials.applePayLeafCertificatePEM),
                P256PrivateKey(pem: TestCredentials.applePayLeafPrivateKeyPEM)
            )
        let chain = try intermediates ?? [Certificate(pem: TestCredentials.applePayIntermediateCertificatePEM)]
        // Apple signs ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData (when present), as bytes.
        let signature = try CMS.signDetached(
            content: ephemeralDER + data + Data(hex: transactionId)! + (applicationData ?? Data()),
            signer: leaf.cert, key: leaf.key, extraCertificates: chain)
        return TestApplePayToken(
            data: data, signature: signature, ephemeralPublicKey: ephemeralDER,
            publicKeyHash: Digest.sha256(processing.spkiDER).base64EncodedString(),
            transactionId: transactionId, applicationData: applicationData?.hexString)
    }
}

extension String {
    /// The same hex text with the digit at `index` replaced by a *different* digit, so the bytes it decodes to
    /// differ too (changing `a` to `A` would not: hex is case-insensitive).
    func changingHexDigit(at index: Int) -> String {
        var digits = Array(self)
        let value = Int(String(digits[index]), radix: 16)!
        digits[index] = Character(String((value + 1) % 16, radix: 16))
        return String(digits)
    }
}

extension Data {
    /// A copy with one byte changed at `index` (negative counts from the end).
    func changingByte(at index: Int) -> Data {
        var copy = self
        let i = index >= 0 ? index : count + index
        copy[copy.startIndex + i] ^= 0x5A
        return copy
    }
}
