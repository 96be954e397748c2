import COpenSSL
import Foundation
import Synchronization

/// Detached CMS (PKCS#7) SignedData, the signature format of Apple Pay payment tokens.
public enum CMS {
    /// Signs `content` with SHA-256 and returns the DER of a detached SignedData that
    /// carries the signer certificate, `extraCertificates` (intermediates) and the signed attributes content type,
    /// signing time and message digest. No S/MIME capabilities, which a real token's signature does not carry either
    /// (docs/providers.md) and which OpenSSL adds unless told not to: a dozen algorithms looked up by name each time.
    public static func signDetached(
        content: Data, signer: Certificate, key: P256PrivateKey,
        extraCertificates: [Certificate] = []
    ) throws -> Data {
        guard let certificates = copenssl_sk_X509_new_null() else {
            throw CryptoError(openSSL: "sk_X509_new_null failed")
        }
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
        guard CMS_add1_signer(cms, signer.box.x509, key.box.pkey, EVP_sha256(), flags | UInt32(CMS_NOSMIMECAP)) != nil
        else {
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
    public static func verifyDetached(
        signature: Data, content: Data, trustedRoots: [Certificate],
        at time: Date? = nil
    ) throws -> [Certificate] {
        try verify(signature: signature, content: content, trustedRoots: trustedRoots, at: time).signers
    }

    /// `verifyDetached`, also handing back the certificates the signature carries: parsing a certificate decodes its
    /// key, which costs more than the signature check, so a caller that looks at the intermediates takes them from
    /// this one parse rather than parsing them again.
    public static func verify(
        signature: Data, content: Data, trustedRoots: [Certificate],
        at time: Date? = nil
    ) throws -> Verified {
        let (cms, carried, field) = try parseCarryingCertificates(signature)
        defer { CMS_ContentInfo_free(cms) }
        let moment = time ?? Date()
        let chainKey = field.map { ChainKey(field: $0, roots: trustedRoots.map { ObjectIdentifier($0.box) }) }
        let known = chainKey.flatMap { key in verifiedChains.withLock { $0[key] } }
        if let known, known.validFrom <= moment, moment <= known.validUntil {
            // These very certificates were verified up to these very roots before, and every one of them is still
            // within its validity: only the signature and the content digest are left to check, and that the signer
            // is one whose chain was verified.
            let verified = try withMemoryBIO(content) { bio in
                CMS_verify(cms, nil, nil, bio, nil, UInt32(CMS_BINARY | CMS_NO_SIGNER_CERT_VERIFY)) == 1
            }
            guard verified else { throw verificationError() }
            let signers = try signerCertificates(cms)
            if signers.allSatisfy(known.signers.contains) { return Verified(signers: signers, certificates: carried) }
        }
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
        let signers = try signerCertificates(cms)
        if let chainKey {
            // The window in which every certificate involved is valid: the chain is some of them, so inside it a
            // chain verified once verifies again.
            let involved = carried + trustedRoots
            let chain = VerifiedChain(
                roots: trustedRoots, signers: signers + (known?.signers ?? []),
                validFrom: involved.map(\.notBefore).max() ?? .distantFuture,
                validUntil: involved.map(\.notAfter).min() ?? .distantPast)
            verifiedChains.withLock { chains in
                if chains.count >= carriedLimit, chains[chainKey] == nil { chains.removeAll() }
                chains[chainKey] = chain
            }
        }
        return Verified(signers: signers, certificates: carried)
    }

    private static func signerCertificates(_ cms: OpaquePointer) throws -> [Certificate] {
        guard let signers = CMS_get0_signers(cms) else { throw CryptoError(openSSL: "CMS_get0_signers failed") }
        defer { copenssl_sk_X509_free(signers) }  // the stack is ours, the certificates are the CMS's
        return try (0..<copenssl_sk_X509_num(signers)).map { index in
            try Certificate(box: X509Box.retaining(copenssl_sk_X509_value(signers, index)))
        }
    }

    // MARK: Chains verified once

    /// A carried certificates field (by its bytes) and the trusted roots it was verified against (by identity: each
    /// entry keeps its roots, so no other certificate can take an identity while the entry is kept).
    private struct ChainKey: Hashable {
        let field: Data
        let roots: [ObjectIdentifier]
    }

    /// What verifying the chains of a certificates field established: which signers chain up to the roots, and the
    /// window in which that stays true without building the chains again. A token signer signs every token with the
    /// same certificates, and their chain took two signature checks of the three a token costs.
    private struct VerifiedChain {
        let roots: [Certificate]
        let signers: [Certificate]
        let validFrom: Date
        let validUntil: Date
    }

    private static let verifiedChains = Mutex<[ChainKey: VerifiedChain]>([:])

    /// The signingTime attribute of the first signer, if present.
    public static func signingTime(of signature: Data) -> Date? {
        defer { ERR_clear_error() }
        guard let cms = try? parse(signature) else { return nil }
        defer { CMS_ContentInfo_free(cms) }
        guard let signerInfos = CMS_get0_SignerInfos(cms), copenssl_sk_CMS_SignerInfo_num(signerInfos) > 0,
            let signerInfo = copenssl_sk_CMS_SignerInfo_value(signerInfos, 0)
        else { return nil }
        let index = CMS_signed_get_attr_by_NID(signerInfo, NID_pkcs9_signingTime, -1)
        guard index >= 0, let attribute = CMS_signed_get_attr(signerInfo, index) else { return nil }
        // RFC 5652 §11.3: UTCTime through 2049, GeneralizedTime after.
        let raw =
            X509_ATTRIBUTE_get0_data(attribute, 0, V_ASN1_UTCTIME, nil)
            ?? X509_ATTRIBUTE_get0_data(attribute, 0, V_ASN1_GENERALIZEDTIME, nil)
        guard let raw else { return nil }
        return try? Certificate.date(UnsafePointer(raw.assumingMemoryBound(to: ASN1_TIME.self)), "signingTime")
    }

    private static func parse(_ der: Data) throws -> OpaquePointer {
        try derDecode(
            der, what: "CMS", decode: { d2i_CMS_ContentInfo(nil, $0, $1) },
            release: { CMS_ContentInfo_free($0) })
    }

    // MARK: Certificates parsed once

    /// The SignedData, and the certificates it carries. OpenSSL 3.0 decodes the key of every certificate it parses
    /// through its provider decoders, which costs more than the signature check itself, on every parse. The tokens one
    /// signer makes carry the same certificates each time, so their bytes are cut off the DER and parsed once per
    /// distinct bytes (`carried`), and OpenSSL parses the rest. DER not shaped as RFC 5652's SignedData is parsed
    /// whole, so OpenSSL still says what is wrong with it.
    /// `field` is the certificates field's bytes when the certificates came from `carried`.
    static func parseCarryingCertificates(
        _ der: Data
    ) throws -> (cms: OpaquePointer, certificates: [Certificate], field: Data?) {
        let bytes = [UInt8](der)
        if let (rest, field) = splitCertificates(bytes) {
            let fieldBytes = Data(bytes[field])
            if let certificates = carried.withLock({ $0[fieldBytes] }) ?? parseCertificates(bytes[field]) {
                carried.withLock { cache in
                    if cache.count >= carriedLimit, cache[fieldBytes] == nil { cache.removeAll() }
                    cache[fieldBytes] = certificates
                }
                // Put back as parsed objects (each takes a reference), the SignedData is what the whole DER says: its
                // signer is found among them and its chains built through them. A certificate carried twice cannot be
                // added twice: such DER is parsed whole.
                let cms = try parse(Data(rest))
                if certificates.allSatisfy({ CMS_add1_cert(cms, $0.box.x509) == 1 }) {
                    return (cms, certificates, fieldBytes)
                }
                CMS_ContentInfo_free(cms)
                ERR_clear_error()
            }
        }
        let cms = try parse(der)
        // CMS_get1_certs hands over a reference to each certificate (each box takes one) and the stack, which is freed.
        var certificates: [Certificate] = []
        if let stack = CMS_get1_certs(cms) {
            defer { copenssl_sk_X509_free(stack) }
            let boxes = (0..<copenssl_sk_X509_num(stack)).map { X509Box(taking: copenssl_sk_X509_value(stack, $0)) }
            do { certificates = try boxes.map { try Certificate(box: $0) } } catch {
                CMS_ContentInfo_free(cms)
                throw error
            }
        }
        return (cms, certificates, nil)
    }

    /// Certificates by the bytes of the field that carried them; a few signers at most, so emptied when full.
    private static let carried = Mutex<[Data: [Certificate]]>([:])
    private static let carriedLimit = 16

    /// `der` without its `certificates [0] IMPLICIT CertificateSet` field, and that field's range (tag and length
    /// included); nil unless `der` is ContentInfo { signedData OID, [0] EXPLICIT SignedData { version,
    /// digestAlgorithms, encapContentInfo, certificates, … } } in definite lengths, filling its bytes exactly.
    /// OpenSSL's own TLV reader and writer (`ASN1_get_object`, `ASN1_put_object`) read and write the headers.
    static func splitCertificates(_ der: [UInt8]) -> (rest: [UInt8], certificates: Range<Int>)? {
        der.withUnsafeBufferPointer { buffer -> (rest: [UInt8], certificates: Range<Int>)? in
            guard let contentInfo = TLV(buffer, at: 0, end: buffer.count), contentInfo.isUniversal(V_ASN1_SEQUENCE),
                contentInfo.end == buffer.count,
                let type = TLV(buffer, at: contentInfo.content, end: contentInfo.end), type.isUniversal(V_ASN1_OBJECT),
                let explicit = TLV(buffer, at: type.end, end: contentInfo.end), explicit.isContext(0),
                explicit.end == contentInfo.end,
                let signedData = TLV(buffer, at: explicit.content, end: explicit.end),
                signedData.isUniversal(V_ASN1_SEQUENCE),
                signedData.end == explicit.end,
                let version = TLV(buffer, at: signedData.content, end: signedData.end),
                version.isUniversal(V_ASN1_INTEGER),
                let digests = TLV(buffer, at: version.end, end: signedData.end), digests.isUniversal(V_ASN1_SET),
                let encapsulated = TLV(buffer, at: digests.end, end: signedData.end),
                encapsulated.isUniversal(V_ASN1_SEQUENCE),
                let certificates = TLV(buffer, at: encapsulated.end, end: signedData.end), certificates.isContext(0)
            else { return nil }
            // The same structure, the certificates left out: each enclosing header written again with its new length.
            let signedDataLength = (signedData.end - signedData.content) - (certificates.end - certificates.start)
            let explicitLength = Int(ASN1_object_size(1, Int32(signedDataLength), V_ASN1_SEQUENCE))
            let contentInfoLength = (type.end - type.start) + Int(ASN1_object_size(1, Int32(explicitLength), 0))
            var rest = [UInt8](repeating: 0, count: Int(ASN1_object_size(1, Int32(contentInfoLength), V_ASN1_SEQUENCE)))
            let written = rest.withUnsafeMutableBufferPointer { out -> Int in
                var cursor: UnsafeMutablePointer<UInt8>? = out.baseAddress
                ASN1_put_object(&cursor, 1, Int32(contentInfoLength), V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL)
                for byte in buffer[type.start..<type.end] {
                    cursor!.pointee = byte
                    cursor! += 1
                }
                ASN1_put_object(&cursor, 1, Int32(explicitLength), 0, V_ASN1_CONTEXT_SPECIFIC)
                ASN1_put_object(&cursor, 1, Int32(signedDataLength), V_ASN1_SEQUENCE, V_ASN1_UNIVERSAL)
                for range in [signedData.content..<certificates.start, certificates.end..<signedData.end] {
                    for byte in buffer[range] {
                        cursor!.pointee = byte
                        cursor! += 1
                    }
                }
                return cursor! - out.baseAddress!
            }
            guard written == rest.count else { return nil }
            return (rest, certificates.start..<certificates.end)
        }
    }

    /// Each certificate of a `certificates` field (its tag and length included), or nil when any does not parse or
    /// bytes are left over.
    static func parseCertificates(_ field: ArraySlice<UInt8>) -> [Certificate]? {
        Array(field).withUnsafeBufferPointer { buffer -> [Certificate]? in
            guard let set = TLV(buffer, at: 0, end: buffer.count), set.isContext(0), set.end == buffer.count else {
                return nil
            }
            var certificates: [Certificate] = []
            var at = set.content
            while at < set.end {
                guard let element = TLV(buffer, at: at, end: set.end),
                    let certificate = try? Certificate(der: Data(buffer[element.start..<element.end]))
                else { return nil }
                certificates.append(certificate)
                at = element.end
            }
            return certificates
        }
    }

    /// One DER tag-length-value, as OpenSSL's `ASN1_get_object` reads it: definite lengths only.
    private struct TLV {
        let start: Int, content: Int, end: Int
        let tag: Int32, tagClass: Int32, constructed: Bool

        init?(_ buffer: UnsafeBufferPointer<UInt8>, at start: Int, end: Int) {
            guard start < end, end <= buffer.count, let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base + start
            var length = 0
            var tag: Int32 = 0
            var tagClass: Int32 = 0
            // A header it cannot read is recorded in this thread's error queue; a nil here says so, and what it
            // recorded must not be left for the next OpenSSL call on the thread to take for its own.
            ERR_set_mark()
            let flags = ASN1_get_object(&cursor, &length, &tag, &tagClass, end - start)
            ERR_pop_to_mark()
            // 0x80: an error; 0x21: an indefinite length (BER, not DER).
            guard flags & 0x80 == 0, flags != 0x21, let cursor else { return nil }
            let content = cursor - base
            guard length >= 0, content + length <= end else { return nil }
            self.start = start
            self.content = content
            self.end = content + length
            self.tag = tag
            self.tagClass = tagClass
            constructed = flags & V_ASN1_CONSTRUCTED != 0
        }

        func isUniversal(_ expected: Int32) -> Bool { tagClass == V_ASN1_UNIVERSAL && tag == expected }
        func isContext(_ expected: Int32) -> Bool {
            tagClass == V_ASN1_CONTEXT_SPECIFIC && tag == expected && constructed
        }
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
