extension DecimalAmount {
    /// The minor units of an amount the driver sends: `exactMinorUnits`, and within `MinorUnits.range` — or zero,
    /// when `allowingZero` (an amount read back, such as what is left to capture).
    public static func minorUnits(_ text: String, decimals: Int = 2, allowingZero: Bool = false) -> Int? {
        guard let value = exactMinorUnits(text, decimals: decimals) else { return nil }
        return MinorUnits.range.contains(value) || (allowingZero && value == 0) ? value : nil
    }

    /// The amount of a flag or flow argument, or exit 64 naming what was wrong and what is expected.
    public static func parse(_ value: JSON?, name: String = "amount") throws(Diagnostic) -> Int {
        if let text = value?.stringValue, let minor = minorUnits(text) { return minor }
        throw .usage("\(name) must be a decimal amount with at most 2 decimals, from 0.01 to \(text(MinorUnits.range.upperBound)) (e.g. 19.99), got \(value.map { "'\($0.interpolationText)'" } ?? "nothing")",
                     hint: "a string such as \"19.99\", \"0.07\" or \"1000000.00\": no sign, no currency symbol")
    }
}
