import Foundation

/// An ISO 4217 currency: its alphabetic code ("USD"), its numeric code ("840") and how many digits its minor unit has
/// (2 for cents, 0 for the yen, 3 for the Kuwaiti dinar's fils). Apple Pay's payment data and Bahn's API carry the
/// numeric code while people think in alphabetic ones, so every option and argument takes either.
public struct Currency: Sendable, Hashable {
    /// Nil for a numeric code the table does not know.
    public let alphabetic: String?
    public let numeric: String
    /// Digits after the decimal point; nil for a numeric code the table does not know (its amounts are then taken in
    /// minor units only).
    public let minorDigits: Int?

    public init(alphabetic: String?, numeric: String, minorDigits: Int?) {
        self.alphabetic = alphabetic
        self.numeric = numeric
        self.minorDigits = minorDigits
    }

    /// The alphabetic code when known, else the numeric one: what messages show.
    public var code: String { alphabetic ?? numeric }

    /// `code` given as a numeric code (any three digits, kept as they are) or an alphabetic one the table knows, in any
    /// case; anything else is a usage error listing what is known.
    public static func parse(_ code: String) throws(Diagnostic) -> Currency {
        let trimmed = code.trimmingSpaces()
        let allDigits = trimmed.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        if trimmed.utf8.count == 3, allDigits {
            return byNumeric[trimmed] ?? Currency(alphabetic: nil, numeric: trimmed, minorDigits: nil)
        }
        if let known = byAlphabetic[trimmed.uppercased()] { return known }
        throw .usage(
            "unknown currency '\(code)'",
            hint:
                "give an ISO 4217 code: alphabetic (\(table.map { $0.alphabetic! }.prefix(12).joined(separator: ", ")), …) or numeric such as 840"
        )
    }

    /// The currencies the table knows, from ISO 4217 (the list of codes and minor units, as published by its
    /// maintenance agency): the sandboxes this tool drives and the currencies whose minor unit is not two digits, so
    /// that a decimal amount is read right in each. Any other currency can still be given by its numeric code, with
    /// amounts in minor units.
    public static let table: [Currency] = [
        ("AED", "784", 2), ("ARS", "032", 2), ("AUD", "036", 2), ("BGN", "975", 2), ("BHD", "048", 3),
        ("BRL", "986", 2),
        ("CAD", "124", 2), ("CHF", "756", 2), ("CLP", "152", 0), ("CNY", "156", 2), ("COP", "170", 2),
        ("CZK", "203", 2),
        ("DKK", "208", 2), ("EGP", "818", 2), ("EUR", "978", 2), ("GBP", "826", 2), ("HKD", "344", 2),
        ("HUF", "348", 2),
        ("IDR", "360", 2), ("ILS", "376", 2), ("INR", "356", 2), ("IQD", "368", 3), ("ISK", "352", 0),
        ("JOD", "400", 3),
        ("JPY", "392", 0), ("KRW", "410", 0), ("KWD", "414", 3), ("LYD", "434", 3), ("MXN", "484", 2),
        ("MYR", "458", 2),
        ("NOK", "578", 2), ("NZD", "554", 2), ("OMR", "512", 3), ("PHP", "608", 2), ("PLN", "985", 2),
        ("PYG", "600", 0),
        ("QAR", "634", 2), ("RON", "946", 2), ("SAR", "682", 2), ("SEK", "752", 2), ("SGD", "702", 2),
        ("THB", "764", 2),
        ("TND", "788", 3), ("TRY", "949", 2), ("TWD", "901", 2), ("UAH", "980", 2), ("UGX", "800", 0),
        ("USD", "840", 2),
        ("VND", "704", 0), ("XAF", "950", 0), ("XOF", "952", 0), ("ZAR", "710", 2),
    ].map { Currency(alphabetic: $0.0, numeric: $0.1, minorDigits: $0.2) }

    /// The US dollar: Cash App Pay's one currency, and the default where a provider's is.
    public static let usd = byAlphabetic["USD"]!

    static let byAlphabetic = Dictionary(uniqueKeysWithValues: table.map { ($0.alphabetic!, $0) })
    static let byNumeric = Dictionary(uniqueKeysWithValues: table.map { ($0.numeric, $0) })

    /// The alphabetic code of a numeric one, when the table knows it (for summaries).
    public static func alphabetic(forNumeric numeric: String) -> String? { byNumeric[numeric]?.alphabetic }

    /// `minor` minor units as the decimal string APIs that take money as text want, with the currency's digits: 1234 →
    /// "12.34" in USD, "1234" in JPY, "1.234" in KWD (two digits when the currency's are not known).
    public func decimal(_ minor: Int) -> String { DecimalAmount.text(minor, decimals: minorDigits ?? 2) }

    /// The minor units of a decimal an API wrote ("50.00"): digits, a point and at most the currency's digits (two
    /// when not known); zero included. Nil for anything else. What a person writes is read by `Amount.minorUnits`.
    public func minorUnits(ofDecimal text: String) -> Int? {
        DecimalAmount.exactMinorUnits(text, decimals: minorDigits ?? 2).flatMap {
            $0 <= Amount.range.upperBound ? $0 : nil
        }
    }

    /// `minor` minor units as money a person reads: "12.34 USD", "8000 VND", "1200 minor units of 999" for a currency
    /// whose digits are not known.
    public func format(_ minor: Int) -> String {
        guard let digits = minorDigits else { return "\(minor) minor units of \(numeric)" }
        return "\(DecimalAmount.text(minor, decimals: digits)) \(code)"
    }
}
