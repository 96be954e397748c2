/// How an amount a person writes is read. Every `--amount` and every amount argument of a flow step declares one of
/// these, and `Amount.minorUnits` is the one reader of them all, so a value means the same on the command line, in a
/// variable from any source and in a flow file.
public enum AmountNotation: String, Sendable {
    /// Digits alone are minor units ("8000" is 8000 minor units, 80.00 in USD); a decimal point means the currency's
    /// major units ("80.00" is 8000 in USD, "12.5" is refused in JPY, which has no minor unit). For APIs that take
    /// minor units: Bahn, Centra's Adyen payment, an Apple Pay token.
    case minorUnits
    /// The currency's major units, by its digits ("12" and "12.00" are 1200 in USD, "12" is 12 in JPY, "0.001" is 1 in
    /// KWD). For APIs that take decimal strings: Cash App (Afterpay) and Braintree.
    case majorUnits
}

/// Amounts as exact integers of minor units, read from the text a person wrote — never through a binary number, never
/// re-printed — or refused with what is wrong and what is accepted.
public enum Amount {
    /// The largest amount: just under 10^12 minor units, far beyond any sandbox payment, and exact as a JSON number
    /// (a double holds integers exactly only up to 2^53).
    public static let range = 1...999_999_999_999

    /// Why a value is no amount: a clause that follows the value ("has 3 decimals, and USD has 2").
    public struct Refusal: Error, Sendable, Equatable {
        public let problem: String
    }

    /// The text `value` was written as: a string's content or a number's literal, exactly (`12.00` stays "12.00").
    public static func text(of value: JSON) -> String? {
        switch value {
        case .string(let s): s
        case .number(let n): n.literal
        default: nil
        }
    }

    /// The minor units `value` stands for in `currency` (nil: a currency whose digits are not known, or not known yet)
    /// read by `notation`. Accepted: ASCII digits, optionally a point and more digits; fraction digits beyond the
    /// currency's are accepted only when they are zeros ("25.500" is 2550 in USD). Refused: a sign, an exponent, a
    /// comma, spaces, other digits than 0-9, zero, more than `range` allows.
    /// - Parameter allowingZero: zero is an amount here (the tax within a total).
    public static func minorUnits(
        _ value: JSON, notation: AmountNotation, currency: Currency?, allowingZero: Bool = false
    ) -> Result<Int, Refusal> {
        guard let text = text(of: value) else {
            return .failure(Refusal(problem: "is \(value.kindName), not an amount"))
        }
        if let problem = formProblem(text) { return .failure(Refusal(problem: problem)) }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let whole = parts[0].drop { $0 == "0" }
        var fraction = parts.count == 2 ? parts[1] : ""
        let decimal = parts.count == 2
        let digits: Int
        if decimal || notation == .majorUnits {
            guard let known = currency?.minorDigits else {
                let which = currency.map { "currency \($0.numeric)" } ?? "the currency"
                return .failure(
                    Refusal(
                        problem:
                            "is \(decimal ? "a decimal" : "in major units"), and how many decimals \(which) has is not known here"
                    ))
            }
            digits = known
        } else {
            digits = 0
        }
        if fraction.count > digits {
            guard fraction.dropFirst(digits).allSatisfy({ $0 == "0" }) else {
                let has = fraction.count == 1 ? "1 decimal" : "\(fraction.count) decimals"
                return .failure(
                    Refusal(problem: "has \(has), and \(currency!.code) has \(digits == 0 ? "none" : String(digits))"))
            }
            fraction = fraction.prefix(digits)
        }
        let tooLarge = Refusal(problem: "is more than the largest amount, \(range.upperBound) minor units")
        guard whole.count + digits <= 15 else { return .failure(tooLarge) }
        let minor = Int(String(whole) + fraction + String(repeating: "0", count: digits - fraction.count)) ?? 0
        if minor == 0 && !allowingZero {
            return .failure(Refusal(problem: "is zero: an amount is at least 1 minor unit"))
        }
        return range.contains(minor) ? .success(minor) : .failure(tooLarge)
    }

    /// What is wrong with the shape of `value` alone, before its currency is known (an amount read in a currency the
    /// operation learns as it runs): nil when it is digits with at most one point between digits.
    public static func formRefusal(_ value: JSON) -> Refusal? {
        guard let text = text(of: value) else { return Refusal(problem: "is \(value.kindName), not an amount") }
        return formProblem(text).map(Refusal.init)
    }

    /// What is wrong with the shape of `text`, or nil when it is digits with at most one point between digits.
    static func formProblem(_ text: String) -> String? {
        // Nearly every amount is digits with perhaps one point between digits, which the bytes tell at once; the checks
        // below, which read each character's Unicode properties, name what else a text is.
        var (before, points, after) = (0, 0, 0)
        plain: for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if points == 0 { before += 1 } else { after += 1 }
            case UInt8(ascii: "."):
                points += 1
            default:
                break plain
            }
        }
        if before + points + after == text.utf8.count, before > 0, points == 0 || (points == 1 && after > 0) {
            return nil
        }
        let ascii = { (c: Character) in c.isASCII && c.isNumber }
        if text.isEmpty { return "is empty" }
        if text.contains(where: \.isWhitespace) { return "has spaces" }
        if text.hasPrefix("-") { return "is negative" }
        if text.hasPrefix("+") { return "has a sign" }
        if text.contains(",") {
            return "has a comma (the decimal separator is a point, and no thousands separator is taken)"
        }
        if text.contains(where: { $0.isNumber && !ascii($0) }) { return "has digits other than 0-9" }
        if text.contains(where: { $0 == "e" || $0 == "E" }), text.allSatisfy({ ascii($0) || "eE.+-".contains($0) }) {
            return "has an exponent"
        }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(ascii) }) else { return "is not a number" }
        return nil
    }

    /// The forms `notation` accepts in `currency`, for a hint.
    public static func forms(_ notation: AmountNotation, currency: Currency?) -> String {
        let rules = "no sign, exponent, comma or spaces"
        guard let currency, let digits = currency.minorDigits else {
            return notation == .minorUnits
                ? "give digits for minor units (1234); \(rules)"
                : "give a currency whose decimals are known (USD, JPY, KWD…); \(rules)"
        }
        let example = DecimalAmount.text(1234, decimals: digits)
        let decimal =
            digits == 0
            ? "a whole number of \(currency.code) (1234)"
            : "a decimal in \(currency.code) with at most \(digits) decimals (\(example))"
        switch notation {
        case .minorUnits:
            return "give digits for minor units (1234 is \(currency.format(1234))) or \(decimal); \(rules)"
        case .majorUnits: return "give \(decimal); \(rules)"
        }
    }

    /// A command's `--amount`: the minor units, or a usage error (64) naming the option, the value and the forms.
    public static func parse(
        option: String, _ text: String, notation: AmountNotation, currency: Currency?
    ) throws(Diagnostic) -> Int {
        switch minorUnits(.string(text), notation: notation, currency: currency) {
        case .success(let minor): return minor
        case .failure(let refusal):
            throw .usage(
                "\(option) \(JSON.string(text).shownInMessage) \(refusal.problem)",
                hint: forms(notation, currency: currency))
        }
    }
}
