import COpenSSL
import Foundation

/// An ECDSA / ECDH private key on NIST P-256.
public struct P256PrivateKey: Sendable {
    let box: PKeyBox

    init(box: PKeyBox) throws {
        guard box.isP256 else { throw CryptoError("not a P-256 private key") }
        self.box = box
    }

    /// Generates a fresh key.
    public init() {
        box = mustSucceed("P-256 key generation") {
            try PKeyBox.generate(type: "EC") { EVP_PKEY_CTX_set_group_name($0, "P-256") }
        }
    }

    /// PKCS#8 ("PRIVATE KEY") or SEC1 ("EC PRIVATE KEY") PEM. Encrypted PEMs are rejected.
    public init(pem: String) throws {
        try self.init(box: PKeyBox.privateKey(pem: pem))
    }

    /// The 32-byte big-endian private scalar d (as in a JWK "d" or a NIST test vector).
    public init(rawScalar d: Data) throws {
        guard d.count == 32 else { throw CryptoError("P-256 private scalar must be 32 bytes, got \(d.count)") }
        // EVP_PKEY_fromdata does not derive the public point, so compute Q = d·G here.
        let point = try P256PrivateKey.publicPoint(for: d)
        let params = try ParamBuilder()
        try params.add("group", utf8: "prime256v1")  // OSSL_PKEY_PARAM_GROUP_NAME
        try params.add("priv", bigEndian: d)  // OSSL_PKEY_PARAM_PRIV_KEY
        try params.add("pub", octets: point)  // OSSL_PKEY_PARAM_PUB_KEY
        try self.init(box: PKeyBox.fromParams(type: "EC", selection: copenssl_evp_pkey_keypair(), params))
    }

    /// PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----").
    public var pemRepresentation: String { box.privatePEM }

    /// The 32-byte big-endian private scalar d.
    public var rawScalar: Data {
        mustSucceed("reading P-256 scalar") {
            var bn: OpaquePointer?
            guard EVP_PKEY_get_bn_param(box.pkey, "priv", &bn) == 1, let bn else {
                throw CryptoError(openSSL: "cannot read private scalar")
            }
            defer { BN_clear_free(bn) }
            var out = Data(count: 32)
            let n = out.withUnsafeMutableBytes { BN_bn2binpad(bn, $0.bindMemory(to: UInt8.self).baseAddress, 32) }
            guard n == 32 else { throw CryptoError(openSSL: "BN_bn2binpad failed") }
            return out
        }
    }

    /// Made from the point (a round trip through the SPKI would run OpenSSL's encoder and decoder chains), with the
    /// private key's SPKI kept alongside: the two keys share one encoding.
    public var publicKey: P256PublicKey {
        guard let point = box.uncompressedPoint, let key = try? P256PublicKey(x963: point) else {
            return P256PublicKey(box: box.publicOnly)
        }
        _ = key.box.keptSPKI { box.p256SPKI }
        return key
    }

    /// The public key's SubjectPublicKeyInfo DER, read off this key: what a token's `ephemeralPublicKey` carries,
    /// without building a public key object first.
    public var publicKeySPKI: Data { box.p256SPKI }

    /// ES256 (RFC 7518 §3.4): ECDSA P-256 SHA-256, returned as the 64-byte R‖S, not DER.
    public func signES256(_ message: Data) -> Data {
        mustSucceed("ES256 signing") {
            try P256PrivateKey.rawSignature(fromDER: box.signSHA256(message))
        }
    }

    /// ECDH: the 32-byte x-coordinate of d·Q (the "Z" of SP 800-56A).
    public func sharedSecret(with peer: P256PublicKey) -> Data {
        mustSucceed("ECDH") {
            guard let context = EVP_PKEY_CTX_new_from_pkey(nil, box.pkey, nil) else {
                throw CryptoError(openSSL: "EVP_PKEY_CTX_new_from_pkey failed")
            }
            defer { EVP_PKEY_CTX_free(context) }
            var length = 0
            // Every P256PublicKey passed SP 800-56A's partial public-key validation when it was made
            // (`init(checking:)`), which is full validation on P-256, whose cofactor is 1; `EVP_PKEY_derive_set_peer`
            // would validate again and multiply the point by the group order, a scalar multiplication as dear as the
            // ECDH itself.
            guard EVP_PKEY_derive_init(context) == 1,
                EVP_PKEY_derive_set_peer_ex(context, peer.box.pkey, 0) == 1,
                EVP_PKEY_derive(context, nil, &length) == 1
            else {
                throw CryptoError(openSSL: "ECDH setup failed")
            }
            var secret = Data(count: length)
            let ok = secret.withUnsafeMutableBytes {
                EVP_PKEY_derive(context, $0.bindMemory(to: UInt8.self).baseAddress, &length)
            }
            guard ok == 1 else { throw CryptoError(openSSL: "ECDH derive failed") }
            return secret.prefix(length)
        }
    }

    // MARK: Helpers

    /// Q = d·G as an uncompressed point, rejecting d = 0 and d ≥ n.
    private static func publicPoint(for d: Data) throws -> Data {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw CryptoError(openSSL: "cannot load P-256 group")
        }
        defer { EC_GROUP_free(group) }
        guard let scalar = d.withNonNullBytes({ BN_bin2bn($0, Int32($1), nil) }) else {
            throw CryptoError(openSSL: "BN_bin2bn failed")
        }
        defer { BN_clear_free(scalar) }
        guard BN_is_zero(scalar) == 0, BN_cmp(scalar, EC_GROUP_get0_order(group)) < 0 else {
            throw CryptoError("P-256 private scalar is out of range")
        }
        guard let point = EC_POINT_new(group) else { throw CryptoError(openSSL: "EC_POINT_new failed") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_mul(group, point, scalar, nil, nil, nil) == 1 else {
            throw CryptoError(openSSL: "EC_POINT_mul failed")
        }
        var out = Data(count: 65)
        let n = out.withUnsafeMutableBytes {
            EC_POINT_point2oct(
                group, point, POINT_CONVERSION_UNCOMPRESSED,
                $0.bindMemory(to: UInt8.self).baseAddress, 65, nil)
        }
        guard n == 65 else { throw CryptoError(openSSL: "EC_POINT_point2oct failed") }
        return out
    }

    /// DER ECDSA-Sig-Value → fixed-width R‖S (each left-padded to 32 bytes).
    static func rawSignature(fromDER der: Data) throws -> Data {
        let signature = try derDecode(
            der, what: "ECDSA signature",
            decode: { d2i_ECDSA_SIG(nil, $0, $1) }, release: { ECDSA_SIG_free($0) })
        defer { ECDSA_SIG_free(signature) }
        var r: OpaquePointer?
        var s: OpaquePointer?
        ECDSA_SIG_get0(signature, &r, &s)
        var out = Data(count: 64)
        let ok = out.withUnsafeMutableBytes { raw -> Bool in
            let base = raw.bindMemory(to: UInt8.self).baseAddress!
            return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
        }
        guard ok else { throw CryptoError(openSSL: "ECDSA signature component too large") }
        return out
    }

    /// Fixed-width R‖S → DER ECDSA-Sig-Value, which is what OpenSSL verifies.
    static func derSignature(fromRaw raw: Data) throws -> Data {
        guard raw.count == 64 else { throw CryptoError("ES256 signature must be 64 bytes, got \(raw.count)") }
        let rBytes = raw.prefix(32)
        let sBytes = raw.suffix(32)
        guard let signature = ECDSA_SIG_new() else { throw CryptoError(openSSL: "ECDSA_SIG_new failed") }
        defer { ECDSA_SIG_free(signature) }
        let r = rBytes.withNonNullBytes { BN_bin2bn($0, Int32($1), nil) }
        let s = sBytes.withNonNullBytes { BN_bin2bn($0, Int32($1), nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {  // set0 takes ownership of r and s
            BN_free(r)
            BN_free(s)
            throw CryptoError(openSSL: "cannot build ECDSA signature")
        }
        return try derEncode { i2d_ECDSA_SIG(signature, $0) }
    }
}

/// A P-256 public key.
public struct P256PublicKey: Sendable, Equatable {
    let box: PKeyBox

    init(box: PKeyBox) { self.box = box }

    init(checking box: PKeyBox) throws {
        guard box.isP256 else { throw CryptoError("not a P-256 public key") }
        // In range, on the curve and not the point at infinity, which the SPKI decoder lets through.
        guard box.passesQuickPublicCheck else { throw CryptoError(openSSL: "not a valid P-256 public point") }
        self.box = box
    }

    /// "-----BEGIN PUBLIC KEY-----" (SubjectPublicKeyInfo) PEM.
    public init(pem: String) throws {
        try self.init(checking: PKeyBox.publicKey(pem: pem))
    }

    /// DER SubjectPublicKeyInfo (e.g. Apple Pay's base64 `header.ephemeralPublicKey`).
    ///
    /// A P-256 key with an uncompressed point is always the same 26 bytes followed by the point, and is built from the
    /// point: OpenSSL 3.0 decodes an SPKI by assembling a decoder chain over every provider, which costs more than
    /// the ECDH the key is for. Any other encoding goes through that decoder.
    public init(spkiDER: Data) throws {
        if let point = Self.uncompressedPoint(ofSPKI: spkiDER) {
            try self.init(x963: point)
        } else {
            try self.init(checking: PKeyBox.publicKey(spkiDER: spkiDER))
        }
    }

    /// The point of a P-256 SPKI in the usual form (the fixed prefix, then the uncompressed point); nil for any other.
    static func uncompressedPoint(ofSPKI der: Data) -> Data? {
        guard der.count == uncompressedSPKIPrefix.count + 65, der.starts(with: uncompressedSPKIPrefix) else {
            return nil
        }
        return der.dropFirst(uncompressedSPKIPrefix.count)
    }

    /// SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (65 bytes, no unused bits) }, up to the point
    /// (RFC 5480 §2).
    static let uncompressedSPKIPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01,
        0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// Uncompressed ANSI X9.63 point: 04 ‖ X ‖ Y (65 bytes). OpenSSL checks it is on the curve.
    public init(x963: Data) throws {
        guard x963.count == 65, x963.first == 0x04 else {
            throw CryptoError("P-256 point must be 65 bytes starting with 04, got \(x963.count) bytes")
        }
        let params = try ParamBuilder()
        try params.add("group", utf8: "prime256v1")  // OSSL_PKEY_PARAM_GROUP_NAME
        try params.add("pub", octets: x963)  // OSSL_PKEY_PARAM_PUB_KEY
        try self.init(checking: PKeyBox.fromParams(type: "EC", selection: copenssl_evp_pkey_public_key(), params))
    }

    /// JWK-style affine coordinates, 32 bytes each (RFC 7518 §6.2.1.2).
    public init(x: Data, y: Data) throws {
        guard x.count == 32, y.count == 32 else { throw CryptoError("P-256 coordinates must be 32 bytes each") }
        try self.init(x963: Data([0x04]) + x + y)
    }

    public var spkiDER: Data { box.p256SPKI }
    public var pemRepresentation: String { box.publicPEM }

    /// 04 ‖ X ‖ Y.
    public var x963Representation: Data {
        mustSucceed("reading P-256 point") {
            guard let point = box.uncompressedPoint else { throw CryptoError(openSSL: "cannot read public point") }
            return point
        }
    }

    /// Verifies a 64-byte R‖S ES256 signature. Any malformed input gives `false`.
    public func verifyES256(signature: Data, message: Data) -> Bool {
        guard let der = try? P256PrivateKey.derSignature(fromRaw: signature) else { return false }
        return box.verifySHA256(signature: der, message: message)
    }

    public static func == (lhs: P256PublicKey, rhs: P256PublicKey) -> Bool { lhs.spkiDER == rhs.spkiDER }
}

extension PKeyBox {
    /// OpenSSL's check of a public key, short of multiplying it by the group order (`EVP_PKEY_public_check_quick`).
    var passesQuickPublicCheck: Bool {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return false }
        defer { EVP_PKEY_CTX_free(context) }
        return EVP_PKEY_public_check_quick(context) == 1
    }

    /// The public point of a P-256 key as 04 ‖ X ‖ Y; nil when the key keeps another form (compressed) or has none.
    var uncompressedPoint: Data? {
        var out = Data(count: 65)
        var length = 0
        let ok = out.withUnsafeMutableBytes {
            // OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, in the form the key keeps (OpenSSL's default is uncompressed).
            EVP_PKEY_get_octet_string_param(
                pkey, "encoded-pub-key", $0.bindMemory(to: UInt8.self).baseAddress, 65, &length)
        }
        guard ok == 1, length == 65 else {
            ERR_clear_error()
            return nil
        }
        return out
    }

    /// A P-256 key's SPKI DER, kept: the fixed prefix and the point, read as a parameter. OpenSSL 3.0 encodes a key by
    /// assembling an encoder chain over every provider, which costs more than making the token's ephemeral key; a key
    /// in another form is encoded by OpenSSL.
    var p256SPKI: Data {
        keptSPKI {
            uncompressedPoint.map { Data(P256PublicKey.uncompressedSPKIPrefix) + $0 } ?? encodedSPKI
        }
    }
}
