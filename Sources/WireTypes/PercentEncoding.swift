/// Percent-encoding (RFC 3986 §2.1) on bytes: the one place the project spells a value for a URL or a form — a path
/// segment of the REST providers' URLs, a form body, and the spellings of a secret the redactor must recognise as
/// Foundation's `addingPercentEncoding` would write them (upper-case hex, UTF-8 bytes).
public enum PercentEncoding {
    /// RFC 3986's unreserved characters: what every percent-encoding keeps.
    public static let unreserved = ByteSet(isUnreserved)

    /// What a path segment keeps, so that an id with a slash, a space or a "?" stays one segment: Foundation's
    /// `urlPathAllowed` without "/" — RFC 3986's `pchar` without ";", which older servers take for a parameter.
    public static let pathSegment = ByteSet {
        isUnreserved($0) || (isSubDelimiter($0) && $0 != UInt8(ascii: ";")) || $0 == UInt8(ascii: ":")
            || $0 == UInt8(ascii: "@")
    }

    /// What a URL's query keeps (Foundation's `urlQueryAllowed`): the unreserved characters, the sub-delimiters, `:`,
    /// `@`, `/` and `?`.
    public static let query = ByteSet {
        isUnreserved($0) || isSubDelimiter($0)
            || [UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?")].contains($0)
    }

    /// `bytes` with every byte `keeps` lacks written `%XX`.
    public static func encoded(_ bytes: [UInt8], keeping keeps: ByteSet) -> [UInt8] {
        // Sized once for the worst case: appending byte by byte cost more than deciding each byte.
        [UInt8](unsafeUninitializedCapacity: max(1, bytes.count * 3)) { buffer, count in
            var at = 0
            for byte in bytes {
                if keeps.contains(byte) {
                    buffer[at] = byte
                    at += 1
                } else {
                    (buffer[at], buffer[at + 1], buffer[at + 2]) = (
                        UInt8(ascii: "%"), hexDigit(byte >> 4), hexDigit(byte & 0x0F)
                    )
                    at += 3
                }
            }
            count = at
        }
    }

    public static func encoded(_ text: String, keeping keeps: ByteSet) -> String {
        String(decoding: encoded(Array(text.utf8), keeping: keeps), as: UTF8.self)
    }

    /// `text` as one segment of a URL's path.
    public static func pathSegment(_ text: String) -> String { encoded(text, keeping: pathSegment) }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// RFC 3986's sub-delims: `!$&'()*+,;=`.
    private static func isSubDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        default: false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }
}
