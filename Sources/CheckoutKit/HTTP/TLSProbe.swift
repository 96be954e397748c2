import CCurl
import Foundation

/// What `doctor` tells of an HTTPS endpoint's certificate: whether it verifies (chain and host name, as every request
/// the driver sends checks them) and how long it has left. libcurl does the handshake — connect only, nothing is sent —
/// once verifying, and, when that fails, once more without verifying, to read the certificate it refused.
public enum TLSProbe {
    public struct Report: Sendable {
        /// Nil when the certificate verifies; else libcurl's reason ("SSL certificate problem: self-signed
        /// certificate").
        public var problem: String?
        /// The end of the leaf certificate's validity (`notAfter`).
        public var expires: Date?
    }

    /// The report, or why no TLS handshake took place (the host does not answer, it does not speak TLS).
    public static func check(_ url: String, timeout: Double, options: NetworkOptions) -> Result<Report, TransportError>
    {
        _ = CurlGlobal.initialized
        switch handshake(url, verifying: true, timeout: timeout, options: options) {
        case .success(let expires): return .success(Report(problem: nil, expires: expires))
        case .failure(let refused):
            guard refused.isCertificateProblem else { return .failure(refused.error) }
            switch handshake(url, verifying: false, timeout: timeout, options: options) {
            case .success(let expires): return .success(Report(problem: refused.reason, expires: expires))
            case .failure(let other): return .failure(other.error)
            }
        }
    }

    private struct Refusal: Error {
        var error: TransportError
        var isCertificateProblem: Bool
        /// libcurl's words alone.
        var reason: String {
            switch error {
            case .unreachable(let text), .timedOut(let text): text
            default: error.description
            }
        }
    }

    private static func handshake(
        _ url: String, verifying: Bool, timeout: Double, options: NetworkOptions
    ) -> Result<Date?, Refusal> {
        guard let h = curl_easy_init() else {
            return .failure(Refusal(error: .unreachable("libcurl could not start"), isCertificateProblem: false))
        }
        defer { curl_easy_cleanup(h) }
        var errors = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let code: CURLcode = errors.withUnsafeMutableBufferPointer { buffer in
            ccurl_setopt_string(h, CURLOPT_URL, url)
            options.apply(to: h, url: url)
            ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1)
            ccurl_setopt_long(h, CURLOPT_CONNECT_ONLY, 1)
            ccurl_setopt_long(h, CURLOPT_CERTINFO, 1)
            ccurl_setopt_long(h, CURLOPT_SSL_VERIFYPEER, verifying ? 1 : 0)
            ccurl_setopt_long(h, CURLOPT_SSL_VERIFYHOST, verifying ? 2 : 0)
            ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, max(1, Int(timeout * 1000)))
            ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(timeout * 1000)))
            ccurl_setopt_pointer(h, CURLOPT_ERRORBUFFER, buffer.baseAddress)
            return curl_easy_perform(h)
        }
        guard code == CURLE_OK else {
            let detail = String(decoding: errors.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            let certificate = [CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM]
                .contains(code)
            let error: TransportError = code == CURLE_OPERATION_TIMEDOUT ? .timedOut(text) : .unreachable(text)
            return .failure(Refusal(error: error, isCertificateProblem: certificate))
        }
        var info: UnsafeMutablePointer<curl_certinfo>?
        guard ccurl_getinfo_certinfo(h, &info) == CURLE_OK, let certificates = info?.pointee,
            certificates.num_of_certs > 0,
            var field = certificates.certinfo[0]
        else { return .success(nil) }
        // The leaf's fields, one "Name:value" string each; "Expire date:Nov 10 12:00:00 2027 GMT" is notAfter.
        while true {
            let text = String(cString: field.pointee.data)
            if text.hasPrefix("Expire date:") {
                return .success(Timestamp.openSSLDate(String(text.dropFirst("Expire date:".count))))
            }
            guard let next = field.pointee.next else { break }
            field = next
        }
        return .success(nil)
    }

    /// libcurl's own version line ("libcurl/7.88.1 OpenSSL/3.0.15 zlib/1.2.13 …").
    public static var curlVersion: String { String(cString: curl_version()) }
}
