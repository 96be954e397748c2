import Foundation

/// RFC 3339 times, written and read in one place for the driver and the emulator alike. Plain integer calendar
/// arithmetic (proleptic Gregorian, UTC) rather than Foundation's `ISO8601FormatStyle`: that one builds a `Calendar`,
/// which looks the current time zone up in ICU and so maps megabytes of ICU code and data into every run.
public enum Timestamp {
    /// RFC 3339 with milliseconds, UTC: the form HAR, JUnit and JSON reports use.
    public static func iso8601(_ date: Date) -> String { iso8601(date, fractionDigits: 3) }

    /// `2026-12-01T15:30:00Z` with `fractionDigits` (0 to 9) digits of fraction after the seconds, rounded to the
    /// nearest last digit.
    public static func iso8601(_ date: Date, fractionDigits: Int) -> String {
        precondition((0...9).contains(fractionDigits), "a fraction has 0 to 9 digits")
        let scale = powersOfTen[fractionDigits]
        let units = Int64((date.timeIntervalSince1970 * Double(scale)).rounded())
        let seconds = floorDivision(units, scale)
        let fraction = units - seconds * scale
        let days = floorDivision(seconds, 86_400)
        let ofDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(days: days)
        var text = fourDigits(year)
        text +=
            "-" + twoDigits(month) + "-" + twoDigits(day) + "T" + twoDigits(ofDay / 3600) + ":"
            + twoDigits(ofDay / 60 % 60) + ":" + twoDigits(ofDay % 60)
        if fractionDigits > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: fractionDigits - digits.count) + digits
        }
        return text + "Z"
    }

    /// An RFC 3339 time as services write it: `T` or `t`, `Z`, `z` or an offset (`+02:00`, or `+0200`), and a
    /// fraction of any length (Afterpay sends nanoseconds); digits past the ninth are cut. Nil for anything else,
    /// including a day the month does not have.
    public static func parse(_ text: String) -> Date? {
        var reader = Reader(bytes: Array(text.utf8).trimmingSpaces())
        guard let year = reader.number(4), reader.skip("-"), let month = reader.number(2), reader.skip("-"),
            let day = reader.number(2), reader.skip("T") || reader.skip("t"),
            let hour = reader.number(2), reader.skip(":"), let minute = reader.number(2), reader.skip(":"),
            let second = reader.number(2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var nanoseconds = 0
        if reader.skip(".") {
            var digits = 0
            while let digit = reader.digit() {
                if digits < 9 { nanoseconds = nanoseconds * 10 + digit }
                digits += 1
            }
            guard digits > 0 else { return nil }
            nanoseconds *= Int(powersOfTen[max(0, 9 - digits)])
        }
        var offset = 0  // seconds east of UTC
        if !reader.skip("Z") && !reader.skip("z") {
            guard let sign = reader.skip("+") ? 1 : reader.skip("-") ? -1 : nil, let hours = reader.number(2) else {
                return nil
            }
            _ = reader.skip(":")
            guard let minutes = reader.number(2), hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        }
        guard reader.atEnd else { return nil }
        let seconds =
            days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second - offset)
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`: RFC 9110's IMF-fixdate, the form an HTTP `Date` header is written in, for a
    /// whole second since 1970.
    public static func imfFixdate(secondsSince1970 seconds: Int64) -> String {
        let days = floorDivision(seconds, 86_400)
        let ofDay = Int(seconds - days * 86_400)
        let (year, month, day) = civil(days: days)
        let weekday = Int((days % 7 + 11) % 7)  // 1 January 1970 was a Thursday, day 4 of a week from Sunday
        return weekdayNames[weekday] + ", " + twoDigits(day) + " " + monthNames[month - 1] + " " + fourDigits(year)
            + " "
            + twoDigits(ofDay / 3600) + ":" + twoDigits(ofDay / 60 % 60) + ":" + twoDigits(ofDay % 60) + " GMT"
    }

    /// An HTTP date (RFC 9110 §5.6.7) in any of the three forms a recipient must accept: the IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`, whose two-digit
    /// year is the latest one not more than 50 years after `now`) and C's asctime form (`Sun Nov  6 08:49:37 1994`).
    /// The day's name is not checked against the date. Nil for anything else.
    public static func httpDate(_ text: String, now: Date = Date()) -> Date? {
        var reader = Reader(bytes: Array(text.utf8).trimmingSpaces())
        guard reader.letters() >= 3 else { return nil }
        guard reader.skip(",") else {
            guard reader.skip(" ") else { return nil }
            return calendarTime(&reader, zone: false)
        }
        guard reader.skip(" "), let day = reader.number(2) else { return nil }
        if reader.skip(" ") {
            guard let month = reader.month(), reader.skip(" "), let year = reader.number(4), reader.skip(" ") else {
                return nil
            }
            return clockTime(&reader, year: year, month: month, day: day)
        }
        guard reader.skip("-"), let month = reader.month(), reader.skip("-"), let twoDigits = reader.number(2),
            reader.skip(" ")
        else { return nil }
        let thisYear = utcDate(now).year
        var year = thisYear - thisYear % 100 + twoDigits
        if year > thisYear + 50 { year -= 100 }
        return clockTime(&reader, year: year, month: month, day: day)
    }

    /// A time as OpenSSL writes a certificate's dates (`Nov 10 12:00:00 2027 GMT`, a day below 10 padded with a space).
    public static func openSSLDate(_ text: String) -> Date? {
        var reader = Reader(bytes: Array(text.utf8).trimmingSpaces())
        return calendarTime(&reader, zone: true)
    }

    /// `Nov  6 08:49:37 1994` (the day padded with a space or not), then ` GMT` when `zone`, and the end.
    private static func calendarTime(_ reader: inout Reader, zone: Bool) -> Date? {
        guard let month = reader.month(), reader.skip(" ") else { return nil }
        _ = reader.skip(" ")
        guard let first = reader.digit() else { return nil }
        let day = reader.digit().map { first * 10 + $0 } ?? first
        guard reader.skip(" "), let hour = reader.number(2), reader.skip(":"), let minute = reader.number(2),
            reader.skip(":"), let second = reader.number(2), reader.skip(" "), let year = reader.number(4)
        else { return nil }
        guard !zone || (reader.skip(" ") && reader.skip("G") && reader.skip("M") && reader.skip("T")), reader.atEnd
        else { return nil }
        return moment(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// `08:49:37 GMT`, and the end.
    private static func clockTime(_ reader: inout Reader, year: Int, month: Int, day: Int) -> Date? {
        guard let hour = reader.number(2), reader.skip(":"), let minute = reader.number(2), reader.skip(":"),
            let second = reader.number(2), reader.skip(" "), reader.skip("G"), reader.skip("M"), reader.skip("T"),
            reader.atEnd
        else { return nil }
        return moment(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    /// A UTC time from its fields; nil for a day the month does not have or a time of day that does not exist (a leap
    /// second, 60, is the next minute's first).
    private static func moment(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Date? {
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        return Date(
            timeIntervalSince1970: Double(
                days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)))
    }

    /// The UTC calendar date `date` falls on.
    public static func utcDate(_ date: Date) -> (year: Int, month: Int, day: Int) {
        civil(days: floorDivision(Int64(date.timeIntervalSince1970.rounded(.down)), 86_400))
    }

    /// How many days `month` (1–12) of `year` has in the proleptic Gregorian calendar.
    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static let weekdayNames = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    fileprivate static let monthNames = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    private static let powersOfTen: [Int64] = (0...9).map { (0..<$0).reduce(1) { product, _ in product * 10 } }

    private static func twoDigits(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    /// A year as both forms write it: four digits at least (years before 1000 padded), and no sign.
    private static func fourDigits(_ year: Int) -> String {
        let text = "\(year)"
        return year < 1000 ? String(repeating: "0", count: 4 - text.count) + text : text
    }

    private static func floorDivision(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }

    // Days since 1970-01-01 to and from a date, in 400-year eras of 146,097 days with years that start on 1 March, so
    // that the leap day is the last of its year (H. Hinnant's published `days_from_civil` / `civil_from_days`).
    private static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = floorDivision(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = Int64((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = floorDivision(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        return (Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0), month, day)
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var at: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            at = bytes.startIndex
        }

        var atEnd: Bool { at == bytes.endIndex }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard at < bytes.endIndex, bytes[at] == UInt8(ascii: character) else { return false }
            at += 1
            return true
        }

        mutating func digit() -> Int? {
            guard at < bytes.endIndex, (0x30...0x39).contains(bytes[at]) else { return nil }
            defer { at += 1 }
            return Int(bytes[at] - 0x30)
        }

        /// Skips ASCII letters; how many.
        mutating func letters() -> Int {
            let start = at
            while at < bytes.endIndex, (0x41...0x5A).contains(bytes[at] & 0xDF) { at += 1 }
            return at - start
        }

        /// A month's English three-letter name, as HTTP and OpenSSL write it (`Jan`), as its number.
        mutating func month() -> Int? {
            guard at + 3 <= bytes.endIndex else { return nil }
            let name = String(decoding: bytes[at..<(at + 3)], as: UTF8.self)
            guard let index = Timestamp.monthNames.firstIndex(of: name) else { return nil }
            at += 3
            return index + 1
        }

        /// Exactly `count` digits.
        mutating func number(_ count: Int) -> Int? {
            var value = 0
            for _ in 0..<count {
                guard let d = digit() else { return nil }
                value = value * 10 + d
            }
            return value
        }
    }
}

extension Array where Element == UInt8 {
    fileprivate func trimmingSpaces() -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return []
        }
        return self[first...last]
    }
}
