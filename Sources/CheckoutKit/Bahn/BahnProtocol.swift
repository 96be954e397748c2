import Foundation

/// What the driver knows about Bahn's wire protocol (docs/protocols/bahn.md), and every DECISION it takes where
/// Bahn's reference is not public — in this one place, so that each can change when the reference says otherwise.
public enum BahnProtocol {
    // MARK: Documented (seed)

    static let createPath = "/api/payment_intents"
    static func confirmPath(_ id: String) -> String { "/api/payment_intents/\(escape(id))/confirm" }

    static let apiKeyHeader = "Bn-Api-Key"
    static let joseMethodHeader = "Bn-Jose-Method"
    /// One per HTTP attempt.
    static let requestIDHeader = "Bn-Request-Id"
    /// One per logical operation, the same on every attempt and across invocations (kept in the state file).
    static let idempotencyHeader = "Bn-Idempotency-Key"
    static let joseContentType = "application/jose"

    /// The default idempotency key of a confirm: keyed to the order, as the integration guide shows
    /// (`order-1234-applepay`).
    static func confirmIdempotencyKey(orderID: String) -> String { "order-\(orderID)-applepay" }

    /// Statuses after which an intent no longer changes by itself.
    public static let terminalStatuses: Set<String> = [
        "succeeded", "requires_capture", "canceled", "requires_payment_method",
    ]
    /// Statuses nothing more happens in: a read that finds one settles an outcome left open on the intent.
    static let finalStatuses: Set<String> = ["succeeded", "canceled"]
    /// A manual-capture intent the confirm authorised, waiting for its capture.
    static let authorisedStatus = "requires_capture"

    /// The webhook events the integration guide lists.
    static let eventTypes = [
        "payment_intent.status.succeeded", "payment_intent.status.processing",
        "payment_intent.status.requires_capture", "payment_intent.payment_failed",
    ]

    // MARK: DECISIONS

    /// DECISION: status poll, manual capture and cancel, modelled on the usual PaymentIntent APIs.
    static func intentPath(_ id: String) -> String { "/api/payment_intents/\(escape(id))" }
    static func capturePath(_ id: String) -> String { "/api/payment_intents/\(escape(id))/capture" }
    static func cancelPath(_ id: String) -> String { "/api/payment_intents/\(escape(id))/cancel" }
    /// DECISION: the PaymentMethod (wallet provenance, funding and device last 4) is read from its own resource.
    static func paymentMethodPath(_ id: String) -> String { "/api/payment_methods/\(escape(id))" }

    /// DECISION: JWS algorithm ES256 by default (RS256 when the signing key is RSA); protected header
    /// `{"alg", "kid"?}`; compact serialization, unpadded base64url.
    static func jwsHeader(algorithm: String, keyID: String?) -> JSON {
        var header: JSON.Object = ["alg": .string(algorithm)]
        if let keyID { header["kid"] = .string(keyID) }
        return .object(header)
    }

    /// DECISION: idempotency keys of the operations the integration guide does not name. Create is keyed to the order
    /// when there is one (a second create for the same order replays the first intent), else a fresh key per invocation
    /// that still makes its own retries safe.
    static func createIdempotencyKey(orderID: String?) -> String {
        orderID.map { "order-\($0)-create" } ?? "create-\(UUID.random().uuidString.lowercased())"
    }
    static func captureIdempotencyKey(intent: String) -> String { "intent-\(intent)-capture" }
    static func cancelIdempotencyKey(intent: String) -> String { "intent-\(intent)-cancel" }
    static func confirmIdempotencyKey(intent: String) -> String { "intent-\(intent)-applepay" }

    /// DECISION: webhook signatures, `Bn-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
    static let signatureHeader = "Bn-Signature"
    public static let signatureTolerance: TimeInterval = 300

    /// An earlier attempt under the same key is still being processed (Stripe's idempotency semantics).
    static let idempotencyInProgressCode = "idempotency_in_progress"

    /// DECISION: a confirm the card refused answers HTTP 402 with the intent (its new charge and last error), as the
    /// usual PaymentIntent APIs do; like a success, it uses the token up.
    static let declineStatus = 402
    /// The error code of a token Bahn has seen before (the integration guide's error table).
    static let tokenAlreadyUsedCode = "apple_pay_token_already_used"
    /// DECISION: the header that says an answer is the replay of an earlier one under the same idempotency key
    /// (`Bn-Idempotent-Replayed: true`), after Stripe's `Idempotent-Replayed`.
    static let replayedHeader = "Bn-Idempotent-Replayed"

    /// The integration guide's ~30 s between wallet authorisation and completing the sheet: the default `--wait`
    /// budget.
    static let walletSheetBudget: Double = 30

    /// The integration guide's error table, keyed by the error codes Bahn (and the emulator) return.
    static func hint(forCode code: String?, type: String?, intent: String? = nil) -> String? {
        switch code {
        case "apple_pay_decryption_failed":
            "decryption error: the payment processing certificate was not made from Bahn's CSR; re-run the certificate step with Bahn's CSR (Bahn must hold the private key)"
        case "apple_pay_token_invalid", "apple_pay_token_malformed", "invalid_token":
            "signature or invalid-token error: paymentData was base64-wrapped, re-serialised or truncated; send the raw UTF-8 JSON exactly as PassKit produced it"
        case tokenAlreadyUsedCode:
            "Apple Pay tokens are single-use: to retry, send the same Bn-Idempotency-Key so the original response replays; for a new payment make a fresh one: `checkout-driver applepay token --amount N --currency CODE --out token.json`"
        case "apple_pay_amount_mismatch":
            "the token was made for another amount or currency than the intent's; make the token for the intent's amount"
        case "idempotency_key_reused":
            "this idempotency key was first used with a different body; a retry must repeat the request exactly, a new attempt needs a new --idempotency-key"
        case "invalid_api_key":
            "check BAHN_API_KEY"
        case "invalid_signature":
            "check BAHN_SIGNING_KEY (and BAHN_KEY_ID): Bahn must hold the matching public key"
        case "card_declined":
            "the card was declined; read last_payment_error for the reason and offer another payment method"
        case "resource_missing":
            "check the id; an embedded emulator (--env local) forgets its intents when the command ends: run `checkout-driver sandbox serve` to chain commands"
        case "payment_intent_unexpected_state":
            "check the intent's status with `checkout-driver bahn intent \(intent ?? "ID")`"
        default:
            type == "authentication_error" ? "check BAHN_API_KEY and BAHN_SIGNING_KEY" : nil
        }
    }

    private static func escape(_ id: String) -> String { PercentEncoding.pathSegment(id) }
}
