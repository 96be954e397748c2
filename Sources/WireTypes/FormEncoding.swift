import Foundation

/// `application/x-www-form-urlencoded`, as browsers write it (WHATWG URL, "application/x-www-form-urlencoded"):
/// the pairs a 3DS return page receives, and the ones the driver posts when it plays the shopper's browser.
public enum FormEncoding {
    /// Bytes that stay as they are (a space only until it becomes `+`): RFC 3986's unreserved ones but `~`, and `*`;
    /// every other byte is percent-encoded.
    private static let kept = ByteSet {
        (PercentEncoding.unreserved.contains($0) && $0 != UInt8(ascii: "~")) || $0 == UInt8(ascii: "*")
            || $0 == UInt8(ascii: " ")
    }

    public static func pair(_ name: String, _ value: String) -> String { encode(name) + "=" + encode(value) }

    public static func encode(_ text: String) -> String {
        String(
            decoding: PercentEncoding.encoded(Array(text.utf8), keeping: kept).map {
                $0 == UInt8(ascii: " ") ? UInt8(ascii: "+") : $0
            },
            as: UTF8.self)
    }

    /// The pairs of a body, decoded, in order; a pair without a name is skipped.
    public static func decode(_ body: Data) -> [(String, String)] {
        String(decoding: body, as: UTF8.self).split(separator: "&").compactMap { pair in
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ s: Substring) -> String {
                (String(s).replacingOccurrences(of: "+", with: " ")).removingPercentEncoding ?? String(s)
            }
            guard let key = kv.first, !key.isEmpty else { return nil }
            return (decode(key), kv.count > 1 ? decode(kv[1]) : "")
        }
    }
}
