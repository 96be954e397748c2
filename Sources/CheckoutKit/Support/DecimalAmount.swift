/// Money written as a decimal string ("19.99", as Afterpay sends and takes it) and the integer minor units it stands
/// for (1999, as Cash App takes it), converted digit by digit: never through a binary floating-point value, whose
/// round trip can turn 0.07 into 6 cents or lose the last cent of a large amount.
public enum DecimalAmount {
    /// The minor units of `text`: digits, optionally a point and at most `decimals` digits ("10", "10.5", "10.50").
    /// Nil for anything else — a sign, an exponent, spaces, more decimals than the currency has, or an amount beyond
    /// `MinorUnits.range` — or zero, when `allowingZero` (an amount read back, such as what is left to capture).
    public static func minorUnits(_ text: String, decimals: Int = 2, allowingZero: Bool = false) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        let fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.utf8.count <= 12, fraction.utf8.count <= decimals, parts.count == 1 || !fraction.isEmpty,
              (Array(whole.utf8) + Array(fraction.utf8)).allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        var value = 0
        for digit in whole.utf8 { value = value * 10 + Int(digit - UInt8(ascii: "0")) }
        let padded = Array(fraction.utf8) + Array(repeating: UInt8(ascii: "0"), count: decimals - fraction.utf8.count)
        for digit in padded {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = shifted + Int(digit - UInt8(ascii: "0"))
        }
        return MinorUnits.range.contains(value) || (allowingZero && value == 0) ? value : nil
    }

    /// `minorUnits` as the decimal string with exactly `decimals` digits after the point: 1999 → "19.99", 7 → "0.07".
    public static func text(_ minorUnits: Int, decimals: Int = 2) -> String {
        guard decimals > 0 else { return String(minorUnits) }
        var divisor = 1
        for _ in 0..<decimals { divisor *= 10 }
        let fraction = String(minorUnits % divisor)
        return "\(minorUnits / divisor)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }

    /// The amount of a flag or flow argument, or exit 64 naming what was wrong and what is expected.
    public static func parse(_ value: JSON?, name: String = "amount") throws(Diagnostic) -> Int {
        if let text = value?.stringValue, let minor = minorUnits(text) { return minor }
        throw .usage("\(name) must be a decimal amount with at most 2 decimals, from 0.01 to \(text(MinorUnits.range.upperBound)) (e.g. 19.99), got \(value.map { "'\($0.interpolationText)'" } ?? "nothing")",
                     hint: "a string such as \"19.99\", \"0.07\" or \"1000000.00\": no sign, no currency symbol")
    }
}
