import COpenSSL
import Foundation

/// A JWS signing key loaded from PEM, whichever of the two supported kinds it is.
public enum SigningKey: Sendable {
    case es256(P256PrivateKey)
    case rs256(RSAPrivateKey)

    /// Any private key PEM OpenSSL reads (PKCS#8, SEC1, PKCS#1); must be P-256 or RSA.
    public init(pem: String) throws {
        let box = try PKeyBox.privateKey(pem: pem)
        if box.isP256 {
            self = .es256(try P256PrivateKey(box: box))
        } else if box.isA("RSA") {
            self = .rs256(try RSAPrivateKey(box: box))
        } else {
            throw CryptoError("unsupported private key type (only P-256 and RSA are supported)")
        }
    }

    /// The JWS "alg" value.
    public var algorithm: String {
        switch self {
        case .es256: "ES256"
        case .rs256: "RS256"
        }
    }

    /// A JWS signature: 64-byte R‖S for ES256, PKCS#1 v1.5 for RS256.
    public func sign(_ message: Data) throws -> Data {
        switch self {
        case .es256(let key): key.signES256(message)
        case .rs256(let key): key.signRS256(message)
        }
    }

    public var verifyingKey: VerifyingKey {
        switch self {
        case .es256(let key): .es256(key.publicKey)
        case .rs256(let key): .rs256(key.publicKey)
        }
    }
}

/// A JWS verification key.
public enum VerifyingKey: Sendable, Equatable {
    case es256(P256PublicKey)
    case rs256(RSAPublicKey)

    /// A "PUBLIC KEY" PEM, or a "CERTIFICATE" PEM whose key is used.
    public init(pem: String) throws {
        if pem.contains("-----BEGIN CERTIFICATE-----") {
            guard let key = try Certificate(pem: pem).publicKey else {
                throw CryptoError("certificate key is neither P-256 nor RSA")
            }
            self = key
        } else {
            try self.init(box: PKeyBox.publicKey(pem: pem))
        }
    }

    init(box: PKeyBox) throws {
        if box.isP256 {
            self = .es256(P256PublicKey(box: box))
        } else if box.isA("RSA") {
            self = .rs256(RSAPublicKey(box: box))
        } else {
            throw CryptoError("unsupported public key type (only P-256 and RSA are supported)")
        }
    }

    public var algorithm: String {
        switch self {
        case .es256: "ES256"
        case .rs256: "RS256"
        }
    }

    public func verify(signature: Data, message: Data) -> Bool {
        switch self {
        case .es256(let key): key.verifyES256(signature: signature, message: message)
        case .rs256(let key): key.verifyRS256(signature: signature, message: message)
        }
    }
}
