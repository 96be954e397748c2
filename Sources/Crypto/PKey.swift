import COpenSSL
import COpenSSLSetup
import Foundation
import Synchronization

/// Owns one reference to an OpenSSL EVP_PKEY.
///
/// `@unchecked Sendable` is sound because the key is never mutated after construction:
/// every operation creates its own EVP_PKEY_CTX / EVP_MD_CTX, and OpenSSL 3 documents
/// EVP_PKEY as safe for concurrent read-only use. The one thing kept beside it, its encoded SPKI, is behind a mutex.
final class PKeyBox: @unchecked Sendable {
    let pkey: OpaquePointer
    /// The SubjectPublicKeyInfo DER, once asked for: a fixed key's (a token recipient's, the verifier's own) is asked
    /// for with every token, and the key never changes.
    private let spki = Mutex<Data?>(nil)

    init(taking pkey: OpaquePointer) { self.pkey = pkey }
    deinit { EVP_PKEY_free(pkey) }

    // MARK: Loading

    /// A P-256 key, the kind nearly every key this tool reads is, is made from its scalar or point
    /// (`p256(pem:label:)`); any other PEM goes through OpenSSL's decoders.
    static func privateKey(pem: String) throws -> PKeyBox {
        if let key = p256(pem: pem, label: "PRIVATE KEY") { return key }
        let key = try withMemoryBIO(Data(pem.utf8)) { PEM_read_bio_PrivateKey($0, nil, refusePassword, nil) }
        guard let key else { throw CryptoError(openSSL: "cannot read private key PEM") }
        return PKeyBox(taking: key)
    }

    static func publicKey(pem: String) throws -> PKeyBox {
        if let key = p256(pem: pem, label: "PUBLIC KEY") { return key }
        let key = try withMemoryBIO(Data(pem.utf8)) { PEM_read_bio_PUBKEY($0, nil, refusePassword, nil) }
        guard let key else { throw CryptoError(openSSL: "cannot read public key PEM") }
        return PKeyBox(taking: key)
    }

    /// The P-256 key `pem`'s first block holds, when it is an unencrypted "PRIVATE KEY" (PKCS#8) or "EC PRIVATE KEY"
    /// (SEC1) — `label` "PRIVATE KEY" — or a "PUBLIC KEY" with an uncompressed point: built from its scalar
    /// (`copenssl_p256_private_scalar`, OpenSSL's ASN.1 templates) or its point, as `P256PrivateKey(rawScalar:)` and
    /// `P256PublicKey(x963:)` build keys. OpenSSL 3.0 reads a key PEM by assembling a decoder chain over every
    /// provider: about 0.7 ms a key, and a one-step Bahn run reads three (a fifth of its instructions). Nil for
    /// anything else, which the decoders read (or refuse) as they always did.
    static func p256(pem: String, label: String) -> PKeyBox? {
        guard var block = firstPEMBlock(pem) else { return nil }
        switch (label, block.label) {
        case ("PRIVATE KEY", "PRIVATE KEY"), ("PRIVATE KEY", "EC PRIVATE KEY"):
            var scalar = Data(count: 32)
            // A private key's bytes are wiped once the key is made (OpenSSL keeps its own copy).
            defer {
                scalar.resetBytes(in: 0..<scalar.count)
                block.der.resetBytes(in: 0..<block.der.count)
            }
            let read = block.der.withUnsafeBytes { der in
                scalar.withUnsafeMutableBytes { out in
                    copenssl_p256_private_scalar(
                        der.bindMemory(to: UInt8.self).baseAddress, der.count, block.label == "PRIVATE KEY" ? 1 : 0,
                        out.bindMemory(to: UInt8.self).baseAddress)
                }
            }
            guard read == 1 else { return nil }
            return try? P256PrivateKey(rawScalar: scalar).box
        case ("PUBLIC KEY", "PUBLIC KEY"):
            return P256PublicKey.uncompressedPoint(ofSPKI: block.der).flatMap { try? P256PublicKey(x963: $0).box }
        default:
            return nil
        }
    }

    /// The label and DER of the first PEM block in `pem`; nil when there is none, or it has headers (a legacy
    /// encrypted key's `Proc-Type`).
    static func firstPEMBlock(_ pem: String) -> (label: String, der: Data)? {
        try? withMemoryBIO(Data(pem.utf8)) { bio -> (label: String, der: Data)? in
            var name: UnsafeMutablePointer<CChar>?
            var header: UnsafeMutablePointer<CChar>?
            var data: UnsafeMutablePointer<UInt8>?
            var length = 0
            // No block: what the reader recorded is dropped, the caller's fallback reports its own.
            ERR_set_mark()
            guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else {
                ERR_pop_to_mark()
                return nil
            }
            ERR_pop_to_mark()
            defer {
                copenssl_free(name)
                copenssl_free(header)
                // A private key's DER: wiped before it is freed.
                CRYPTO_clear_free(data, length, nil, 0)
            }
            guard let name, let data, header?.pointee ?? 0 == 0 else { return nil }
            return (String(cString: name), Data(bytes: data, count: length))
        }
    }

    static func publicKey(spkiDER: Data) throws -> PKeyBox {
        PKeyBox(
            taking: try derDecode(
                spkiDER, what: "SubjectPublicKeyInfo",
                decode: { d2i_PUBKEY(nil, $0, $1) }, release: { EVP_PKEY_free($0) }))
    }

    /// Builds a key from OSSL_PARAMs (EVP_PKEY_fromdata), e.g. raw EC points or RSA numbers.
    static func fromParams(type: String, selection: Int32, _ params: ParamBuilder) throws -> PKeyBox {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError(openSSL: "EVP_PKEY_CTX_new_from_name(\(type)) failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        let ok = try params.withParams { list in
            guard EVP_PKEY_fromdata_init(context) == 1 else { return Int32(0) }
            return EVP_PKEY_fromdata(context, &key, selection, list)
        }
        guard ok == 1, let key else { throw CryptoError(openSSL: "cannot build \(type) key") }
        return PKeyBox(taking: key)
    }

    /// Generates a key; `configure` sets algorithm parameters (curve, modulus size).
    static func generate(type: String, _ configure: (OpaquePointer) -> Int32) throws -> PKeyBox {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else {
            throw CryptoError(openSSL: "EVP_PKEY_CTX_new_from_name(\(type)) failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else {
            throw CryptoError(openSSL: "\(type) key generation failed")
        }
        return PKeyBox(taking: key)
    }

    // MARK: Inspecting

    func isA(_ name: String) -> Bool { EVP_PKEY_is_a(pkey, name) == 1 }

    /// True for an EC key on P-256 (OpenSSL names it "prime256v1").
    var isP256: Bool {
        guard isA("EC") else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &length) == 1 else {
            ERR_clear_error()
            return false
        }
        let group = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return group == "prime256v1" || group == "P-256"
    }

    // MARK: Encoding

    /// Encoded on first use, then kept (see `spki`).
    var spkiDER: Data { keptSPKI { encodedSPKI } }

    /// The SPKI DER as OpenSSL's encoder writes it (not kept: `spkiDER` keeps it).
    var encodedSPKI: Data { mustSucceed("SPKI encoding") { try derEncode { i2d_PUBKEY(pkey, $0) } } }

    /// The kept SPKI DER, made by `make` the first time (a key type that knows its encoding without OpenSSL's encoder
    /// makes it so).
    func keptSPKI(_ make: () -> Data) -> Data {
        if let known = spki.withLock({ $0 }) { return known }
        let der = make()
        spki.withLock { $0 = der }
        return der
    }

    /// Whether the SPKI DER has been encoded and kept (for the tests of `spkiDER`).
    var keepsSPKI: Bool { spki.withLock { $0 != nil } }

    var publicPEM: String {
        let bytes = mustSucceed("public key PEM") {
            try writeToMemoryBIO("public key PEM") { PEM_write_bio_PUBKEY($0, pkey) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// PKCS#8 "PRIVATE KEY" (what OpenSSL 3 writes for PEM_write_bio_PrivateKey).
    var privatePEM: String {
        let bytes = mustSucceed("private key PEM") {
            try writeToMemoryBIO("private key PEM") { PEM_write_bio_PrivateKey($0, pkey, nil, nil, 0, nil, nil) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A new public-only key, by round-tripping through SubjectPublicKeyInfo.
    var publicOnly: PKeyBox {
        let der = spkiDER
        let box = mustSucceed("public key extraction") { try PKeyBox.publicKey(spkiDER: der) }
        box.spki.withLock { $0 = der }
        return box
    }

    // MARK: Signatures (SHA-256)

    /// EVP_DigestSign with SHA-256. For RSA this is PKCS#1 v1.5; for EC the result is DER.
    func signSHA256(_ message: Data) throws -> Data {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError(openSSL: "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestSignInit(context, &keyContext, EVP_sha256(), nil, pkey) == 1 else {
            throw CryptoError(openSSL: "EVP_DigestSignInit failed")
        }
        if isA("RSA") {
            // Explicit, so RS256 never silently becomes PSS.
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) == 1 else {
                throw CryptoError(openSSL: "cannot select PKCS#1 v1.5 padding")
            }
        }
        return try message.withNonNullBytes { base, count in
            var length = 0
            guard EVP_DigestSign(context, nil, &length, base, count) == 1 else {
                throw CryptoError(openSSL: "EVP_DigestSign (size) failed")
            }
            var signature = Data(count: length)
            let ok = signature.withUnsafeMutableBytes {
                EVP_DigestSign(context, $0.bindMemory(to: UInt8.self).baseAddress, &length, base, count)
            }
            guard ok == 1 else { throw CryptoError(openSSL: "EVP_DigestSign failed") }
            return signature.prefix(length)
        }
    }

    /// EVP_DigestVerify with SHA-256; any failure (including malformed input) is `false`.
    func verifySHA256(signature: Data, message: Data) -> Bool {
        defer { ERR_clear_error() }  // a failed verification is an answer, not an error to report later
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, EVP_sha256(), nil, pkey) == 1 else { return false }
        if isA("RSA"), EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PADDING) != 1 { return false }
        let ok = signature.withNonNullBytes { sigBase, sigCount in
            message.withNonNullBytes { msgBase, msgCount in
                EVP_DigestVerify(context, sigBase, sigCount, msgBase, msgCount)
            }
        }
        return ok == 1
    }
}
