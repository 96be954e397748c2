import COpenSSL
import Foundation

/// An RSA private key used for RS256 (PKCS#1 v1.5 with SHA-256).
public struct RSAPrivateKey: Sendable {
    let box: PKeyBox

    init(box: PKeyBox) throws {
        guard box.isA("RSA") else { throw CryptoError("not an RSA private key") }
        self.box = box
    }

    /// Generates a fresh key (2048 bits unless asked otherwise).
    public init(bits: Int = 2048) {
        precondition(bits >= 2048, "RS256 needs at least 2048-bit keys (RFC 7518 §3.3)")
        box = mustSucceed("RSA key generation") {
            try PKeyBox.generate(type: "RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, Int32(bits)) }
        }
    }

    /// PKCS#8 ("PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY") PEM. Encrypted PEMs are rejected.
    public init(pem: String) throws {
        try self.init(box: PKeyBox.privateKey(pem: pem))
    }

    /// From the JWK members n, e, d, p, q, dp, dq, qi (RFC 7518 §6.3), each big-endian.
    public init(
        modulus n: Data, publicExponent e: Data, privateExponent d: Data,
        prime1 p: Data, prime2 q: Data, exponent1 dp: Data, exponent2 dq: Data,
        coefficient qi: Data
    ) throws {
        let params = try ParamBuilder()
        // OSSL_PKEY_PARAM_RSA_* names.
        try params.add("n", bigEndian: n)
        try params.add("e", bigEndian: e)
        try params.add("d", bigEndian: d)
        try params.add("rsa-factor1", bigEndian: p)
        try params.add("rsa-factor2", bigEndian: q)
        try params.add("rsa-exponent1", bigEndian: dp)
        try params.add("rsa-exponent2", bigEndian: dq)
        try params.add("rsa-coefficient1", bigEndian: qi)
        try self.init(box: PKeyBox.fromParams(type: "RSA", selection: copenssl_evp_pkey_keypair(), params))
    }

    /// PKCS#8 PEM.
    public var pemRepresentation: String { box.privatePEM }
    public var publicKey: RSAPublicKey { RSAPublicKey(box: box.publicOnly) }

    /// RS256: RSASSA-PKCS1-v1_5 with SHA-256. Deterministic.
    public func signRS256(_ message: Data) -> Data {
        mustSucceed("RS256 signing") { try box.signSHA256(message) }
    }
}

public struct RSAPublicKey: Sendable, Equatable {
    let box: PKeyBox

    init(box: PKeyBox) { self.box = box }

    init(checking box: PKeyBox) throws {
        guard box.isA("RSA") else { throw CryptoError("not an RSA public key") }
        self.box = box
    }

    /// "-----BEGIN PUBLIC KEY-----" PEM.
    public init(pem: String) throws { try self.init(checking: PKeyBox.publicKey(pem: pem)) }

    public init(spkiDER: Data) throws { try self.init(checking: PKeyBox.publicKey(spkiDER: spkiDER)) }

    /// From the JWK members n and e (big-endian).
    public init(modulus n: Data, publicExponent e: Data) throws {
        let params = try ParamBuilder()
        try params.add("n", bigEndian: n)
        try params.add("e", bigEndian: e)
        try self.init(checking: PKeyBox.fromParams(type: "RSA", selection: copenssl_evp_pkey_public_key(), params))
    }

    public var spkiDER: Data { box.spkiDER }
    public var pemRepresentation: String { box.publicPEM }

    public func verifyRS256(signature: Data, message: Data) -> Bool {
        box.verifySHA256(signature: signature, message: message)
    }

    public static func == (lhs: RSAPublicKey, rhs: RSAPublicKey) -> Bool { lhs.spkiDER == rhs.spkiDER }
}
