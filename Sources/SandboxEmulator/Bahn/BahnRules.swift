import Crypto
import Foundation
import WireTypes

/// Every choice the Bahn emulator makes where Bahn's public documents are silent (docs/protocols/bahn.md, "Decisions").
/// They live here, and only here, so that each can change in one place once Bahn's reference says otherwise.
public enum BahnRules {
    // MARK: Identifiers

    /// DECISION: ids are a prefix plus 26 uppercase Crockford base32 characters (a ULID: 48-bit millisecond time,
    /// 80 random bits), matching the integration guide's `pi_01HZ3X9YQ7M8KH8M5JYV9X4F2B`.
    static func newID(_ prefix: String) -> String {
        let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        let millis = UInt64(Date().timeIntervalSince1970 * 1000) & 0xFFFF_FFFF_FFFF
        var bits: [UInt8] = (0..<6).map { UInt8(truncatingIfNeeded: millis >> (40 - 8 * UInt64($0))) }
        bits += SecureRandom.bytes(10)
        // 128 bits → 26 five-bit groups: the first group holds only the top 3 bits (so it is 0–7).
        var out = ""
        var acc: UInt32 = 0
        var have = 2  // pad 2 zero bits in front so 130 bits split evenly into 26 groups
        for byte in bits {
            acc = acc << 8 | UInt32(byte)
            have += 8
            while have >= 5 {
                have -= 5
                out.append(alphabet[Int((acc >> UInt32(have)) & 0x1F)])
            }
        }
        return prefix + out
    }

    /// DECISION: `pi_secret_` + 32 random bytes in unpadded base64url (43 characters, like the integration guide's
    /// example).
    static func newClientSecret() -> String { "pi_secret_" + SecureRandom.bytes(32).base64URLEncodedString() }

    // MARK: Scenarios (magic amounts)

    /// What the emulated network does with a confirm, chosen by the intent's amount.
    enum Outcome: Equatable {
        /// Authorised now (then captured unless capture_method is manual).
        case approve
        /// Declined at confirm: 402 card_error with this decline code.
        case decline(declineCode: String)
        /// `processing` first; after `BahnRules.processingDelay` either approved or failed with this decline code.
        case processing(failWith: String?)
    }

    /// DECISION: the magic amounts (minor units). Anything else is approved.
    static func outcome(forAmount amount: Int) -> Outcome {
        switch amount {
        case 5100: .decline(declineCode: "insufficient_funds")
        case 5101: .decline(declineCode: "do_not_honor")
        case 5200: .processing(failWith: nil)
        case 5300: .processing(failWith: "processing_error")
        default: .approve
        }
    }

    /// DECISION: the human message for each decline code (in `last_payment_error.message`).
    static func declineMessage(_ declineCode: String) -> String {
        switch declineCode {
        case "insufficient_funds": "Your card has insufficient funds."
        case "processing_error": "An error occurred while processing the card. Try again."
        default: "Your card was declined."
        }
    }

    /// DECISION: how long a `processing` intent stays processing before the background timer settles it.
    static let processingDelay: TimeInterval = 1.5

    /// For `checkout-driver sandbox serve --help`.
    public static let scenariosHelp = """
        Bahn (Apple Pay PaymentIntents) magic amounts, in minor units:
          5100  confirm declined: 402 card_error card_declined, decline_code insufficient_funds;
                intent back to requires_payment_method, webhook payment_intent.payment_failed
          5101  confirm declined with decline_code do_not_honor (same shape as 5100)
          5200  confirm returns processing; succeeds ~1.5 s later (webhooks processing, then succeeded;
                with capture_method manual it settles to requires_capture instead)
          5300  confirm returns processing; fails ~1.5 s later (decline_code processing_error,
                webhook payment_intent.payment_failed)
          other succeeded (automatic capture), or requires_capture with capture_method manual
        Webhooks (when a URL is set) are retried after 0.2, 0.5, 1, 2 and 4 s (6 attempts) until a 2xx;
        GET /_sandbox/bahn/events lists them with their delivery attempts.
        Test cards: card.last4 is the funding card for the token's DPAN (default 1234);
        network_token.dynamic_last4 is the DPAN's last 4.
        """

    // MARK: Webhook events

    /// Every type of event the emulator emits (`sandbox trigger` takes these).
    static let eventTypes = [
        "payment_intent.status.succeeded", "payment_intent.status.processing", "payment_intent.status.requires_capture",
        "payment_intent.payment_failed", "payment_intent.canceled",
    ]

    /// DECISION: the intent a triggered event carries when none is named — an intent no call made, in the state the
    /// event's type announces, for testing a receiver.
    static func triggerFixture(id: String, type: String) -> JSON {
        let status =
            switch type {
            case "payment_intent.status.processing": "processing"
            case "payment_intent.status.requires_capture": "requires_capture"
            case "payment_intent.payment_failed": "requires_payment_method"
            case "payment_intent.canceled": "canceled"
            default: "succeeded"
            }
        return [
            "id": .string(id), "object": "payment_intent", "client_secret": .string("\(id)_secret_trigger"),
            "amount": 1000,
            "currency": "704", "description": "sandbox trigger", "metadata": [:], "status": .string(status),
            "created": JSON(Int(Date().timeIntervalSince1970)),
            "capture_method": .string(status == "requires_capture" ? "manual" : "automatic"),
            "payment_method_id": nil, "latest_charge_id": nil, "last_payment_error": nil,
        ]
    }

    // MARK: Test cards

    /// DECISION: the funding card behind each test DPAN (card.last4 in the PaymentMethod). Apple Pay never reveals
    /// the funding PAN, so the emulator invents one per DPAN; unknown DPANs map to `defaultFundingLast4`.
    static let fundingLast4ByDPAN: [String: String] = [
        "5204245250001488": "4444",  // a Mastercard test DPAN
        "4895370012003478": "0005",  // a second Visa test DPAN
    ]
    static let defaultFundingLast4 = "1234"

    /// DECISION: brand by the DPAN's leading digits.
    static func brand(forPAN pan: String) -> String {
        if pan.hasPrefix("4") { return "visa" }
        if pan.hasPrefix("5") || pan.hasPrefix("2") { return "mastercard" }
        if pan.hasPrefix("34") || pan.hasPrefix("37") { return "amex" }
        return "unknown"
    }

    /// DECISION: Apple Pay's token requestor id per network (the integration guide shows Visa's 40010030273).
    static func tokenRequestorID(forBrand brand: String) -> String {
        switch brand {
        case "mastercard": "50110030273"
        case "amex": "30010030273"
        default: "40010030273"
        }
    }

    // MARK: Idempotency

    /// DECISION (Stripe's documented behaviour): stored first responses replay for 24 h.
    static let idempotencyRetention: TimeInterval = 24 * 60 * 60

    // MARK: Webhooks

    /// DECISION: delays before each retry; with the first try that is 6 attempts in all.
    static let webhookRetryDelays: [TimeInterval] = [0.2, 0.5, 1, 2, 4]
    /// Events kept for `GET /_sandbox/bahn/events` and resending: the latest, as the request log keeps its latest.
    static let eventsKept = 10_000
    /// DECISION: per-attempt socket timeout for webhook delivery.
    static let webhookTimeout: TimeInterval = 5

    // MARK: Request rules

    /// Payment method kinds that exclude each other in `payment_method_data` (from the integration guide).
    static let exclusivePaymentMethods = ["apple_pay", "card", "napas_qr", "card_present", "google_pay"]

    // MARK: Error codes (DECISION: names chosen in the style of the usual PaymentIntent APIs)

    enum Code {
        static let invalidAPIKey = "invalid_api_key"  // 401 authentication_error
        static let invalidSignature = "invalid_signature"  // 401 authentication_error
        static let missingRequestID = "missing_request_id"  // 400
        static let invalidContentType = "invalid_content_type"  // 415
        static let invalidJoseMethod = "invalid_jose_method"  // 400
        static let missingIdempotencyKey = "missing_idempotency_key"  // 400 (confirm)
        static let idempotencyKeyReused = "idempotency_key_reused"  // 400 idempotency_error
        static let idempotencyInProgress = "idempotency_in_progress"  // 409 idempotency_error
        static let parameterInvalid = "parameter_invalid"  // 400
        static let parameterMissing = "parameter_missing"  // 400
        static let parameterUnknown = "parameter_unknown"  // 400: a key the endpoint does not take
        static let bodyInvalid = "body_invalid"  // 400: payload is not a JSON object
        static let resourceMissing = "resource_missing"  // 404
        static let unexpectedState = "payment_intent_unexpected_state"  // 400
        static let tokenMalformed = "apple_pay_token_malformed"  // 400
        static let tokenInvalid = "apple_pay_token_invalid"  // 400 (signature)
        static let decryptionFailed = "apple_pay_decryption_failed"  // 400
        static let amountMismatch = "apple_pay_amount_mismatch"  // 400
        static let tokenAlreadyUsed = "apple_pay_token_already_used"  // 400
        static let cardDeclined = "card_declined"  // 402 card_error
    }
}
