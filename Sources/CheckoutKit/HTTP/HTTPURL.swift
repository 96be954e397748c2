import Foundation

/// Every URL the driver is given to talk to — base URLs from configuration, `--forward-to`, `--webhook-url` — is
/// checked where it enters: `http(s)://host…`, one line. Anything else (a `file://` URL, a bare host) would otherwise
/// reach libcurl, which would read a local file or fail with a message about something else.
public enum HTTPURL {
    /// Nil when `text` is an absolute URL with one of `schemes` and a host; else what is wrong, for a message.
    /// Read by RFC 3986's grammar here rather than by `URLComponents`, whose `host` runs the IDNA mapping through ICU
    /// and so maps megabytes of ICU code and data into every run that is given a URL.
    public static func problem(_ text: String, schemes: Set<String> = ["http", "https"]) -> String? {
        let allowed = schemes.sorted().map { "\($0)://" }.joined(separator: " or ")
        if let problem = HeaderSafety.problem(text) { return problem }
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), isScheme(bytes[..<colon]), isURLText(bytes) else {
            return "is not a URL: give \(allowed)host…"
        }
        let scheme = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard schemes.contains(scheme) else { return "is a \(scheme):// URL; only \(allowed) URLs are used" }
        let rest = bytes[(colon + 1)...]
        guard rest.starts(with: "//".utf8) else { return "has no host: give \(allowed)host…" }
        let authority = rest.dropFirst(2).prefix { !"/?#".utf8.contains($0) }
        let hostAndPort = authority.lastIndex(of: UInt8(ascii: "@")).map { authority[($0 + 1)...] } ?? authority
        let host =
            hostAndPort.first == UInt8(ascii: "[")
            ? hostAndPort.prefix { $0 != UInt8(ascii: "]") }.dropFirst()
            : hostAndPort.prefix { $0 != UInt8(ascii: ":") }
        guard !host.isEmpty else { return "has no host: give \(allowed)host…" }
        return nil
    }

    /// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`
    private static func isScheme(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard let first = bytes.first, isLetter(first) else { return false }
        return bytes.allSatisfy { isLetter($0) || (0x30...0x39).contains($0) || "+-.".utf8.contains($0) }
    }

    private static func isLetter(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte | 0x20) }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte | 0x20)
    }

    /// No ASCII that RFC 3986 leaves out of URLs (controls, space, double quote, angle and curly brackets, backslash,
    /// caret, backquote, bar), and every `%` begins a `%XX` escape. Bytes past ASCII pass: an international host or
    /// path is libcurl's to encode.
    private static func isURLText(_ bytes: [UInt8]) -> Bool {
        for (i, byte) in bytes.enumerated() where byte < 0x80 {
            if byte <= 0x20 || byte == 0x7F || "\"<>\\^`{|}".utf8.contains(byte) { return false }
            if byte == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, isHexDigit(bytes[i + 1]), isHexDigit(bytes[i + 2]) else { return false }
            }
        }
        return true
    }

    /// A configured base URL without its trailing slashes, so that `base + "/path"` has exactly one between them.
    /// (Read as bytes: reversing the string by characters cost more than the rest of making a client, every run.)
    public static func base(_ url: String) -> String {
        let bytes = url.utf8
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes[bytes.index(before: end)] == UInt8(ascii: "/") {
            end = bytes.index(before: end)
        }
        return end == bytes.endIndex ? url : String(url[..<end])
    }
}
