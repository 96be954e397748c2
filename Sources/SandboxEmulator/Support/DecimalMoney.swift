import Foundation

/// Money as the providers write it on the wire: a decimal string of major units ("19.99"), read digit by digit into
/// integer cents, so that no amount ever passes through a Double. Afterpay and Braintree share this one copy.
enum DecimalMoney {
    /// Cents for `text`, or nil when it is not a plain non-negative decimal with `0...maxDecimals` fraction digits
    /// (and exactly `minDecimals` or more).
    static func cents(_ text: String, minDecimals: Int = 2, maxDecimals: Int = 2) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0], fraction = parts.count > 1 ? parts[1] : ""
        guard !whole.isEmpty, whole.count <= 12, (minDecimals...maxDecimals).contains(fraction.count),
              parts.count == 1 || !fraction.isEmpty,
              (whole + fraction).allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var cents = 0
        for digit in whole { cents = cents * 10 + Int(digit.asciiValue! - 48) }
        let padded = fraction + String(repeating: "0", count: 2 - fraction.count)
        for digit in padded { cents = cents * 10 + Int(digit.asciiValue! - 48) }
        return cents
    }

    /// "50.00" for 5000.
    static func format(_ cents: Int) -> String {
        "\(cents / 100)." + (cents % 100 < 10 ? "0" : "") + "\(cents % 100)"
    }
}
