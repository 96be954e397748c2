import COpenSSL
import Foundation

/// Detached CMS (PKCS#7) SignedData, the signature format of Apple Pay payment tokens.
public enum CMS {
    /// Signs `content` with SHA-256 and returns the DER of a detached SignedData that
    /// carries the signer certificate, `extraCertificates` (intermediates) and a signingTime.
    public static func signDetached(content: Data, signer: Certificate, key: P256PrivateKey,
                                    extraCertificates: [Certificate] = []) throws -> Data {
        guard let certificates = copenssl_sk_X509_new_null() else { throw CryptoError(openSSL: "sk_X509_new_null failed") }
        defer { copenssl_sk_X509_free(certificates) }  // CMS takes its own references
        for certificate in extraCertificates {
            guard copenssl_sk_X509_push(certificates, certificate.box.x509) > 0 else {
                throw CryptoError(openSSL: "sk_X509_push failed")
            }
        }
        // CMS_PARTIAL so the signer can be added with an explicit SHA-256 digest;
        // CMS_add1_signer adds the signingTime attribute by default.
        let flags = UInt32(CMS_DETACHED | CMS_BINARY)
        guard let cms = CMS_sign(nil, nil, certificates, nil, flags | UInt32(CMS_PARTIAL)) else {
            throw CryptoError(openSSL: "CMS_sign failed")
        }
        defer { CMS_ContentInfo_free(cms) }
        guard CMS_add1_signer(cms, signer.box.x509, key.box.pkey, EVP_sha256(), flags) != nil else {
            throw CryptoError(openSSL: "CMS_add1_signer failed")
        }
        try withMemoryBIO(content) { bio in
            guard CMS_final(cms, bio, nil, flags) == 1 else { throw CryptoError(openSSL: "CMS_final failed") }
        }
        return try derEncode { i2d_CMS_ContentInfo(cms, $0) }
    }

    /// What a verified SignedData vouches for: its signers, and every certificate it carries (the signers' and the
    /// intermediates'), as parsed with it once.
    public struct Verified: Sendable {
        public let signers: [Certificate]
        public let certificates: [Certificate]
    }

    /// Verifies a detached SignedData over `content`, building each signer's chain to one of
    /// `trustedRoots` (at `time` when given, otherwise now). Returns the signer certificates.
    /// Throws a CryptoError saying whether the chain, the content digest or the signature failed.
    @discardableResult
    public static func verifyDetached(signature: Data, content: Data, trustedRoots: [Certificate],
                                      at time: Date? = nil) throws -> [Certificate] {
        try verify(signature: signature, content: content, trustedRoots: trustedRoots, at: time).signers
    }

    /// `verifyDetached`, also handing back the certificates the signature carries: parsing a certificate decodes its
    /// key, which costs more than the signature check, so a caller that looks at the intermediates takes them from
    /// this one parse rather than parsing them again.
    public static func verify(signature: Data, content: Data, trustedRoots: [Certificate],
                              at time: Date? = nil) throws -> Verified {
        let cms = try parse(signature)
        defer { CMS_ContentInfo_free(cms) }
        guard let store = X509_STORE_new() else { throw CryptoError(openSSL: "X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        for root in trustedRoots {
            guard X509_STORE_add_cert(store, root.box.x509) == 1 else {  // takes its own reference
                throw CryptoError(openSSL: "X509_STORE_add_cert failed")
            }
        }
        if let time {
            X509_VERIFY_PARAM_set_time(X509_STORE_get0_param(store), time_t(time.timeIntervalSince1970))
        }
        let verified = try withMemoryBIO(content) { bio in
            CMS_verify(cms, nil, store, bio, nil, UInt32(CMS_BINARY)) == 1
        }
        guard verified else { throw verificationError() }

        guard let signers = CMS_get0_signers(cms) else { throw CryptoError(openSSL: "CMS_get0_signers failed") }
        defer { copenssl_sk_X509_free(signers) }  // the stack is ours, the certificates are the CMS's
        let signerCertificates = try (0..<copenssl_sk_X509_num(signers)).map { index in
            try Certificate(box: X509Box.retaining(copenssl_sk_X509_value(signers, index)))
        }
        // CMS_get1_certs hands over a reference to each certificate (each box takes one) and the stack, which is freed.
        var carried: [Certificate] = []
        if let certificates = CMS_get1_certs(cms) {
            defer { copenssl_sk_X509_free(certificates) }
            let boxes = (0..<copenssl_sk_X509_num(certificates)).map { X509Box(taking: copenssl_sk_X509_value(certificates, $0)) }
            carried = try boxes.map { try Certificate(box: $0) }
        }
        return Verified(signers: signerCertificates, certificates: carried)
    }

    /// The signingTime attribute of the first signer, if present.
    public static func signingTime(of signature: Data) -> Date? {
        defer { ERR_clear_error() }
        guard let cms = try? parse(signature) else { return nil }
        defer { CMS_ContentInfo_free(cms) }
        guard let signerInfos = CMS_get0_SignerInfos(cms), copenssl_sk_CMS_SignerInfo_num(signerInfos) > 0,
              let signerInfo = copenssl_sk_CMS_SignerInfo_value(signerInfos, 0) else { return nil }
        let index = CMS_signed_get_attr_by_NID(signerInfo, NID_pkcs9_signingTime, -1)
        guard index >= 0, let attribute = CMS_signed_get_attr(signerInfo, index) else { return nil }
        // RFC 5652 §11.3: UTCTime through 2049, GeneralizedTime after.
        let raw = X509_ATTRIBUTE_get0_data(attribute, 0, V_ASN1_UTCTIME, nil)
            ?? X509_ATTRIBUTE_get0_data(attribute, 0, V_ASN1_GENERALIZEDTIME, nil)
        guard let raw else { return nil }
        return try? Certificate.date(UnsafePointer(raw.assumingMemoryBound(to: ASN1_TIME.self)), "signingTime")
    }

    private static func parse(_ der: Data) throws -> OpaquePointer {
        try derDecode(der, what: "CMS", decode: { d2i_CMS_ContentInfo(nil, $0, $1) },
                      release: { CMS_ContentInfo_free($0) })
    }

    /// Turns OpenSSL's CMS_verify error queue into one clear line.
    private static func verificationError() -> CryptoError {
        let errors = drainOpenSSLErrors()
        let reasons = Set(errors.map { ERR_GET_REASON($0.code) })
        let summary: String
        if reasons.contains(CMS_R_CERTIFICATE_VERIFY_ERROR) {
            summary = "signer certificate is not trusted"
        } else if reasons.contains(CMS_R_CONTENT_VERIFY_ERROR) {
            summary = "content does not match the signed digest"
        } else if reasons.contains(CMS_R_VERIFICATION_FAILURE) {
            summary = "signature does not verify"
        } else {
            summary = "verification failed"
        }
        let details = errors.map(\.text).joined(separator: "; ")
        return CryptoError("CMS \(summary): \(details)")
    }
}
