import Foundation

/// Every URL the driver is given to talk to — base URLs from configuration, `--forward-to`, `--webhook-url` — is checked
/// where it enters: `http(s)://host…`, one line. Anything else (a `file://` URL, a bare host) would otherwise reach
/// libcurl, which would read a local file or fail with a message about something else.
public enum HTTPURL {
    /// Nil when `text` is an absolute URL with one of `schemes` and a host; else what is wrong, for a message.
    public static func problem(_ text: String, schemes: Set<String> = ["http", "https"]) -> String? {
        let allowed = schemes.sorted().map { "\($0)://" }.joined(separator: " or ")
        if let problem = HeaderSafety.problem(text) { return problem }
        guard !text.contains(" "), let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return "is not a URL: give \(allowed)host…"
        }
        guard schemes.contains(scheme) else { return "is a \(scheme):// URL; only \(allowed) URLs are used" }
        guard let host = components.host, !host.isEmpty else { return "has no host: give \(allowed)host…" }
        return nil
    }

    /// A configured base URL without its trailing slashes, so that `base + "/path"` has exactly one between them.
    public static func base(_ url: String) -> String { String(url.reversed().drop { $0 == "/" }.reversed()) }
}
