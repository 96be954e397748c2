import Crypto
import Foundation
import WireTypes

/// Why a token was refused. The three cases match the three ways a processor reports a bad token: it could not be
/// read, Apple's signature over its exact bytes did not hold, or it could not be decrypted with the processing key.
public enum ApplePayTokenError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case signature(String)
    case decryption(String)

    public var description: String {
        switch self {
        case .malformed(let m): "malformed Apple Pay token: \(m)"
        case .signature(let m): "Apple Pay token signature check failed: \(m)"
        case .decryption(let m): "Apple Pay token decryption failed: \(m)"
        }
    }
}

/// The decrypted contents of an `EC_v1` token that matter to a processor.
public struct DecryptedPaymentToken: Sendable, Equatable {
    /// `header.transactionId`, lowercase hex: what single-use checks key on.
    public var transactionId: String
    /// `applicationPrimaryAccountNumber`: the device PAN (DPAN), never the funding PAN.
    public var pan: String
    /// `applicationExpirationDate`, YYMMDD.
    public var expiration: String
    /// ISO 4217 numeric code, e.g. "704".
    public var currencyCode: String
    /// Minor units.
    public var amount: Int
    public var cryptogram: String
    /// Absent for some networks (Apple leaves it out when the network defines none).
    public var eci: String?
    public var deviceManufacturerIdentifier: String
    public var paymentDataType: String
}

/// The processor side of Apple Pay `EC_v1` payment tokens (Apple's "Payment Token Format Reference"):
/// verify the detached signature over the exact bytes, then ECDH + Concat KDF + AES-256-GCM decrypt.
public struct ApplePayTokenVerifier: Sendable {
    /// Marks the leaf that signs payment tokens.
    static let leafOID = "1.2.840.113635.100.6.29"
    /// Marks Apple's Worldwide Developer Relations intermediate.
    static let intermediateOID = "1.2.840.113635.100.6.2.14"

    let trustedRoot: Certificate
    let processingKey: P256PrivateKey
    let merchantIdentifier: String
    let maxSignatureAge: TimeInterval?

    public init(
        trustedRoot: Certificate, processingKey: P256PrivateKey, merchantIdentifier: String,
        maxSignatureAge: TimeInterval? = nil
    ) {
        self.trustedRoot = trustedRoot
        self.processingKey = processingKey
        self.merchantIdentifier = merchantIdentifier
        self.maxSignatureAge = maxSignatureAge
    }

    /// The verifier the emulator uses, built from the published test credentials. No age limit: tests and demo
    /// flows replay tokens minted earlier, and single use is enforced by the provider on the transaction id.
    public static let emulator: ApplePayTokenVerifier = {
        do {
            return ApplePayTokenVerifier(
                trustedRoot: try Certificate(pem: TestCredentials.applePayRootCertificatePEM),
                processingKey: try P256PrivateKey(pem: TestCredentials.paymentProcessingPrivateKeyPEM),
                merchantIdentifier: TestCredentials.merchantIdentifier)
        } catch {
            fatalError("the emulator's Apple Pay test credentials do not load: \(error)")
        }
    }()

    public func open(_ tokenBytes: Data, now: Date = Date()) throws(ApplePayTokenError) -> DecryptedPaymentToken {
        let token = try EnvelopeFields(tokenBytes)
        try verifySignature(token, now: now)
        let plaintext = try decrypt(token)
        return try Self.parsePayload(plaintext, transactionId: token.transactionId.hexString)
    }

    // MARK: Steps

    private func verifySignature(_ token: EnvelopeFields, now: Date) throws(ApplePayTokenError) {
        // Apple signs ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData, each as decoded bytes.
        let signed = token.ephemeralPublicKey + token.data + token.transactionId + (token.applicationData ?? Data())
        let verified: CMS.Verified
        do {
            verified = try CMS.verify(signature: token.signature, content: signed, trustedRoots: [trustedRoot], at: now)
        } catch {
            throw .signature("the CMS signature does not verify over the exact token bytes (\(error))")
        }
        guard let leaf = verified.signers.first, leaf.hasExtension(oid: Self.leafOID) else {
            throw .signature("the signing certificate lacks the Apple Pay leaf marker \(Self.leafOID)")
        }
        guard verified.certificates.contains(where: { $0 != leaf && $0.hasExtension(oid: Self.intermediateOID) }) else {
            throw .signature("the signature carries no intermediate certificate with marker \(Self.intermediateOID)")
        }
        if let maxSignatureAge {
            guard let signedAt = CMS.signingTime(of: token.signature) else {
                throw .signature("the signature has no signing time")
            }
            // A little future skew is tolerated; a signature older than the limit is a replayed token.
            guard now.timeIntervalSince(signedAt) <= maxSignatureAge, signedAt.timeIntervalSince(now) <= 60 else {
                throw .signature("the signing time \(signedAt) is outside the allowed \(Int(maxSignatureAge)) s window")
            }
        }
    }

    private func decrypt(_ token: EnvelopeFields) throws(ApplePayTokenError) -> Data {
        let ourHash = Digest.sha256(processingKey.publicKeySPKI).base64EncodedString()
        guard token.publicKeyHash == ourHash else {
            throw .decryption(
                "header.publicKeyHash does not match this processor's key: the token was encrypted to a different payment processing certificate"
            )
        }
        let ephemeral: P256PublicKey
        do { ephemeral = try P256PublicKey(spkiDER: token.ephemeralPublicKey) } catch {
            throw .malformed("header.ephemeralPublicKey is not a P-256 public key")
        }
        let shared = processingKey.sharedSecret(with: ephemeral)
        // otherInfo = len("id-aes256-GCM") ‖ "id-aes256-GCM" ‖ "Apple" ‖ SHA-256(merchant identifier).
        var otherInfo = Data([0x0D])
        otherInfo += Data("id-aes256-GCM".utf8) + Data("Apple".utf8)
        otherInfo += Digest.sha256(Data(merchantIdentifier.utf8))
        let key = ConcatKDF.sha256(sharedSecret: shared, otherInfo: otherInfo, length: 32)
        guard token.data.count > AESGCM.tagLength else { throw .malformed("data is too short to hold a GCM tag") }
        let ciphertext = token.data.prefix(token.data.count - AESGCM.tagLength)
        let tag = token.data.suffix(AESGCM.tagLength)
        do {
            return try AESGCM.open(key: key, iv: Data(count: 16), ciphertext: Data(ciphertext), tag: Data(tag))
        } catch {
            throw .decryption(
                "the GCM tag does not authenticate: wrong processing key or merchant identifier (\(merchantIdentifier))"
            )
        }
    }

    private static func parsePayload(
        _ plaintext: Data, transactionId: String
    ) throws(ApplePayTokenError) -> DecryptedPaymentToken {
        guard let object = (try? JSON.parse(plaintext))?.objectValue else {
            throw .decryption("the decrypted payload is not a JSON object")
        }
        func string(_ key: String, in dict: JSON.Object) throws(ApplePayTokenError) -> String {
            guard let value = dict.string(key) else { throw .malformed("decrypted payload lacks string \(key)") }
            return value
        }
        guard let paymentData = object.object("paymentData") else {
            throw .malformed("decrypted payload lacks paymentData")
        }
        guard let amount = object.integer("transactionAmount") else {
            throw .malformed("decrypted payload lacks integer transactionAmount")
        }
        return DecryptedPaymentToken(
            transactionId: transactionId,
            pan: try string("applicationPrimaryAccountNumber", in: object),
            expiration: try string("applicationExpirationDate", in: object),
            currencyCode: try string("currencyCode", in: object),
            amount: amount,
            cryptogram: try string("onlinePaymentCryptogram", in: paymentData),
            eci: paymentData.string("eciIndicator"),
            deviceManufacturerIdentifier: try string("deviceManufacturerIdentifier", in: object),
            paymentDataType: try string("paymentDataType", in: object))
    }
}

/// The outer token JSON with every field decoded to bytes.
private struct EnvelopeFields {
    var data: Data
    var signature: Data
    var ephemeralPublicKey: Data
    var publicKeyHash: String
    var transactionId: Data
    var applicationData: Data?

    init(_ bytes: Data) throws(ApplePayTokenError) {
        guard let object = (try? JSON.parse(bytes))?.objectValue else {
            throw .malformed("the token is not a JSON object")
        }
        guard let version = object.string("version") else { throw .malformed("version is missing") }
        guard version == "EC_v1" else { throw .malformed("version \(version) is not supported; only EC_v1 is") }
        guard let header = object.object("header") else { throw .malformed("header is missing") }
        func base64(_ value: JSON?, _ name: String) throws(ApplePayTokenError) -> Data {
            guard let text = value?.stringValue, let data = Data(base64Encoded: text) else {
                throw .malformed("\(name) is missing or not base64")
            }
            return data
        }
        func hex(_ value: JSON?, _ name: String) throws(ApplePayTokenError) -> Data {
            guard let text = value?.stringValue, let data = Data(hex: text) else {
                throw .malformed("\(name) is missing or not hex")
            }
            return data
        }
        data = try base64(object["data"], "data")
        signature = try base64(object["signature"], "signature")
        ephemeralPublicKey = try base64(header["ephemeralPublicKey"], "header.ephemeralPublicKey")
        guard let hash = header.string("publicKeyHash") else { throw .malformed("header.publicKeyHash is missing") }
        publicKeyHash = hash
        transactionId = try hex(header["transactionId"], "header.transactionId")
        applicationData =
            header["applicationData"] == nil ? nil : try hex(header["applicationData"], "header.applicationData")
    }
}
