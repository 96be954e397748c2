import Crypto
import Foundation

/// What goes inside a test token: the values a Secure Element would put in the encrypted payment data.
public struct PaymentTokenRequest: Sendable {
    /// Minor units of the currency (VND has none: 8000 means 8,000 ₫).
    public var amount: Int
    /// ISO 4217 numeric code as 3 digits ("704"); see `CurrencyCode.numeric`.
    public var currencyNumeric: String
    /// Feeds the KDF (PartyVInfo): the recipient derives the same key only with the same identifier.
    public var merchantIdentifier: String
    /// The device PAN (DPAN) to encrypt.
    public var pan: String
    /// YYMMDD.
    public var expiration: String
    /// `PKPaymentRequest.applicationData`; when present the header carries its SHA-256 and the signature covers it.
    public var applicationData: Data?

    public init(
        amount: Int, currencyNumeric: String, merchantIdentifier: String,
        pan: String = PaymentTokenMaker.testDPAN,
        expiration: String = PaymentTokenMaker.defaultExpiration(),
        applicationData: Data? = nil
    ) {
        self.amount = amount
        self.currencyNumeric = currencyNumeric
        self.merchantIdentifier = merchantIdentifier
        self.pan = pan
        self.expiration = expiration
        self.applicationData = applicationData
    }
}

/// The certificate chain and key that sign a token, standing in for Apple's signing leaf.
public struct PaymentTokenSigner: Sendable {
    public var leaf: Certificate
    public var leafKey: P256PrivateKey
    /// Carried in the signature so the verifier can build leaf → intermediate → root.
    public var intermediates: [Certificate]

    public init(leaf: Certificate, leafKey: P256PrivateKey, intermediates: [Certificate]) {
        self.leaf = leaf
        self.leafKey = leafKey
        self.intermediates = intermediates
    }

    /// From PEM texts (e.g. the emulator's published test PKI), so callers need no Crypto import.
    public init(leafPEM: String, leafKeyPEM: String, intermediatePEMs: [String]) throws(Diagnostic) {
        do {
            self.init(
                leaf: try Certificate(pem: leafPEM), leafKey: try P256PrivateKey(pem: leafKeyPEM),
                intermediates: try intermediatePEMs.map { try Certificate(pem: $0) })
        } catch {
            throw .internalError("cannot load the token signing credentials: \(error)")
        }
    }
}

public struct MadeToken: Sendable {
    /// The token exactly as PassKit would hand it to the app (`PKPaymentToken.paymentData`).
    public let bytes: Data
    public let transactionId: String
}

/// Makes Apple Pay `EC_v1` payment tokens as Apple's "Payment Token Format Reference" describes them, so that
/// the confirm path can be exercised without a phone. Only a party holding the signer's key can make one, which
/// in practice means: tokens for the emulator (its test PKI), never for a real processor.
public enum PaymentTokenMaker {
    /// The default device PAN: Visa-shaped (starts with 4), 16 digits, Luhn-valid so format checks pass,
    /// and padded with 9s so nobody mistakes it for a real account.
    public static let testDPAN = "4817499999990046"

    /// Hex device manufacturer identifier; this is the value seen in Apple's published sample payment data.
    static let deviceManufacturerIdentifier = "040010030273"

    /// The last day of the current month three years from `now` (UTC), as YYMMDD: far enough ahead that a
    /// made token never trips an expiry check, shaped like a real card expiry (cards expire at month end).
    /// `Timestamp`'s calendar arithmetic rather than `Calendar`: a Gregorian `Calendar` looks the current time zone up
    /// in ICU, which maps megabytes of ICU code and data into every run that makes a token.
    public static func defaultExpiration(now: Date = Date()) -> String {
        let today = Timestamp.utcDate(now)
        let year = today.year + 3
        let lastDay = Timestamp.daysIn(month: today.month, year: year)
        return [year % 100, today.month, lastDay].map { $0 < 10 ? "0\($0)" : "\($0)" }.joined()
    }

    /// NIST SP 800-56A OtherInfo as Apple specifies it for EC_v1:
    /// AlgorithmID (length byte 0x0D, then "id-aes256-GCM") ‖ PartyUInfo "Apple" ‖ PartyVInfo SHA-256(merchant id).
    static func kdfOtherInfo(merchantIdentifier: String) -> Data {
        var info = Data([0x0D])
        info.append(Data("id-aes256-GCM".utf8))
        info.append(Data("Apple".utf8))
        info.append(Digest.sha256(Data(merchantIdentifier.utf8)))
        return info
    }

    public static func make(
        _ request: PaymentTokenRequest, recipient: P256PublicKey, signer: PaymentTokenSigner,
        now: Date = Date()
    ) throws(Diagnostic) -> MadeToken {
        try validate(request)
        // A verifier rejects a chain outside its validity; say so here rather than as a confusing decline later.
        guard signer.leaf.notBefore <= now, now <= signer.leaf.notAfter else {
            throw .configuration(
                "the token signing certificate is not valid now (valid \(signer.leaf.notBefore) to \(signer.leaf.notAfter))",
                hint: "check the system clock")
        }

        // Encrypt: ECDH with a fresh ephemeral key, single-step KDF, AES-256-GCM under a 16-byte zero IV.
        // The zero IV is safe only because every key is used exactly once (fresh ephemeral key per token).
        let ephemeral = P256PrivateKey()
        let sharedSecret = ephemeral.sharedSecret(with: recipient)
        let key = ConcatKDF.sha256(
            sharedSecret: sharedSecret,
            otherInfo: kdfOtherInfo(merchantIdentifier: request.merchantIdentifier), length: 32)
        let sealed: (ciphertext: Data, tag: Data)
        do {
            sealed = try AESGCM.seal(key: key, iv: Data(count: 16), plaintext: paymentData(request))
        } catch {
            throw .internalError("cannot encrypt the payment data: \(error)")
        }
        let data = sealed.ciphertext + sealed.tag

        let ephemeralPublicKey = ephemeral.publicKeySPKI
        let transactionIdBytes = SecureRandom.bytes(32)
        let applicationDataHash = request.applicationData.map(Digest.sha256)

        // Apple signs the decoded bytes of the header values and data, concatenated, not the JSON text.
        var signedContent = ephemeralPublicKey + data + transactionIdBytes
        if let applicationDataHash { signedContent.append(applicationDataHash) }
        let signature: Data
        do {
            signature = try CMS.signDetached(
                content: signedContent, signer: signer.leaf, key: signer.leafKey,
                extraCertificates: signer.intermediates)
        } catch {
            throw .internalError("cannot sign the payment token: \(error)")
        }

        // Written by hand so the key order is exactly that of the tokens PassKit hands an app. Every value is
        // base64 or hex, so none needs escaping.
        var header = "{"
        if let applicationDataHash { header += "\"applicationData\":\"\(applicationDataHash.hexString)\"," }
        header += "\"ephemeralPublicKey\":\"\(ephemeralPublicKey.base64EncodedString())\","
        header += "\"publicKeyHash\":\"\(Digest.sha256(recipient.spkiDER).base64EncodedString())\","
        header += "\"transactionId\":\"\(transactionIdBytes.hexString)\"}"
        let token =
            "{\"data\":\"\(data.base64EncodedString())\",\"signature\":\"\(signature.base64EncodedString())\","
            + "\"header\":\(header),\"version\":\"EC_v1\"}"
        return MadeToken(bytes: Data(token.utf8), transactionId: transactionIdBytes.hexString)
    }

    /// The decrypted payment data dictionary, 3-D Secure flavour (Apple's "Payment data keys").
    static func paymentData(_ request: PaymentTokenRequest) -> Data {
        let document: JSON = [
            "applicationPrimaryAccountNumber": .string(request.pan),
            "applicationExpirationDate": .string(request.expiration),
            "currencyCode": .string(request.currencyNumeric),
            "transactionAmount": .number(JSON.Number(request.amount)),
            "deviceManufacturerIdentifier": .string(deviceManufacturerIdentifier),
            "paymentDataType": "3DSecure",
            "paymentData": [
                // A real cryptogram is 20 bytes from the Secure Element; random bytes have the same shape.
                "onlinePaymentCryptogram": .string(SecureRandom.bytes(20).base64EncodedString()),
                // ECI 7: e-commerce, the value Visa tokens commonly carry.
                "eciIndicator": "7",
            ],
        ]
        return document.data
    }

    private static func validate(_ request: PaymentTokenRequest) throws(Diagnostic) {
        func digits(_ s: String) -> Bool { !s.isEmpty && s.utf8.allSatisfy { (48...57).contains($0) } }
        guard request.amount > 0 else {
            throw .usage(
                "the amount must be a positive integer in minor units, got \(request.amount)",
                hint: "e.g. --amount 8000")
        }
        guard request.currencyNumeric.count == 3, digits(request.currencyNumeric) else {
            throw .usage(
                "the currency must be an ISO 4217 numeric code of 3 digits, got '\(request.currencyNumeric)'",
                hint: "e.g. --currency 704 (or VND)")
        }
        guard (12...19).contains(request.pan.count), digits(request.pan) else {
            throw .usage("the PAN must be 12 to 19 digits", hint: "the default test DPAN is \(testDPAN)")
        }
        guard request.expiration.count == 6, digits(request.expiration) else {
            throw .usage(
                "the expiration must be YYMMDD, got '\(request.expiration)'", hint: "e.g. 301231 for 31 December 2030")
        }
        guard !request.merchantIdentifier.isEmpty else {
            throw .usage(
                "the merchant identifier must not be empty", hint: "leave --merchant-id out to use the emulator's")
        }
    }

    /// The payment processing public key from a "PUBLIC KEY" or "CERTIFICATE" PEM (a payment processing
    /// certificate hashes to the same `publicKeyHash` as its key).
    public static func recipientKey(pem: String, source: String) throws(Diagnostic) -> P256PublicKey {
        do {
            if pem.contains("-----BEGIN CERTIFICATE-----") {
                guard let key = try Certificate(pem: pem).p256PublicKey else {
                    throw Diagnostic.data(
                        "\(source): the certificate's key is not P-256",
                        hint: "EC_v1 tokens are encrypted to a P-256 payment processing key")
                }
                return key
            }
            return try P256PublicKey(pem: pem)
        } catch let diagnostic as Diagnostic {
            throw diagnostic
        } catch {
            throw .data(
                "\(source): not a P-256 public key or certificate PEM (\(error))",
                hint: "give the payment processing public key ('-----BEGIN PUBLIC KEY-----') or its certificate")
        }
    }
}
