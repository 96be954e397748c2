import Crypto
import Foundation
import GraphQL
import WireTypes

/// Every choice the Braintree emulator makes where `docs/protocols/braintree.md` and the shared contract leave it open:
/// mount points, ids, lifetimes, the merchant account, the fake nonces, the magic amounts and Braintree's error codes.
/// They live here, and only here, so that each can change in one place.
public enum BraintreeRules {
    // MARK: Mount points (what `--env local` points BRAINTREE_CLIENT_API_URL and BRAINTREE_GRAPHQL_URL at)

    static let prefix = "/braintree"
    static let graphQLPath = prefix + "/graphql"
    static let sandboxPrefix = "/_sandbox/braintree"

    static func clientAPIPath(_ merchantID: String) -> String { prefix + "/merchants/\(merchantID)/client_api" }
    static func configurationPath(_ merchantID: String) -> String { clientAPIPath(merchantID) + "/v1/configuration" }

    // MARK: The merchant

    static let environment = "sandbox"
    /// DECISION: the one merchant account, in USD (the contract: a nonce's currency must be the merchant account's).
    static let merchantAccountID = "emulatormerchant01_usd"
    static let currency = (alpha: "USD", numeric: "840")

    /// The Apple Pay part of the configuration; `PUT /_sandbox/braintree/configuration` changes it.
    struct ApplePaySettings: Sendable, Equatable {
        var status = "mock"
        var countryCode = "US"
        var currencyCode = "USD"

        static let statuses: Set<String> = ["off", "mock", "production"]
        static let supportedNetworks = ["visa", "mastercard", "amex", "discover"]

        var json: JSON {
            [
                "status": .string(status), "countryCode": .string(countryCode), "currencyCode": .string(currencyCode),
                "merchantIdentifier": .string(TestCredentials.merchantIdentifier),
                "supportedNetworks": .array(Self.supportedNetworks.map(JSON.string)),
            ]
        }
    }

    // MARK: Identifiers

    private static let alphanumerics = Array("abcdefghijklmnopqrstuvwxyz0123456789")

    /// A transaction's `legacyId`: 8 lowercase alphanumerics, as Braintree's are.
    static func newLegacyID() -> String {
        // 252 is the largest multiple of 36 below 256: rejecting the bytes above it keeps the characters uniform.
        var out = ""
        while out.count < 8 {
            for byte in SecureRandom.bytes(16) where byte < 252 && out.count < 8 {
                out.append(alphanumerics[Int(byte) % 36])
            }
        }
        return out
    }

    /// DECISION: a GraphQL id is base64 of "<type>_<legacyId>" without its `=` padding, as Braintree writes them
    /// ("dHJhbnNhY3Rpb25f…"); both spellings are accepted back.
    static func graphQLID(type: String, legacyID: String) -> String {
        Data("\(type)_\(legacyID)".utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The legacy id a GraphQL id of `type` stands for (nil for another type's id or for text that is not an id).
    static func legacyID(fromGraphQLID id: String, type: String) -> String? {
        let padded = id + String(repeating: "=", count: (4 - id.count % 4) % 4)
        guard let data = Data(base64Encoded: padded), let text = String(data: data, encoding: .utf8),
            text.hasPrefix(type + "_")
        else { return nil }
        return String(text.dropFirst(type.count + 1))
    }

    /// DECISION: tokenized nonces are lowercase UUIDs (Braintree's are uuid-like too).
    static func newNonce() -> String { SecureRandom.uuid() }

    /// DECISION: an authorization fingerprint looks like Braintree's: a SHA-256 hex digest, then `|` and the claims it
    /// covers as a query string. The `|`, `&` and `=` in it make a client that puts it unencoded into a URL fail here
    /// as it would against Braintree.
    static func newFingerprint(createdAt: Date) -> String {
        let stamp = Timestamp.iso8601(createdAt, fractionDigits: 0)
        return Digest.sha256(SecureRandom.bytes(32)).hexString
            + "|created_at=\(stamp)&merchant_id=\(TestCredentials.braintreeMerchantID)&public_key=\(TestCredentials.braintreePublicKey)"
    }

    // MARK: Lifetimes and bounds

    /// A client token's fingerprint is valid 24 hours (the contract).
    static let fingerprintLifetime: TimeInterval = 24 * 60 * 60
    /// DECISION: a tokenized nonce expires after 3 hours unused, as Braintree's do.
    static let nonceLifetime: TimeInterval = 3 * 60 * 60
    /// How many of each kind of object the emulator keeps: the oldest go first, so it stays small however it is driven.
    static let capacity = 50_000
    /// Braintree's limit on `orderId`.
    static let orderIDMaxLength = 255
    /// DECISION: `search` answers at most this many edges when `first` is not given.
    static let defaultPageSize = 50

    // MARK: Cards

    struct Card: Sendable, Equatable {
        enum Network: String, Sendable {
            case visa, mastercard, amex, discover

            /// `details.cardType` of a tokenized Apple Pay card.
            var cardType: String {
                switch self {
                case .visa: "Apple Pay - Visa"
                case .mastercard: "Apple Pay - MasterCard"
                case .amex: "Apple Pay - American Express"
                case .discover: "Apple Pay - Discover"
                }
            }

            /// The schema's `CreditCardBrandCode`. DECISION: American Express is `AMERICAN_EXPRESS`, the enum's value
            /// (the contract's "AMEX" is not one; the engine would refuse to serialise it).
            var brandCode: String {
                switch self {
                case .visa: "VISA"
                case .mastercard: "MASTERCARD"
                case .amex: "AMERICAN_EXPRESS"
                case .discover: "DISCOVER"
                }
            }

            /// The network of a (device) PAN by its leading digits; nil for one the merchant does not take.
            init?(pan: String) {
                let two = Int(pan.prefix(2)) ?? 0
                let four = Int(pan.prefix(4)) ?? 0
                if pan.hasPrefix("4") {
                    self = .visa
                } else if (51...55).contains(two) || (2221...2720).contains(four) {
                    self = .mastercard
                } else if two == 34 || two == 37 {
                    self = .amex
                } else if four == 6011 || two == 65 {
                    self = .discover
                } else {
                    return nil
                }
            }
        }

        var network: Network
        /// The DPAN's last four digits (what Braintree shows for an Apple Pay card).
        var last4: String
        var bin: String
        var expirationMonth: String
        var expirationYear: String
        /// PassKit's `paymentInstrumentName` ("Visa 1234"), when the tokenization carried one.
        var instrumentName: String?
    }

    /// The sandbox's documented fake Apple Pay nonces: reusable. DECISION: their DPANs are the networks' well-known
    /// test numbers (last 4: 1111, 4444, 0005), expiring 12/2030.
    static let fakeNonces: [String: Card] = [
        "fake-apple-pay-visa-nonce": Card(
            network: .visa, last4: "1111", bin: "411111", expirationMonth: "12", expirationYear: "2030"),
        "fake-apple-pay-mastercard-nonce": Card(
            network: .mastercard, last4: "4444", bin: "555555", expirationMonth: "12", expirationYear: "2030"),
        "fake-apple-pay-amex-nonce": Card(
            network: .amex, last4: "0005", bin: "378282", expirationMonth: "12", expirationYear: "2030"),
    ]

    // MARK: Amounts

    /// Cents for a Braintree `Amount` ("a whole number or a number with exactly two or three decimal places"), more
    /// than zero. DECISION: a JSON integer counts as a whole amount; a JSON float is refused (it cannot say "10.00"
    /// exactly); a third decimal must be 0, since USD has no tenths of a cent.
    static func cents(_ amount: GraphQLValue?) -> Int? {
        let text: String
        switch amount {
        case .string(let s)?: text = s
        case .int(let i)?: text = String(i)
        default: return nil
        }
        let decimals = text.firstIndex(of: ".").map { text.distance(from: $0, to: text.endIndex) - 1 } ?? 0
        let cents: Int? =
            switch decimals {
            case 0, 2: DecimalAmount.exactMinorUnits(text)
            case 3: DecimalAmount.exactMinorUnits(text, extraZeros: true)
            default: nil
            }
        guard let cents, cents > 0 else { return nil }
        return cents
    }

    // MARK: Scenarios (magic amounts, in cents)

    /// What the processor does with a charge or an authorization, by its amount.
    enum Outcome: Equatable {
        case approved
        /// PROCESSOR_DECLINED with this processor response code (the amount's whole part).
        case processorDeclined(code: Int)
        /// FAILED: the processor could not be reached.
        case failed
        /// GATEWAY_REJECTED (application_incomplete).
        case gatewayRejected
    }

    static func outcome(forCents cents: Int) -> Outcome {
        switch cents {
        case 200_000...299_999: .processorDeclined(code: cents / 100)
        case 300_000...300_099: .failed
        case 500_100: .gatewayRejected
        default: .approved
        }
    }

    /// DECISION: the texts of the best-known processor response codes; the rest of the range reads "Processor
    /// Declined".
    static func processorResponseText(_ code: Int) -> String {
        switch code {
        case 2000: "Do Not Honor"
        case 2001: "Insufficient Funds"
        case 2002: "Limit Exceeded"
        case 2004: "Expired Card"
        case 2005: "Invalid Credit Card Number"
        case 2010: "Card Issuer Declined CVV"
        case 2015: "Transaction Not Allowed"
        case 2046: "Declined"
        default: "Processor Declined"
        }
    }

    static let failedMessage = "Processor network unavailable - try again"
    static let gatewayRejectedMessage = "Gateway rejected: application_incomplete"

    // MARK: Braintree's error codes (legacyCode) and messages

    enum Code {
        static let amountInvalid = "81503"
        static let orderIDTooLong = "91501"
        static let merchantAccountInvalid = "91513"
        static let settlementAmountTooLarge = "91522"
        static let cannotSubmitForSettlement = "91507"
        static let cannotBeVoided = "91504"
        static let nonceUnknown = "91565"
        /// DECISION: a tokenized Apple Pay card in another currency than the merchant account's.
        static let instrumentNotSupported = "91577"
        static let clientTokenMerchantAccountMissing = "92807"
        static let clientTokenCustomerMissing = "92804"
    }

    static let nonceUnknownMessage = "Unknown or expired payment_method_nonce."
    static let cannotSubmitMessage = "Cannot submit for settlement unless status is authorized."
    static let cannotVoidMessage =
        "Transaction can only be voided if status is authorized, submitted_for_settlement, or - for PayPal - settlement_pending."
    static let notFoundMessage = "An object with this ID was not found."

    static let scenariosHelp = """
        Braintree (client API under /braintree/merchants/\(TestCredentials.braintreeMerchantID)/client_api, GraphQL at POST /braintree/graphql);
        fake nonces (reusable): fake-apple-pay-visa-nonce, fake-apple-pay-mastercard-nonce, fake-apple-pay-amex-nonce; magic amounts in USD:
          2000.00-2999.99  processor declined (PROCESSOR_DECLINED, legacyCode = the whole part, e.g. 2000 "Do Not Honor")
          3000.00-3000.99  failed (FAILED, legacyCode 3000 "Processor network unavailable - try again")
          5001.00          gateway rejected (GATEWAY_REJECTED, legacyCode 5001 "Gateway rejected: application_incomplete")
          other            charge: SUBMITTED_FOR_SETTLEMENT; authorize: AUTHORIZED (then captureTransaction, reverseTransaction)
        PUT /_sandbox/braintree/configuration {"applePayStatus": "off"|"mock"|"production", "currencyCode": "USD",
          "countryCode": "US"} (any subset; these are the defaults) changes what the configuration endpoint advertises.
        """
}
