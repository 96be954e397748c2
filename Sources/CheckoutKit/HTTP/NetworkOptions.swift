import CCurl
import Foundation

/// Where a request goes on its way out: through which proxy, and trusting which certificates (docs/configuration.md,
/// "Proxies and certificates"). Decided here, once per request, and set on the transfer explicitly — libcurl's own
/// reading of the environment is switched off — so that what `doctor` shows is what the transport does.
public struct NetworkOptions: Sendable {
    public var proxies: ProxySettings
    /// `--cacert FILE` / `CHECKOUT_DRIVER_CACERT`: a PEM bundle trusted instead of the system's, as curl's `--cacert`
    /// replaces it — for a service's and a proxy's certificates alike.
    public var caBundle: String?

    public init(proxies: ProxySettings, caBundle: String? = nil) {
        self.proxies = proxies
        self.caBundle = caBundle
    }

    /// No proxy, the system's certificates: the emulator on loopback, whatever the environment says.
    public static let direct = NetworkOptions(proxies: .none)

    /// The configuration's: under `--env local` nothing is proxied (the emulator is on this machine), any other
    /// environment follows the proxy variables as curl does.
    public init(configuration: Configuration, environment: [String: String] = ProcessInfo.processInfo.environment) {
        proxies = configuration.kind == .local ? .none : ProxySettings(environment: environment)
        caBundle = configuration.value(Self.caBundleVariable)
    }

    /// The configuration variable (and `--cacert`'s) that names the CA bundle.
    public static let caBundleVariable = "CHECKOUT_DRIVER_CACERT"

    /// Sets the proxy (or none) and the trusted certificates on a transfer of `url`; answers the proxy used.
    @discardableResult
    func apply(to h: UnsafeMutableRawPointer, url: String) -> String? {
        let proxy = proxies.proxy(for: url)
        // An empty string is libcurl's "no proxy", and it then reads none of the environment's variables.
        ccurl_setopt_string(h, CURLOPT_PROXY, proxy ?? "")
        if let caBundle {
            ccurl_setopt_string(h, CURLOPT_CAINFO, caBundle)
            ccurl_setopt_string(h, CURLOPT_PROXY_CAINFO, caBundle)
        }
        return proxy
    }
}

/// The proxy variables, read as curl reads them: `https_proxy` (or `HTTPS_PROXY`) for https URLs, `http_proxy` —
/// lower case only, as curl does, since a CGI program gets any request header `Proxy:` as `HTTP_PROXY` — for http
/// ones, `all_proxy` (or `ALL_PROXY`) for either when that one is unset; `no_proxy` (or `NO_PROXY`) lists the hosts
/// that go direct. Loopback URLs are proxied like any other unless `no_proxy` names them, as curl proxies them.
public struct ProxySettings: Sendable, Equatable {
    public var https: String?
    public var http: String?
    public var all: String?
    /// `no_proxy`'s entries, lower-cased, leading dots dropped; `*` alone means every host.
    public var exempt: [String]

    public static let none = ProxySettings(https: nil, http: nil, all: nil, exempt: [])

    public init(https: String?, http: String?, all: String?, exempt: [String]) {
        self.https = https
        self.http = http
        self.all = all
        self.exempt = exempt
    }

    public init(environment: [String: String]) {
        func first(_ names: String...) -> String? {
            names.lazy.compactMap { environment[$0] }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }
        https = first("https_proxy", "HTTPS_PROXY")
        http = first("http_proxy")
        all = first("all_proxy", "ALL_PROXY")
        exempt = (first("no_proxy", "NO_PROXY") ?? "").split(separator: ",").map {
            var entry = $0.trimmingCharacters(in: .whitespaces).lowercased()
            while entry.hasPrefix(".") { entry.removeFirst() }
            return entry
        }.filter { !$0.isEmpty }
    }

    /// A proxy variable's URL read as curl reads it: `http://` when it names no scheme (`user:pass@proxy:3128`).
    static func components(_ proxy: String) -> URLComponents? {
        URLComponents(string: proxy.contains("://") ? proxy : "http://" + proxy)
    }

    /// A proxy URL as messages show it: a password in it replaced (the user name stays, to say whose).
    public static func masked(_ proxy: String) -> String {
        guard let parts = components(proxy), let password = parts.percentEncodedPassword else { return proxy }
        return proxy.replacingOccurrences(of: ":" + password + "@", with: ":***@")
    }

    /// Every password the proxy variables hold, for the redactor: as written, and decoded.
    public var passwords: [String] {
        [https, http, all].compactMap { $0.flatMap(Self.components) }.flatMap {
            [$0.percentEncodedPassword, $0.password].compactMap { $0 }
        }
    }

    /// The proxy a request to `url` goes through, nil for none.
    public func proxy(for url: String) -> String? {
        // No variable set (and always under --env local): no URL to read, on every request of a batch.
        guard https != nil || http != nil || all != nil else { return nil }
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            let host = parts.host?.lowercased()
        else { return nil }
        let chosen: String?
        switch scheme {
        case "https": chosen = https ?? all
        case "http": chosen = http ?? all
        default: chosen = nil
        }
        guard let chosen, !isExempt(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) else { return nil }
        return chosen
    }

    /// Whether `no_proxy` names `host`: `*`; the host itself; a domain it is in (`example.com` covers
    /// `api.example.com`); or, for an IPv4 address, a CIDR block it is in (`10.0.0.0/8`).
    func isExempt(_ host: String) -> Bool {
        for entry in exempt {
            if entry == "*" || entry == host || host.hasSuffix("." + entry) { return true }
            if let (network, bits) = Self.cidr(entry), let address = Self.ipv4(host),
                bits == 0 || (address ^ network) >> (32 - bits) == 0
            {
                return true
            }
        }
        return false
    }

    private static func cidr(_ entry: String) -> (UInt32, UInt32)? {
        let parts = entry.split(separator: "/")
        guard parts.count == 2, let address = ipv4(String(parts[0])), let bits = UInt32(parts[1]), bits <= 32 else {
            return nil
        }
        return (address, bits)
    }

    private static func ipv4(_ text: String) -> UInt32? {
        let octets = text.split(separator: ".", omittingEmptySubsequences: false).compactMap { UInt8($0) }
        guard octets.count == 4, text.split(separator: ".").count == 4 else { return nil }
        return octets.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
