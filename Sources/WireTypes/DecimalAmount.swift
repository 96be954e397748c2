/// Money written as a decimal string ("19.99", as Afterpay and Braintree send and take it) and the integer minor units
/// it stands for (1999), converted digit by digit: never through a binary floating-point value, whose round trip can
/// turn 0.07 into 6 cents or lose the last cent of a large amount. The one reader and writer of decimal money, for the
/// driver and the emulator alike.
public enum DecimalAmount {
    /// The minor units of `text`: digits (at most 12), optionally a point and between `minimumDecimals` and `decimals`
    /// digits ("10", "10.5", "10.50" with 2). With `extraZeros`, more fraction digits are allowed when they are zeros
    /// ("25.500" is 2550). Nil for anything else: a sign, an exponent, spaces, a lone point, a fraction that does not
    /// fit. Zero is an amount here; callers that need a positive one say so.
    public static func exactMinorUnits(
        _ text: String, decimals: Int = 2, minimumDecimals: Int = 0, extraZeros: Bool = false
    ) -> Int? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0]
        var fraction = parts.count == 2 ? parts[1] : ""
        guard !whole.isEmpty, whole.utf8.count <= 12, parts.count == 1 || !fraction.isEmpty,
            (Array(whole.utf8) + Array(fraction.utf8)).allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
            })
        else { return nil }
        if extraZeros && fraction.utf8.count > decimals {
            guard fraction.dropFirst(decimals).allSatisfy({ $0 == "0" }) else { return nil }
            fraction = fraction.prefix(decimals)
        }
        guard fraction.utf8.count >= minimumDecimals, fraction.utf8.count <= decimals else { return nil }
        var value = 0
        for digit in whole.utf8 { value = value * 10 + Int(digit - UInt8(ascii: "0")) }
        let padded = Array(fraction.utf8) + Array(repeating: UInt8(ascii: "0"), count: decimals - fraction.utf8.count)
        for digit in padded {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            value = shifted + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// `minorUnits` as the decimal string with exactly `decimals` digits after the point: 1999 → "19.99", 7 → "0.07".
    public static func text(_ minorUnits: Int, decimals: Int = 2) -> String {
        guard decimals > 0 else { return String(minorUnits) }
        var divisor = 1
        for _ in 0..<decimals { divisor *= 10 }
        let fraction = String(minorUnits % divisor)
        return "\(minorUnits / divisor)." + String(repeating: "0", count: decimals - fraction.count) + fraction
    }
}
