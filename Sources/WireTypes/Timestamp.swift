import Foundation

public enum Timestamp {
    /// RFC 3339 with milliseconds, UTC: the form HAR, JUnit and JSON reports use.
    public static func iso8601(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}

extension Timestamp {
    /// An RFC 3339 / ISO 8601 time as services write it: `Z` or an offset, and a fraction of any length (Afterpay
    /// sends nanoseconds, which Foundation's parser refuses): the fraction is cut to milliseconds first.
    public static func parse(_ text: String) -> Date? {
        var t = Substring(text.trimmingCharacters(in: .whitespaces))
        if let dot = t.firstIndex(of: ".") {
            let digits = t[t.index(after: dot)...].prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            let zone = t[digits.endIndex...]
            t = t[..<dot] + "." + digits.prefix(3).padding(toLength: 3, withPad: "0", startingAt: 0) + zone
            return try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(String(t))
        }
        return try? Date.ISO8601FormatStyle().parse(String(t))
    }
}
