import Foundation

/// Braintree wire facts (docs/protocols/braintree.md) and the client's choices where that file leaves them open, in one
/// place.
public enum BraintreeProtocol {
    /// The sandbox's fixed nonces (`fake-apple-pay-visa-nonce`, …) may be used again and again; every other nonce pays
    /// once.
    static let fakeNoncePrefix = "fake-"

    /// The dated version header every GraphQL request carries.
    static let versionHeader = "Braintree-Version"
    static let version = "2019-01-01"

    static func configurationPath(merchantID: String) -> String {
        "/merchants/\(merchantID)/client_api/v1/configuration?configVersion=3"
    }
    /// Relative to the configuration's `clientApiUrl`.
    static let applePayTokensPath = "/v1/payment_methods/apple_payment_tokens"

    /// The sandbox's documented fake Apple Pay nonces and the network each stands for.
    static let fakeNonces: [String: String] = [
        "fake-apple-pay-visa-nonce": "Visa", "fake-apple-pay-mastercard-nonce": "MasterCard",
        "fake-apple-pay-amex-nonce": "AmEx",
    ]

    /// DECISION: the order id the driver sets when the user gives none, so that a charge whose answer was lost can be
    /// found again (a transaction search by orderId): "cd-" and 20 random hex digits.
    static func newOrderID() -> String {
        "cd-" + UUID.random().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
    }

    /// DECISION: the `_meta` of a tokenization, as the iOS SDK sends it, naming this driver as the platform.
    static func meta(sessionID: String) -> JSON {
        [
            "integration": "custom", "source": "app", "platform": "checkout-driver",
            "version": .string(DriverVersion.current),
            "sessionId": .string(sessionID),
        ]
    }

    /// Statuses of a transaction that took the money or holds it.
    static let acceptedStatuses: Set<String> = [
        "AUTHORIZED", "AUTHORIZING", "SUBMITTED_FOR_SETTLEMENT", "SETTLING", "SETTLED", "SETTLEMENT_PENDING",
        "SETTLEMENT_CONFIRMED",
    ]
    /// Statuses of a transaction the processor or the gateway refused: nothing moved.
    static let refusedStatuses: Set<String> = [
        "PROCESSOR_DECLINED", "FAILED", "GATEWAY_REJECTED", "SETTLEMENT_DECLINED",
    ]
    /// Statuses that show a capture went through (an AUTHORIZED transaction is not captured yet).
    /// How the record of spent values names an authorized transaction that was captured: it captures once.
    static let capturedKind = "authorized Braintree transaction"
    static let capturedStatuses: Set<String> = [
        "SUBMITTED_FOR_SETTLEMENT", "SETTLING", "SETTLED", "SETTLEMENT_PENDING", "SETTLEMENT_CONFIRMED",
    ]
    /// The status that shows a void went through.
    static let voidedStatuses: Set<String> = ["VOIDED"]

    /// The merchant id a tokenization key carries (`<environment>_<random>_<merchant id>`).
    static func merchantID(tokenizationKey key: String) -> String? {
        let parts = key.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count >= 3, let last = parts.last, !last.isEmpty else { return nil }
        return String(last)
    }

    /// A client token (base64 of JSON): its authorization fingerprint, configuration URL and merchant id.
    struct ClientToken {
        var fingerprint: String
        var configURL: String
        var merchantID: String?

        init(_ text: String) throws(Diagnostic) {
            guard let data = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)),
                let json = try? JSON.parse(data), let fingerprint = json["authorizationFingerprint"]?.stringValue,
                let configURL = json["configUrl"]?.stringValue
            else {
                throw .usage(
                    "the client token is not a Braintree client token (base64 JSON with authorizationFingerprint and configUrl)",
                    hint: "make one with `checkout-driver braintree client-token`, or use the tokenization key instead")
            }
            self.fingerprint = fingerprint
            self.configURL = configURL
            merchantID = json["merchantId"]?.stringValue
        }
    }
}
