import Foundation

/// ISO 4217 currency codes. Apple Pay's decrypted payment data and Bahn's API both carry the NUMERIC code
/// as a 3-digit string ("704"), while people think in alphabetic codes ("VND"), so options accept either.
public enum CurrencyCode {
    /// Alphabetic → numeric, for the currencies the sandboxes this tool drives are likely to see.
    /// A small table on purpose: any other currency can still be given by its numeric code.
    public static let numericByAlphabetic: [String: String] = [
        "AUD": "036", "CAD": "124", "CHF": "756", "DKK": "208", "EUR": "978", "GBP": "826", "HKD": "344",
        "JPY": "392", "NOK": "578", "NZD": "554", "SEK": "752", "SGD": "702", "USD": "840", "VND": "704",
    ]

    /// The 3-digit numeric code for `code`, given as a numeric code (kept as is) or a known alphabetic one.
    public static func numeric(_ code: String) throws(Diagnostic) -> String {
        let trimmed = code.trimmingCharacters(in: .whitespaces)
        let allDigits = trimmed.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        if trimmed.count == 3, allDigits { return trimmed }
        if let numeric = numericByAlphabetic[trimmed.uppercased()] { return numeric }
        let known = numericByAlphabetic.keys.sorted().joined(separator: ", ")
        throw .usage("unknown currency '\(code)'",
                     hint: "give an ISO 4217 numeric code such as 704 (VND), or one of: \(known)")
    }

    /// ISO 4217's minor-unit digits of the currencies the table knows (the yen and the dong have none).
    public static func minorDigits(numeric: String) -> Int? {
        guard numericByAlphabetic.values.contains(numeric) else { return nil }
        return ["392", "704"].contains(numeric) ? 0 : 2
    }

    /// The alphabetic code for a numeric one, when the table knows it (for summaries only).
    public static func alphabetic(forNumeric numeric: String) -> String? {
        numericByAlphabetic.first { $0.value == numeric }?.key
    }
}

/// Amounts are positive integers in the currency's minor units (VND has none: 8000 is 8,000 ₫).
public enum MinorUnits {
    /// From 1 to just under 10^12 minor units: far beyond any sandbox payment, and every one of them exact as a JSON
    /// number (a double holds integers exactly only up to 2^53, so 9000000000000000.0 would not survive the wire).
    public static let range = 1...999_999_999_999

    /// The amount in a flag (`"8000"`) or a flow argument (`8000`, or a rendered template `"8000"`): digits only,
    /// no sign, within `range` — or, when the currency is known, the decimal form read exactly (`"25.00"` is 2500 in a
    /// currency with cents; a fraction the currency has no digits for is refused). The message repeats the value.
    public static func parse(_ value: JSON?, name: String = "amount", currency: String? = nil) throws(Diagnostic) -> Int {
        if let amount = amount(value) { return amount }
        let numeric = currency.flatMap { try? CurrencyCode.numeric($0) }
        if case .string(let text)? = value, text.contains("."), let numeric {
            guard let digits = CurrencyCode.minorDigits(numeric: numeric) else {
                throw .usage("\(name) '\(text)' is a decimal, and how many decimals currency \(numeric) has is not known here",
                             hint: "give it in minor units (digits only)")
            }
            if let minor = DecimalAmount.exactMinorUnits(text, decimals: digits, extraZeros: true), range.contains(minor) { return minor }
            throw .usage("\(name) '\(text)' does not fit currency \(CurrencyCode.alphabetic(forNumeric: numeric) ?? numeric), which has \(digits == 0 ? "no decimals" : "\(digits) decimals")",
                         hint: digits == 0 ? "give a whole number, e.g. 8000" : "give at most \(digits) decimals, e.g. 25.00 (or 2500 in minor units)")
        }
        throw .usage("\(name) must be a whole number of minor units from 1 to \(range.upperBound) (e.g. 8000), or a decimal such as 25.00, got \(value.map { "'\($0.interpolationText)'" } ?? "nothing")",
                     hint: "minor units: 1999 for 19.99 in a currency with cents, 8000 for 8,000 ₫")
    }

    /// The amount, or nil when `value` is not one.
    static func amount(_ value: JSON?) -> Int? {
        let amount: Int?
        switch value {
        case .number(let n)?: amount = n.rounded() == n && abs(n) <= Double(range.upperBound) ? Int(n) : nil
        case .string(let s)?:
            amount = !s.isEmpty && s.utf8.count <= 12 && s.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) ? Int(s) : nil
        default: amount = nil
        }
        return amount.flatMap { range.contains($0) ? $0 : nil }
    }
}
