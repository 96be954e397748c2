import COpenSSL
import Foundation

/// Owns one reference to an OpenSSL X509.
///
/// `@unchecked Sendable`: we never mutate a certificate after it is built, and OpenSSL 3
/// guards its internal lazily-computed caches (extensions, hashes) with a lock.
final class X509Box: @unchecked Sendable {
    let x509: OpaquePointer

    init(taking x509: OpaquePointer) { self.x509 = x509 }
    deinit { X509_free(x509) }

    /// For pointers borrowed from another OpenSSL object: take our own reference.
    static func retaining(_ x509: OpaquePointer) -> X509Box {
        X509_up_ref(x509)
        return X509Box(taking: x509)
    }
}

/// An X.509 certificate.
public struct Certificate: Sendable, Equatable {
    let box: X509Box
    public let notBefore: Date
    public let notAfter: Date
    /// The first CN of the subject, if any.
    public let subjectCommonName: String?

    init(box: X509Box) throws {
        self.box = box
        notBefore = try Certificate.date(X509_get0_notBefore(box.x509), "notBefore")
        notAfter = try Certificate.date(X509_get0_notAfter(box.x509), "notAfter")
        subjectCommonName = Certificate.commonName(X509_get_subject_name(box.x509))
    }

    public init(der: Data) throws {
        let x509 = try derDecode(
            der, what: "certificate", decode: { d2i_X509(nil, $0, $1) }, release: { X509_free($0) })
        try self.init(box: X509Box(taking: x509))
    }

    /// The first certificate in a PEM text.
    public init(pem: String) throws {
        guard let first = try Certificate.chain(pem: pem).first else {
            throw CryptoError("no certificate found in PEM")
        }
        self = first
    }

    /// Every certificate in a PEM text (e.g. a chain file), in order.
    public static func chain(pem: String) throws -> [Certificate] {
        var certificates: [Certificate] = []
        ERR_clear_error()  // the queue, read below to tell the input's end from a corrupt block, starts empty
        try withMemoryBIO(Data(pem.utf8)) { bio in
            while let x509 = PEM_read_bio_X509(bio, nil, refusePassword, nil) {
                certificates.append(try Certificate(box: X509Box(taking: x509)))
            }
        }
        // Reaching the end of the input leaves a "no start line" entry in the queue;
        // anything else means a block was corrupt, and a partial chain would mislead.
        let errors = drainOpenSSLErrors()
        let onlyEndOfInput = errors.allSatisfy { ERR_GET_REASON($0.code) == PEM_R_NO_START_LINE }
        guard !certificates.isEmpty, onlyEndOfInput else {
            throw CryptoError("cannot read certificate PEM: \(errors.map(\.text).joined(separator: "; "))")
        }
        return certificates
    }

    public var derRepresentation: Data {
        mustSucceed("certificate DER") { try derEncode { i2d_X509(box.x509, $0) } }
    }

    public var pemRepresentation: String {
        let bytes = mustSucceed("certificate PEM") {
            try writeToMemoryBIO("certificate PEM") { PEM_write_bio_X509($0, box.x509) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The subject key, when it is P-256 or RSA.
    public var publicKey: VerifyingKey? {
        guard let key = X509_get_pubkey(box.x509) else {  // returns a new reference
            ERR_clear_error()
            return nil
        }
        return try? VerifyingKey(box: PKeyBox(taking: key))
    }

    /// The subject key, when it is P-256.
    public var p256PublicKey: P256PublicKey? {
        if case .es256(let key) = publicKey { return key }
        return nil
    }

    /// Whether an extension with this dotted OID (e.g. "1.2.840.113635.100.6.29") is present.
    public func hasExtension(oid: String) -> Bool {
        guard let object = OBJ_txt2obj(oid, 1) else {  // 1: numeric form only, no name lookup
            ERR_clear_error()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(box.x509, object, -1) >= 0
    }

    /// The same certificate: OpenSSL compares the hashes it keeps of each, then their encodings, encoding nothing.
    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        X509_cmp(lhs.box.x509, rhs.box.x509) == 0
    }

    // MARK: Issuing (test fixtures)

    /// Issues an X.509 v3 certificate signed with ECDSA-SHA256.
    ///
    /// - issuer: the issuing CA and its key; `nil` makes the certificate self-signed.
    /// - signingKey: the key that signs. With an issuer it must be the issuer's key
    ///   (checked, to catch mix-ups); when self-signed it should match `publicKey`.
    /// - extraExtensionOIDs: each added as a non-critical extension whose value is ASN.1 NULL
    ///   (Apple's marker extensions, e.g. 1.2.840.113635.100.6.29, look like this).
    /// The serial is random, notBefore is backdated 5 minutes to tolerate clock skew,
    /// and basicConstraints / keyUsage are set for a CA or a signing leaf.
    public static func issue(
        subjectCN: String,
        publicKey: P256PublicKey,
        issuer: (cert: Certificate, key: P256PrivateKey)?,
        signingKey: P256PrivateKey,
        isCA: Bool,
        extraExtensionOIDs: [String] = [],
        validDays: Int = 365
    ) throws -> Certificate {
        if let issuer, issuer.key.publicKey != signingKey.publicKey {
            throw CryptoError("signingKey is not the issuer's key")
        }
        guard let x509 = X509_new() else { throw CryptoError(openSSL: "X509_new failed") }
        let box = X509Box(taking: x509)  // frees x509 on every exit path

        guard X509_set_version(x509, 2) == 1 else { throw CryptoError(openSSL: "X509_set_version failed") }  // 2 = v3
        try setRandomSerial(x509)
        guard X509_gmtime_adj(X509_getm_notBefore(x509), -300) != nil,
            X509_time_adj_ex(X509_getm_notAfter(x509), Int32(validDays), 0, nil) != nil
        else {
            throw CryptoError(openSSL: "cannot set validity")
        }
        guard X509_set_pubkey(x509, publicKey.box.pkey) == 1 else {
            throw CryptoError(openSSL: "X509_set_pubkey failed")
        }
        try setSubject(x509, commonName: subjectCN)
        let issuerName = issuer.map { X509_get_subject_name($0.cert.box.x509) } ?? X509_get_subject_name(x509)
        guard X509_set_issuer_name(x509, issuerName) == 1 else {
            throw CryptoError(openSSL: "X509_set_issuer_name failed")
        }

        var context = X509V3_CTX()  // zeroed, so no config database (X509V3_set_ctx_nodb)
        X509V3_set_ctx(&context, issuer?.cert.box.x509 ?? x509, x509, nil, nil, 0)
        try addExtension(x509, &context, NID_basic_constraints, isCA ? "critical,CA:TRUE" : "critical,CA:FALSE")
        try addExtension(
            x509, &context, NID_key_usage,
            isCA ? "critical,keyCertSign,cRLSign,digitalSignature" : "critical,digitalSignature")
        try addExtension(x509, &context, NID_subject_key_identifier, "hash")
        if issuer != nil {
            try addExtension(x509, &context, NID_authority_key_identifier, "keyid")
        }
        for oid in extraExtensionOIDs {
            try addNullExtension(x509, oid: oid)
        }

        guard X509_sign(x509, signingKey.box.pkey, EVP_sha256()) > 0 else {
            throw CryptoError(openSSL: "X509_sign failed")
        }
        return try Certificate(box: box)
    }

    // MARK: Helpers

    private static func setRandomSerial(_ x509: OpaquePointer) throws {
        var bytes = SecureRandom.bytes(16)
        bytes[0] = (bytes[0] & 0x7f) | 0x01  // positive and never zero (RFC 5280 §4.1.2.2)
        guard let bn = bytes.withNonNullBytes({ BN_bin2bn($0, Int32($1), nil) }) else {
            throw CryptoError(openSSL: "BN_bin2bn failed")
        }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil else {
            throw CryptoError(openSSL: "cannot set serial number")
        }
    }

    private static func setSubject(_ x509: OpaquePointer, commonName: String) throws {
        guard let name = X509_NAME_new() else { throw CryptoError(openSSL: "X509_NAME_new failed") }
        defer { X509_NAME_free(name) }
        guard X509_NAME_add_entry_by_txt(name, "CN", copenssl_mbstring_utf8(), commonName, -1, -1, 0) == 1,
            X509_set_subject_name(x509, name) == 1
        else {  // set_subject_name copies
            throw CryptoError(openSSL: "cannot set subject CN")
        }
    }

    private static func addExtension(
        _ x509: OpaquePointer, _ context: inout X509V3_CTX, _ nid: Int32, _ value: String
    ) throws {
        guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else {
            throw CryptoError(openSSL: "cannot build extension \(value)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else { throw CryptoError(openSSL: "X509_add_ext failed") }
    }

    private static func addNullExtension(_ x509: OpaquePointer, oid: String) throws {
        guard let object = OBJ_txt2obj(oid, 1) else { throw CryptoError(openSSL: "invalid OID \(oid)") }
        defer { ASN1_OBJECT_free(object) }
        guard let value = ASN1_OCTET_STRING_new() else { throw CryptoError(openSSL: "ASN1_OCTET_STRING_new failed") }
        defer { ASN1_OCTET_STRING_free(value) }
        let asn1Null: [UInt8] = [0x05, 0x00]  // DER of ASN.1 NULL
        guard ASN1_OCTET_STRING_set(value, asn1Null, Int32(asn1Null.count)) == 1,
            let ext = X509_EXTENSION_create_by_OBJ(nil, object, 0, value)
        else {
            throw CryptoError(openSSL: "cannot build extension \(oid)")
        }
        defer { X509_EXTENSION_free(ext) }
        guard X509_add_ext(x509, ext, -1) == 1 else { throw CryptoError(openSSL: "X509_add_ext failed") }
    }

    static func date(_ time: UnsafePointer<ASN1_TIME>?, _ what: String) throws -> Date {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else { throw CryptoError(openSSL: "cannot parse \(what)") }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }

    private static func commonName(_ name: OpaquePointer?) -> String? {
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        var utf8: UnsafeMutablePointer<UInt8>?
        let length = ASN1_STRING_to_UTF8(&utf8, data)
        guard length >= 0, let utf8 else {
            ERR_clear_error()
            return nil
        }
        defer { copenssl_free(utf8) }
        return String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
    }
}
