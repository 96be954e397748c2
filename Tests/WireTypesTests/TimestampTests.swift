import Foundation
import Testing
import WireTypes

/// RFC 3339 times by integer arithmetic, checked against Foundation's own ISO 8601 style as an independent oracle.
@Suite struct TimestampTests {
    /// Whole milliseconds from 1601 to 2400, built from integers so that no rounding rule is in question.
    static let samples: [Date] = {
        var generator = SystemRandomNumberGenerator()
        let fixed: [Int64] = [
            0, -1, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, -11_644_473_600_000, 13_569_465_599_999,
        ]
        return
            (fixed
            + (0..<2000).map { _ in Int64.random(in: -11_644_473_600_000...13_569_465_599_999, using: &generator) })
            .map { ms in Date(timeIntervalSince1970: Double(ms / 1000) + Double(ms % 1000) / 1000) }
    }()

    @Test func writesWhatFoundationWrites() {
        for sample in Self.samples {
            // 0.4 ms past a whole millisecond, so that Foundation's cutting and our rounding agree.
            let date = sample.addingTimeInterval(0.0004)
            #expect(
                Timestamp.iso8601(date) == date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
                "\(date.timeIntervalSince1970)")
            let whole = Date(timeIntervalSince1970: sample.timeIntervalSince1970.rounded(.down))
            #expect(
                Timestamp.iso8601(whole, fractionDigits: 0) == whole.formatted(Date.ISO8601FormatStyle()),
                "\(whole.timeIntervalSince1970)")
        }
    }

    @Test func readsWhatItWritesExactly() {
        for date in Self.samples {
            #expect(Timestamp.parse(Timestamp.iso8601(date)) == date, "\(Timestamp.iso8601(date))")
            let text = date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            let theirs = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text)
            // Foundation counts from 2001, so its Double can differ from ours in the last bits (an ulp is ~1 µs in
            // 1700).
            #expect(theirs.map { abs(Timestamp.parse(text)?.timeIntervalSince($0) ?? 1) < 1e-5 } == true, "\(text)")
        }
    }

    @Test func writesTheDigitsAskedForRoundedToTheLast() {
        let date = Date(timeIntervalSince1970: 1_764_603_000.5)  // 2025-12-01T15:30:00.5Z
        #expect(Timestamp.iso8601(date, fractionDigits: 9) == "2025-12-01T15:30:00.500000000Z")
        #expect(Timestamp.iso8601(date, fractionDigits: 1) == "2025-12-01T15:30:00.5Z")
        #expect(Timestamp.iso8601(date.addingTimeInterval(0.4996), fractionDigits: 3) == "2025-12-01T15:30:01.000Z")
        #expect(Timestamp.iso8601(Date(timeIntervalSince1970: -0.25), fractionDigits: 2) == "1969-12-31T23:59:59.75Z")
        #expect(
            Timestamp.iso8601(Date(timeIntervalSince1970: -62_135_596_800), fractionDigits: 0) == "0001-01-01T00:00:00Z"
        )
    }

    @Test func readsOffsetsFractionsAndBothCases() throws {
        let plain = try #require(Timestamp.parse("2026-12-01T15:30:00Z"))
        #expect(plain.timeIntervalSince1970 == 1_796_139_000)
        let nanos = try #require(Timestamp.parse("2026-12-01T15:30:00.123456789Z"))
        #expect(abs(nanos.timeIntervalSince(plain) - 0.123456789) < 1e-6)
        #expect(Timestamp.parse("2026-12-01T15:30:00.1234567891234Z") == nanos)  // digits past the ninth are cut
        #expect(Timestamp.parse("2026-12-01T17:30:00.5+02:00") == plain.addingTimeInterval(0.5))
        #expect(Timestamp.parse("2026-12-01T10:00:00-0530") == plain)
        #expect(Timestamp.parse("2026-12-01t15:30:00z") == plain)
        #expect(Timestamp.parse(" 2026-12-01T15:30:00Z ") == plain)
        #expect(Timestamp.parse("2024-02-29T00:00:00Z") != nil)
        #expect(Timestamp.parse("2000-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: [
        "yesterday", "", "2026-12-01T15:30:00.Z", "2026-12-01T15:30:00", "2026-12-01 15:30:00Z",
        "2026-13-01T15:30:00Z", "2026-00-01T15:30:00Z", "2026-04-31T15:30:00Z", "2100-02-29T00:00:00Z",
        "2025-02-29T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T15:60:00Z", "2026-12-01T15:30:60Z",
        "2026-12-01T15:30:00+2:00", "2026-12-01T15:30:00+24:00", "2026-12-01T15:30:00+02:60",
        "2026-12-01T15:30:00Zjunk", "26-12-01T15:30:00Z", "2026-1-01T15:30:00Z", "2026-12-01T15:30:00.5",
    ])
    func refusesAnythingElse(text: String) {
        #expect(Timestamp.parse(text) == nil, "\(text)")
    }

    /// Foundation's formatter with a fixed English, UTC format: the oracle for the HTTP and OpenSSL forms.
    static func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        return formatter
    }

    @Test func readsHTTPDatesAsFoundationWritesThem() {
        let imf = Self.formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
        let openSSL = Self.formatter("MMM d HH:mm:ss yyyy 'GMT'")
        let dayAndMonth = Self.formatter("EEE MMM")
        let timeAndYear = Self.formatter("HH:mm:ss yyyy")
        for sample in Self.samples where sample.timeIntervalSince1970 > -2_208_988_800 {  // from 1900: four-digit years
            let whole = Date(timeIntervalSince1970: sample.timeIntervalSince1970.rounded(.down))
            #expect(Timestamp.httpDate(imf.string(from: whole)) == whole, "\(imf.string(from: whole))")
            // asctime pads a day below 10 with a space ("Nov  6"), which no Foundation format writes.
            let day = Timestamp.utcDate(whole).day
            let asctime =
                "\(dayAndMonth.string(from: whole)) \(day < 10 ? " " : "")\(day) \(timeAndYear.string(from: whole))"
            #expect(Timestamp.httpDate(asctime) == whole, "\(asctime)")
            #expect(Timestamp.openSSLDate(openSSL.string(from: whole)) == whole, "\(openSSL.string(from: whole))")
        }
    }

    /// The `Date` header the emulator writes: Foundation's spelling of the same second, and read back as that second.
    @Test func writesIMFFixdatesAsFoundationDoes() {
        let imf = Self.formatter("EEE, dd MMM yyyy HH:mm:ss 'GMT'")
        #expect(Timestamp.imfFixdate(secondsSince1970: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        for sample in Self.samples {
            let second = Int64(sample.timeIntervalSince1970.rounded(.down))
            let whole = Date(timeIntervalSince1970: Double(second))
            #expect(Timestamp.imfFixdate(secondsSince1970: second) == imf.string(from: whole), "\(second)")
            #expect(Timestamp.httpDate(Timestamp.imfFixdate(secondsSince1970: second)) == whole)
        }
    }

    @Test func readsTheThreeFormsOfRFC9110sExample() throws {
        let example = Date(timeIntervalSince1970: 784_111_777)
        #expect(Timestamp.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(Timestamp.httpDate("Sunday, 06-Nov-94 08:49:37 GMT", now: example) == example)
        #expect(Timestamp.httpDate("Sun Nov  6 08:49:37 1994") == example)
        #expect(Timestamp.openSSLDate("Nov  6 08:49:37 1994 GMT") == example)
        #expect(Timestamp.openSSLDate("Nov 6 08:49:37 1994 GMT") == example)
        // RFC 850's two-digit year: the latest year not more than 50 years after now.
        let now = try #require(Timestamp.parse("2026-12-06T00:00:00Z"))
        #expect(Timestamp.httpDate("Sunday, 01-Nov-76 00:00:00 GMT", now: now).map(Timestamp.utcDate)?.year == 2076)
        #expect(Timestamp.httpDate("Sunday, 01-Nov-77 00:00:00 GMT", now: now).map(Timestamp.utcDate)?.year == 1977)
        #expect(Timestamp.httpDate("Sunday, 01-Nov-26 00:00:00 GMT", now: now).map(Timestamp.utcDate)?.year == 2026)
    }

    @Test(arguments: [
        "", "soon", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 31 Feb 1994 08:49:37 GMT",
        "Sun, 06 Noz 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
        "Sun, 6 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT junk", "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov  6 08:49:37 94", "Sun Nov  6 08:61:37 1994", "06 Nov 1994 08:49:37 GMT",
    ])
    func refusesAnyOtherHTTPDate(text: String) {
        #expect(Timestamp.httpDate(text) == nil, "\(text)")
    }
}
