import Foundation

/// Centra's `MonetaryValue` (major units as a GraphQL Float) in exact minor units.
enum CentraMoney {
    struct Summary {
        var grandTotal: Int
        var currency: String
        var currencyNumeric: String?
        var shippingMethods: [JSON]
        var grandTotalText: String
        /// The currency with the digits its denominator gives.
        var money: Currency

        var json: JSON {
            [
                "grandTotal": .number(grandTotal), "grandTotalText": .string(grandTotalText),
                "currency": .string(currency),
                "currencyNumeric": currencyNumeric.map(JSON.string) ?? .null,
                "shippingMethods": .array(shippingMethods),
            ]
        }
    }

    /// The number as Centra wrote it, without the zeros that end its fraction ("799.50" → "799.5", "799.0" → "799");
    /// nil for an exponent, which money is never written with. (On bytes: every shipping method's price of every
    /// selection is read through here, and the same walk by `Character` cost thousands of instructions a price.)
    static func decimalText(_ value: JSON) -> String? {
        guard case .number(let n) = value else { return nil }
        let utf8 = n.literal.utf8
        guard !utf8.contains(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) else { return nil }
        guard let point = utf8.firstIndex(of: UInt8(ascii: ".")) else { return n.literal }
        var end = utf8.endIndex
        while end > point, utf8[utf8.index(before: end)] == UInt8(ascii: "0") { end = utf8.index(before: end) }
        if end == utf8.index(after: point) { end = point }
        return String(n.literal[..<end])
    }

    /// `{value, currency{denominator}}` in minor units, read digit by digit (never multiplied as a double).
    static func minor(_ money: JSON) throws(Diagnostic) -> Int {
        let denominator = money["currency"]?["denominator"]?.intValue ?? 100
        guard let text = money["value"].flatMap(decimalText), !text.hasPrefix("-") else {
            throw .failure(
                "Centra sent an amount that is not a plain non-negative number: \(money["value"]?.serialized() ?? "nothing")",
                hint: "check CENTRA_API_URL points at the Storefront API")
        }
        var digits = 0
        var power = 1
        while power < denominator, power <= Int.max / 10 {
            power *= 10
            digits += 1
        }
        guard denominator > 0, power == denominator else {
            throw .failure(
                "Centra sent a currency denominator that is not a power of ten: \(denominator)",
                hint: "check the store's currency settings")
        }
        let point = text.utf8.firstIndex(of: UInt8(ascii: "."))
        let fraction = point.map { text[text.utf8.index(after: $0)...] } ?? ""
        guard fraction.utf8.count <= digits, let whole = Int(text[..<(point ?? text.endIndex)]) else {
            throw .failure(
                "Centra sent \(text), which has more decimals than its currency (\(digits))",
                hint: "check the store's currency settings")
        }
        var scale = 1
        for _ in fraction.utf8.count..<digits { scale *= 10 }
        return whole * denominator + (fraction.isEmpty ? 0 : (Int(fraction) ?? 0) * scale)
    }

    /// Minor units as the decimal string of `money`'s currency: 79900 → "799.00".
    static func decimal(_ minor: Int, of money: JSON) -> String {
        let denominator = money["currency"]?["denominator"]?.intValue ?? 100
        return DecimalAmount.text(minor, decimals: String(denominator).count - 1)
    }

    /// The amount to authorise. DECISION: the checkout's GRAND_TOTAL row when the answer has one — the schema says
    /// `Selection.grandTotal` "does not contain added tax", so in a store that adds tax only the checkout total is
    /// what the shopper pays — else `grandTotal`.
    static func summary(_ selection: JSON) throws(Diagnostic) -> Summary {
        let row = (selection["checkout"]?["totals"]?.arrayValue ?? []).first {
            $0["type"]?.stringValue == "GRAND_TOTAL"
        }?["price"]
        guard let total = row ?? selection["grandTotal"], total != .null else {
            throw .failure(
                "Centra's selection has no grandTotal", hint: "check CENTRA_API_URL points at the Storefront API")
        }
        let methods = (selection["checkout"]?["shippingMethods"]?.arrayValue ?? []).map { m -> JSON in
            let price = m["price"].flatMap { try? minor($0) }
            return [
                "id": m["id"] ?? .null, "name": m["name"] ?? .null, "selected": m["selected"] ?? .null,
                "price": price.map { .number($0) } ?? .null,
                "priceText": price.map {
                    .string(decimal($0, of: m["price"]!) + " " + (m["price"]?["currency"]?["code"]?.stringValue ?? ""))
                } ?? .null,
            ]
        }
        let grandTotal = try minor(total)
        let code = total["currency"]?["code"]?.stringValue ?? "?"
        let numeric = total["currency"]?["isoNumber"]?.stringValue
        let digits = String(total["currency"]?["denominator"]?.intValue ?? 100).count - 1
        return Summary(
            grandTotal: grandTotal, currency: code, currencyNumeric: numeric, shippingMethods: methods,
            grandTotalText: decimal(grandTotal, of: total),
            money: Currency(alphabetic: code, numeric: numeric ?? "", minorDigits: digits))
    }
}
