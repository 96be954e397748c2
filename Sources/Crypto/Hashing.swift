import COpenSSL
import Foundation

public enum Digest {
    public static func sha256(_ data: Data) -> Data {
        var out = Data(count: 32)
        let ok = out.withUnsafeMutableBytes { outRaw in
            data.withNonNullBytes { base, count in
                EVP_Digest(base, count, outRaw.bindMemory(to: UInt8.self).baseAddress, nil, EVP_sha256(), nil)
            }
        }
        guard ok == 1 else { fatalError("\(CryptoError(openSSL: "EVP_Digest(SHA-256) failed"))") }
        return out
    }
}

public enum HMAC {
    public static func sha256(key: Data, message: Data) -> Data {
        var out = Data(count: 32)
        var length: UInt32 = 0
        let result = out.withUnsafeMutableBytes { outRaw in
            key.withNonNullBytes { keyBase, keyCount in
                message.withNonNullBytes { messageBase, messageCount in
                    COpenSSL.HMAC(
                        EVP_sha256(), keyBase, Int32(keyCount), messageBase, messageCount,
                        outRaw.bindMemory(to: UInt8.self).baseAddress, &length)
                }
            }
        }
        guard result != nil, length == 32 else { fatalError("\(CryptoError(openSSL: "HMAC-SHA256 failed"))") }
        return out
    }
}

public enum SecureRandom {
    /// `n` bytes from OpenSSL's CSPRNG. Failure is fatal: without randomness nothing is safe to do.
    public static func bytes(_ n: Int) -> Data {
        precondition(n >= 0, "negative byte count")
        var out = Data(count: n)
        guard n > 0 else { return out }
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.bindMemory(to: UInt8.self).baseAddress, Int32(n)) }
        guard ok == 1 else { fatalError("\(CryptoError(openSSL: "RAND_bytes failed"))") }
        return out
    }

    /// A random (version 4) UUID per RFC 4122 §4.4, lowercase.
    public static func uuid() -> String {
        var b = [UInt8](bytes(16))
        b[6] = (b[6] & 0x0f) | 0x40  // version 4
        b[8] = (b[8] & 0x3f) | 0x80  // variant 10xx
        let hex = Data(b).hexString
        let parts = [(0, 8), (8, 12), (12, 16), (16, 20), (20, 32)].map { start, end in
            hex.dropFirst(start).prefix(end - start)
        }
        return parts.joined(separator: "-")
    }
}

/// NIST SP 800-56A single-step key derivation with SHA-256 (the "Concat KDF" of
/// JWA ECDH-ES and of Apple Pay): SHA-256(counter ‖ Z ‖ OtherInfo) for counter = 1, 2, ...
public enum ConcatKDF {
    public static func sha256(sharedSecret: Data, otherInfo: Data, length: Int) -> Data {
        precondition(!sharedSecret.isEmpty, "ConcatKDF needs a shared secret")
        precondition(length > 0, "ConcatKDF output length must be positive")
        return mustSucceed("SSKDF") {
            guard let kdf = EVP_KDF_fetch(nil, "SSKDF", nil) else {
                throw CryptoError(openSSL: "EVP_KDF_fetch(SSKDF) failed")
            }
            defer { EVP_KDF_free(kdf) }
            guard let context = EVP_KDF_CTX_new(kdf) else { throw CryptoError(openSSL: "EVP_KDF_CTX_new failed") }
            defer { EVP_KDF_CTX_free(context) }
            let params = try ParamBuilder()
            try params.add("digest", utf8: "SHA256")  // OSSL_KDF_PARAM_DIGEST
            try params.add("secret", octets: sharedSecret)  // OSSL_KDF_PARAM_SECRET: Z
            if !otherInfo.isEmpty {
                try params.add("info", octets: otherInfo)  // OSSL_KDF_PARAM_INFO: OtherInfo
            }
            var out = Data(count: length)
            let ok = try params.withParams { list in
                out.withUnsafeMutableBytes {
                    EVP_KDF_derive(context, $0.bindMemory(to: UInt8.self).baseAddress, length, list)
                }
            }
            guard ok == 1 else { throw CryptoError(openSSL: "SSKDF derive failed") }
            return out
        }
    }
}
