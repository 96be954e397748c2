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
    /// nil for an exponent, which money is never written with.
    static func decimalText(_ value: JSON) -> String? {
        guard case .number(let n) = value, !n.literal.contains(where: { $0 == "e" || $0 == "E" }) else { return nil }
        guard n.literal.contains(".") else { return n.literal }
        let trimmed = n.literal.reversed().drop { $0 == "0" }.drop { $0 == "." }
        return String(trimmed.reversed())
    }

    /// `{value, currency{denominator}}` in minor units, read digit by digit (never multiplied as a double).
    static func minor(_ money: JSON) throws(Diagnostic) -> Int {
        let denominator = money["currency"]?["denominator"]?.intValue ?? 100
        guard let text = money["value"].flatMap(decimalText), !text.hasPrefix("-") else {
            throw .failure(
                "Centra sent an amount that is not a plain non-negative number: \(money["value"]?.serialized() ?? "nothing")",
                hint: "check CENTRA_API_URL points at the Storefront API")
        }
        let digits = String(denominator).count - 1
        guard denominator > 0, String(denominator) == "1" + String(repeating: "0", count: digits) else {
            throw .failure(
                "Centra sent a currency denominator that is not a power of ten: \(denominator)",
                hint: "check the store's currency settings")
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let fraction = parts.count > 1 ? String(parts[1]) : ""
        guard fraction.count <= digits, let whole = Int(parts[0]) else {
            throw .failure(
                "Centra sent \(text), which has more decimals than its currency (\(digits))",
                hint: "check the store's currency settings")
        }
        let padded = fraction + String(repeating: "0", count: digits - fraction.count)
        return whole * denominator + (padded.isEmpty ? 0 : Int(padded) ?? 0)
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
