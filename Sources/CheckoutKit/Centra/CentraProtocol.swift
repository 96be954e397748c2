import Foundation

/// The Centra client's choices where docs/protocols/centra.md leaves them open, in one place.
public enum CentraProtocol {
    /// DECISION: the pages Centra is given when no 3DS listener is running (the shipping-contact step needs both
    /// fields but never redirects). The final payment uses its own loopback listener's pages instead.
    static let defaultReturnURL = "http://127.0.0.1/checkout-driver/payment-return"
    static let defaultFailedURL = "http://127.0.0.1/checkout-driver/payment-failed"

    /// DECISION: how long the final step waits for a 3DS redirect to come back when the flow sets no deadline.
    static let redirectWait: Double = 300

    /// What a person wants to see of the Adyen config: its keys, and the Adyen environment its `context` implies.
    static func adyenSummary(_ config: JSON) -> JSON {
        let context = config["context"]?.stringValue
        // DECISION: Adyen's client SDKs take "test", or "live-<region>" for live; Centra's context says only test/live.
        let environment: JSON =
            switch context {
            case "test"?: "test"
            case "live"?: "live (Adyen needs the region: live-us, live-au, live-apse, live-in; Europe is live)"
            default: .null
            }
        let methods = config["paymentMethodsResponse"]?["paymentMethods"]?.arrayValue ?? []
        return [
            "clientKey": config["clientKey"] ?? .null, "context": config["context"] ?? .null,
            "adyenEnvironment": environment,
            "country": config["country"] ?? .null, "languageCode": config["languageCode"] ?? .null,
            "amount": config["paymentAmount"]?["amount"] ?? .null,
            "currency": config["paymentAmount"]?["currency"] ?? .null,
            "applePay": .bool(methods.contains { $0["type"]?.stringValue == "applepay" }),
            "shippingMethods": .array((config["shippingMethods"]?.arrayValue ?? []).map(shippingMethodSummary)),
        ]
    }

    /// A shipping method of the widget as money reads: its price as an exact decimal of its currency ("49.00 SEK"),
    /// beside the price as Centra sent it.
    static func shippingMethodSummary(_ method: JSON) -> JSON {
        guard case .object(var o) = method, let price = method["price"], let minor = try? CentraMoney.minor(price)
        else { return method }
        o["priceText"] = .string(
            CentraMoney.decimal(minor, of: price) + (price["currency"]?["code"]?.stringValue.map { " " + $0 } ?? ""))
        return .object(o)
    }

    /// Adyen's Apple Pay state data as Centra's reference storefront sends it: the token file's exact bytes, base64.
    static func applePayFields(_ token: PaymentTokenFile) -> JSON {
        [
            "paymentMethod": ["type": "applepay", "applePayToken": .string(token.bytes.base64EncodedString())],
            "express": true,
        ]
    }
}
