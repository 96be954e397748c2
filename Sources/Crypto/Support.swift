import COpenSSL
import Foundation

/// The OpenSSL this process runs with ("OpenSSL 3.0.15 3 Sep 2024"), for `doctor`.
public let openSSLVersion = String(cString: OpenSSL_version(Int32(OPENSSL_VERSION)))

/// Every failure in this module. The message is one line and, when OpenSSL was
/// involved, ends with OpenSSL's own error strings so a failure can be diagnosed
/// from a log line alone.
public struct CryptoError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }

    /// A failure that is ours alone (bad length, wrong key type, ...).
    /// The OpenSSL queue is cleared so stale entries cannot leak into a later message.
    init(_ message: String) {
        ERR_clear_error()
        self.message = message
    }

    /// A failure reported by OpenSSL: drains its error queue into the message.
    init(openSSL context: String) {
        let details = drainOpenSSLErrors().map(\.text)
        self.message = details.isEmpty ? context : "\(context): \(details.joined(separator: "; "))"
    }
}

/// One entry of OpenSSL's thread-local error queue.
struct OpenSSLError {
    let code: UInt
    let text: String
}

/// Empties OpenSSL's thread-local error queue, oldest first.
func drainOpenSSLErrors() -> [OpenSSLError] {
    var errors: [OpenSSLError] = []
    var data: UnsafePointer<CChar>?
    var flags: Int32 = 0
    while true {
        let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
        if code == 0 { break }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        var text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // ERR_TXT_STRING: OpenSSL attached extra text, e.g. "Verify error:unable to get local issuer certificate".
        if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
            text += " (\(String(cString: data)))"
        }
        errors.append(OpenSSLError(code: code, text: text))
    }
    return errors
}

/// For APIs that cannot fail with valid inputs (e.g. signing with a key we already loaded):
/// a failure there means OpenSSL itself is broken or out of memory, which is not recoverable.
func mustSucceed<T>(_ what: String, _ body: () throws -> T) -> T {
    do {
        return try body()
    } catch {
        fatalError("\(what): \(error)")
    }
}

extension Data {
    /// OpenSSL rejects NULL buffers in several places even with a zero length,
    /// and `withUnsafeBytes` on empty `Data` may hand out NULL, so always pass a real pointer.
    func withNonNullBytes<R>(_ body: (UnsafePointer<UInt8>, Int) throws -> R) rethrows -> R {
        if isEmpty {
            let zero: UInt8 = 0
            return try withUnsafePointer(to: zero) { try body($0, 0) }
        }
        return try withUnsafeBytes { raw in
            try body(raw.bindMemory(to: UInt8.self).baseAddress!, raw.count)
        }
    }
}

// MARK: - DER and BIO plumbing

/// Runs an OpenSSL `i2d_*` encoder twice: once for the length, once into the buffer.
func derEncode(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) throws -> Data {
    let length = encode(nil)
    guard length > 0 else { throw CryptoError(openSSL: "DER encoding failed") }
    var out = Data(count: Int(length))
    let written = out.withUnsafeMutableBytes { raw -> Int32 in
        var cursor: UnsafeMutablePointer<UInt8>? = raw.bindMemory(to: UInt8.self).baseAddress
        return encode(&cursor)
    }
    guard written == length else { throw CryptoError(openSSL: "DER encoding failed") }
    return out
}

/// Runs an OpenSSL `d2i_*` decoder over `der`. Trailing bytes are rejected (a DER object
/// is exactly one encoding); `release` frees the decoded object in that case.
func derDecode<T>(
    _ der: Data, what: String,
    decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> T?,
    release: (T) -> Void
) throws -> T {
    try der.withNonNullBytes { base, count in
        var cursor: UnsafePointer<UInt8>? = base
        guard let object = decode(&cursor, count) else {
            throw CryptoError(openSSL: "cannot parse \(what) DER")
        }
        guard cursor == base + count else {
            release(object)
            throw CryptoError("\(what) DER has trailing bytes")
        }
        return object
    }
}

/// Collects everything OpenSSL writes into a fresh memory BIO.
func writeToMemoryBIO(_ what: String, _ write: (OpaquePointer) -> Int32) throws -> Data {
    guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError(openSSL: "BIO_new failed") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw CryptoError(openSSL: "cannot write \(what)") }
    var bytes: UnsafeMutablePointer<CChar>?
    let count = copenssl_bio_get_mem_data(bio, &bytes)
    guard count > 0, let bytes else { return Data() }
    return Data(bytes: bytes, count: Int(count))
}

/// Gives OpenSSL a read-only memory BIO over `data` for the duration of `body`.
func withMemoryBIO<R>(_ data: Data, _ body: (OpaquePointer) throws -> R) throws -> R {
    try data.withNonNullBytes { base, count in
        guard let bio = BIO_new_mem_buf(base, Int32(count)) else {
            throw CryptoError(openSSL: "BIO_new_mem_buf failed")
        }
        defer { BIO_free(bio) }
        return try body(bio)
    }
}

/// PEM password callback that refuses: without it OpenSSL would prompt on the terminal
/// for an encrypted key. Encrypted PEMs are therefore rejected with an error.
let refusePassword: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
    _, _, _, _ in 0
}

// MARK: - OSSL_PARAM construction

/// Builds an OSSL_PARAM array. OSSL_PARAM_BLD keeps *pointers* to keys and values until
/// `OSSL_PARAM_BLD_to_param`, and the built array keeps pointers to the keys, so this object
/// owns copies of all of them for as long as the array is in use (`withParams`).
final class ParamBuilder {
    private let builder: OpaquePointer
    private var owned: [UnsafeMutableRawPointer] = []
    private var bignums: [OpaquePointer] = []

    init() throws {
        guard let builder = OSSL_PARAM_BLD_new() else { throw CryptoError(openSSL: "OSSL_PARAM_BLD_new failed") }
        self.builder = builder
    }

    deinit {
        OSSL_PARAM_BLD_free(builder)
        for bignum in bignums { BN_free(bignum) }
        for pointer in owned { free(pointer) }
    }

    private func keep(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        owned.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    func add(_ key: String, utf8 value: String) throws {
        let copy = keep(value)
        guard OSSL_PARAM_BLD_push_utf8_string(builder, keep(key), copy, 0) == 1 else {
            throw CryptoError(openSSL: "cannot set parameter \(key)")
        }
    }

    func add(_ key: String, octets value: Data) throws {
        let copy = malloc(max(value.count, 1))!
        owned.append(copy)
        value.withNonNullBytes { base, count in copy.copyMemory(from: base, byteCount: count) }
        guard OSSL_PARAM_BLD_push_octet_string(builder, keep(key), copy, value.count) == 1 else {
            throw CryptoError(openSSL: "cannot set parameter \(key)")
        }
    }

    /// An unsigned big-endian integer (JWK and SEC1 encode key numbers this way).
    func add(_ key: String, bigEndian value: Data) throws {
        guard let bn = value.withNonNullBytes({ BN_bin2bn($0, Int32($1), nil) }) else {
            throw CryptoError(openSSL: "BN_bin2bn failed")
        }
        bignums.append(bn)
        guard OSSL_PARAM_BLD_push_BN(builder, keep(key), bn) == 1 else {
            throw CryptoError(openSSL: "cannot set parameter \(key)")
        }
    }

    func withParams<R>(_ body: (UnsafeMutablePointer<OSSL_PARAM>) throws -> R) throws -> R {
        guard let params = OSSL_PARAM_BLD_to_param(builder) else {
            throw CryptoError(openSSL: "OSSL_PARAM_BLD_to_param failed")
        }
        defer { OSSL_PARAM_free(params) }
        return try body(params)
    }
}
