/// The literal table of the one rule of amounts: value × currency → minor units, or the refusal's words. The rule's own
/// tests (`AmountTests`) and the end-to-end tests of every built-in flow's amount variable (`AmountVariableTests`) hold
/// the code to the same table.
public enum AmountTable {
    public enum Outcome: Equatable, Sendable, CustomStringConvertible {
        case minor(Int)
        case refused(String)
        public var description: String {
            switch self {
            case .minor(let m): "\(m)"
            case .refused(let p): "refused: \(p)"
            }
        }
    }

    public static let currencies = ["USD", "JPY", "KWD"]

    static let jpyDecimals = Outcome.refused("has 2 decimals, and JPY has none")
    static let sameEverywhere: [(String, Outcome)] = [
        ("0", .refused("is zero: an amount is at least 1 minor unit")), ("1e3", .refused("has an exponent")),
        ("-1", .refused("is negative")),
        ("+12", .refused("has a sign")),
        ("12,00", .refused("has a comma (the decimal separator is a point, and no thousands separator is taken)")),
        (" 12", .refused("has spaces")), ("١٢", .refused("has digits other than 0-9")),
        ("abc", .refused("is not a number")),
        ("12.", .refused("is not a number")), (".5", .refused("is not a number")), ("", .refused("is empty")),
        ("1.2.3", .refused("is not a number")), ("12..0", .refused("is not a number")),
        (".", .refused("is not a number")),
    ]

    /// Digits are minor units; a decimal point means the currency's major units (Bahn, Apple Pay tokens).
    public static let minorUnits: [(String, [String: Outcome])] =
        [
            ("12", ["USD": .minor(12), "JPY": .minor(12), "KWD": .minor(12)]),
            ("12.00", ["USD": .minor(1200), "JPY": .minor(12), "KWD": .minor(12000)]),
            ("12.30", ["USD": .minor(1230), "JPY": jpyDecimals, "KWD": .minor(12300)]),
            ("12.34", ["USD": .minor(1234), "JPY": jpyDecimals, "KWD": .minor(12340)]),
            ("13.13", ["USD": .minor(1313), "JPY": jpyDecimals, "KWD": .minor(13130)]),
            (
                "0.001",
                [
                    "USD": .refused("has 3 decimals, and USD has 2"),
                    "JPY": .refused("has 3 decimals, and JPY has none"), "KWD": .minor(1),
                ]
            ),
            (
                "25.500",
                ["USD": .minor(2550), "JPY": .refused("has 3 decimals, and JPY has none"), "KWD": .minor(25500)]
            ),
        ] + sameEverywhere.map { ($0.0, ["USD": $0.1, "JPY": $0.1, "KWD": $0.1]) }

    /// Always the currency's major units (Cash App, Braintree): "12" is twelve dollars, twelve yen, twelve dinars.
    public static let majorUnits: [(String, [String: Outcome])] =
        [
            ("12", ["USD": .minor(1200), "JPY": .minor(12), "KWD": .minor(12000)]),
            ("12.00", ["USD": .minor(1200), "JPY": .minor(12), "KWD": .minor(12000)]),
            ("12.30", ["USD": .minor(1230), "JPY": jpyDecimals, "KWD": .minor(12300)]),
            ("12.34", ["USD": .minor(1234), "JPY": jpyDecimals, "KWD": .minor(12340)]),
            ("13.13", ["USD": .minor(1313), "JPY": jpyDecimals, "KWD": .minor(13130)]),
            (
                "0.001",
                [
                    "USD": .refused("has 3 decimals, and USD has 2"),
                    "JPY": .refused("has 3 decimals, and JPY has none"), "KWD": .minor(1),
                ]
            ),
        ] + sameEverywhere.map { ($0.0, ["USD": $0.1, "JPY": $0.1, "KWD": $0.1]) }

    /// The values the end-to-end tests send through every source (the list).
    public static let values = [
        "12", "12.00", "12.30", "12.34", "13.13", "0", "0.001", "1e3", "-1", "+12", "12,00", " 12", "١٢", "abc",
    ]
}
