import Foundation

public enum Timestamp {
    /// RFC 3339 with milliseconds, UTC: the form HAR, JUnit and JSON reports use.
    public static func iso8601(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(date)
    }
}
