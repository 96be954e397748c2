import COpenSSL
import Foundation

/// AES-GCM with a 16-byte tag. Any IV length is accepted because Apple Pay uses a
/// 16-byte all-zero IV rather than the usual 12 bytes.
public enum AESGCM {
    public static let tagLength = 16

    public static func seal(
        key: Data, iv: Data, plaintext: Data, aad: Data = Data()
    ) throws -> (ciphertext: Data, tag: Data) {
        let context = try makeContext(key: key, iv: iv, encrypt: true)
        defer { EVP_CIPHER_CTX_free(context) }
        try feedAAD(context, aad, encrypt: true)
        var ciphertext = Data(count: plaintext.count)
        var length: Int32 = 0
        if !plaintext.isEmpty {
            let ok = ciphertext.withUnsafeMutableBytes { out in
                plaintext.withNonNullBytes { base, count in
                    EVP_EncryptUpdate(context, out.bindMemory(to: UInt8.self).baseAddress, &length, base, Int32(count))
                }
            }
            guard ok == 1, Int(length) == plaintext.count else { throw CryptoError(openSSL: "AES-GCM encrypt failed") }
        }
        // GCM is a stream mode: Final writes no bytes, it only completes the tag.
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(context, &scratch, &length) == 1, length == 0 else {
            throw CryptoError(openSSL: "AES-GCM finalisation failed")
        }
        var tag = Data(count: tagLength)
        let ok = tag.withUnsafeMutableBytes { copenssl_evp_ctrl_gcm_get_tag(context, Int32(tagLength), $0.baseAddress) }
        guard ok == 1 else { throw CryptoError(openSSL: "cannot read AES-GCM tag") }
        return (ciphertext, tag)
    }

    /// Throws when the tag does not authenticate the ciphertext, IV and AAD under `key`.
    public static func open(key: Data, iv: Data, ciphertext: Data, tag: Data, aad: Data = Data()) throws -> Data {
        guard tag.count == tagLength else {
            throw CryptoError("AES-GCM tag must be \(tagLength) bytes, got \(tag.count)")
        }
        let context = try makeContext(key: key, iv: iv, encrypt: false)
        defer { EVP_CIPHER_CTX_free(context) }
        try feedAAD(context, aad, encrypt: false)
        var plaintext = Data(count: ciphertext.count)
        var length: Int32 = 0
        if !ciphertext.isEmpty {
            let ok = plaintext.withUnsafeMutableBytes { out in
                ciphertext.withNonNullBytes { base, count in
                    EVP_DecryptUpdate(context, out.bindMemory(to: UInt8.self).baseAddress, &length, base, Int32(count))
                }
            }
            guard ok == 1, Int(length) == ciphertext.count else { throw CryptoError(openSSL: "AES-GCM decrypt failed") }
        }
        var tagBytes = [UInt8](tag)
        guard copenssl_evp_ctrl_gcm_set_tag(context, Int32(tagLength), &tagBytes) == 1 else {
            throw CryptoError(openSSL: "cannot set AES-GCM tag")
        }
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context, &scratch, &length) == 1 else {
            // OpenSSL queues no error for a tag mismatch; say what happened.
            throw CryptoError("AES-GCM authentication failed (tag mismatch)")
        }
        return plaintext
    }

    private static func makeContext(key: Data, iv: Data, encrypt: Bool) throws -> OpaquePointer {
        let cipher: OpaquePointer
        switch key.count {
        case 16: cipher = EVP_aes_128_gcm()
        case 24: cipher = EVP_aes_192_gcm()
        case 32: cipher = EVP_aes_256_gcm()
        default: throw CryptoError("AES-GCM key must be 16, 24 or 32 bytes, got \(key.count)")
        }
        guard !iv.isEmpty else { throw CryptoError("AES-GCM IV must not be empty") }
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError(openSSL: "EVP_CIPHER_CTX_new failed") }
        let initialise = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        // Two-step init: choose the cipher, set the IV length, then supply key and IV.
        guard initialise(context, cipher, nil, nil, nil) == 1,
            copenssl_evp_ctrl_gcm_set_ivlen(context, Int32(iv.count)) == 1
        else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError(openSSL: "AES-GCM setup failed")
        }
        let ok = key.withNonNullBytes { keyBase, _ in
            iv.withNonNullBytes { ivBase, _ in initialise(context, nil, nil, keyBase, ivBase) }
        }
        guard ok == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw CryptoError(openSSL: "AES-GCM key/IV setup failed")
        }
        return context
    }

    private static func feedAAD(_ context: OpaquePointer, _ aad: Data, encrypt: Bool) throws {
        guard !aad.isEmpty else { return }
        var length: Int32 = 0
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        // A NULL output buffer tells OpenSSL these bytes are additional authenticated data.
        let ok = aad.withNonNullBytes { base, count in update(context, nil, &length, base, Int32(count)) }
        guard ok == 1 else { throw CryptoError(openSSL: "AES-GCM AAD failed") }
    }
}
