import Crypto
import Dispatch
import Foundation
import LoopbackHTTP
import Synchronization
import WireTypes

/// The Bahn PaymentIntents API as docs/protocols/bahn.md describes it: JWS-signed requests, idempotent replay, Apple
/// Pay token confirmation, magic-amount scenarios, the ledger and signed webhooks. Choices the documents leave open are
/// in `BahnRules`.
public final class BahnEmulator: EmulatedProvider {
    public static let name = "bahn"

    struct Intent {
        var id: String
        var clientSecret: String
        var amount: Int
        var currency: String
        var description: String?
        var metadata: [String: String]
        var status: String
        var created: Int
        var captureMethod = "automatic"
        var paymentMethodID: String?
        var latestChargeID: String?
        var lastPaymentError: [String: String]?
        /// Whether the ledger holds an authorisation that a cancel must void.
        var authorized = false

        var json: JSON {
            [
                "id": .string(id), "object": "payment_intent", "client_secret": .string(clientSecret),
                "amount": JSON(amount),
                "currency": .string(currency), "description": JSON(description), "metadata": JSON(metadata),
                "status": .string(status), "created": JSON(created), "capture_method": .string(captureMethod),
                "payment_method_id": JSON(paymentMethodID), "latest_charge_id": JSON(latestChargeID),
                "last_payment_error": JSON(lastPaymentError),
            ]
        }
    }

    struct PaymentMethod {
        var id: String
        var brand: String
        var fundingLast4: String
        var dpanLast4: String
        var tokenRequestorID: String

        /// Shaped exactly as the integration guide's PaymentMethod provenance object.
        var json: JSON {
            [
                "id": .string(id), "type": "card",
                "card": [
                    "brand": .string(brand), "last4": .string(fundingLast4),
                    "wallet": [
                        "type": "apple_pay",
                        "assurance_details": ["account_verified": true, "card_holder_authenticated": true],
                    ],
                    "network_token": [
                        "dynamic_last4": .string(dpanLast4), "token_requestor_id": .string(tokenRequestorID),
                    ],
                ],
            ]
        }
    }

    struct Store {
        var intents: [String: Intent] = [:]
        var paymentMethods: [String: PaymentMethod] = [:]
        /// Apple Pay transaction ids already consumed by a confirm: tokens are single-use.
        var usedTransactions: Set<String> = []
    }

    let store = Mutex(Store())
    private let ledger: Ledger
    private let idempotency = BahnIdempotency()
    let webhooks: BahnWebhooks
    private let verifier: ApplePayTokenVerifier

    init(ledger: Ledger, webhookURL: String?, verifier: ApplePayTokenVerifier = .emulator) {
        self.ledger = ledger
        self.webhooks = BahnWebhooks(url: webhookURL)
        self.verifier = verifier
    }

    /// Creates the emulator and registers its routes.
    public static func install(_ context: EmulatorContext) -> BahnEmulator {
        let bahn = BahnEmulator(ledger: context.ledger, webhookURL: context.webhookURL)
        context.router.register(bahn.routes())
        return bahn
    }

    /// The magic-amount scenarios, for `sandbox serve --help`.
    public static let scenariosHelp = BahnRules.scenariosHelp
    /// The webhook event types it emits, and `POST /_sandbox/bahn/events` (`sandbox trigger`) takes (`WebhookRoutes`).
    public static let eventTypes = BahnRules.eventTypes

    // MARK: Routes

    func routes() -> [Route] {
        [
            Route("POST", "/api/payment_intents") { [self] in post($0, idempotencyRequired: false, create) },
            Route("POST", "/api/payment_intents/:id/confirm") { [self] in post($0, idempotencyRequired: true, confirm)
            },
            Route("POST", "/api/payment_intents/:id/capture") { [self] in post($0, idempotencyRequired: false, capture)
            },
            Route("POST", "/api/payment_intents/:id/cancel") { [self] in post($0, idempotencyRequired: false, cancel) },
            Route("GET", "/api/payment_intents/:id") { [self] in
                get($0) { request throws(BahnFailure) in
                    ["payment_intent": try intent(request.params["id"] ?? "").json]
                }
            },
            // DECISION: the PaymentMethod is served unwrapped, exactly in the integration guide's provenance shape.
            Route("GET", "/api/payment_methods/:id") { [self] in
                get($0) { request throws(BahnFailure) in
                    let id = request.params["id"] ?? ""
                    guard let method = store.withLock({ $0.paymentMethods[id] }) else {
                        throw BahnFailure(
                            404, code: BahnRules.Code.resourceMissing, message: "No such payment_method: \(id)",
                            param: "id")
                    }
                    return method.json
                }
            },
        ]
    }

    private func get(_ request: EmulatorRequest, _ body: (EmulatorRequest) throws(BahnFailure) -> JSON) -> HTTPReply {
        do throws(BahnFailure) {
            try BahnRequestAuth.checkHeaders(request)
            return EmulatorResponse.json(200, try body(request))
        } catch {
            return error.reply
        }
    }

    /// Authentication, JWS, then idempotency around the operation itself.
    private func post(
        _ request: EmulatorRequest, idempotencyRequired: Bool,
        _ operation: (EmulatorRequest, JSON.Object) throws(BahnFailure) -> HTTPResponse
    ) -> HTTPReply {
        let payload: Data
        do throws(BahnFailure) {
            try BahnRequestAuth.checkHeaders(request)
            payload = try BahnRequestAuth.verifiedPayload(request)
        } catch {
            return error.reply
        }
        func run() -> HTTPResponse {
            do throws(BahnFailure) {
                // An empty payload is an empty body (capture and cancel take no parameters).
                let object = payload.isEmpty ? [:] : (try? JSON.parse(payload))?.objectValue
                guard let object else {
                    throw BahnFailure(
                        400, code: BahnRules.Code.bodyInvalid, message: "The JWS payload must be a JSON object.")
                }
                return try operation(request, object)
            } catch {
                return error.response ?? HTTPResponse(status: 500)
            }
        }
        guard let key = request.headers["Bn-Idempotency-Key"], !key.isEmpty else {
            if idempotencyRequired {
                return BahnFailure(
                    400, code: BahnRules.Code.missingIdempotencyKey,
                    message:
                        "Bn-Idempotency-Key is required on confirm: key it to the order so a retry replays the original response.",
                    param: "Bn-Idempotency-Key"
                ).reply
            }
            return .respond(run())
        }
        let fingerprint = BahnIdempotency.fingerprint(method: request.method, path: request.path, payload: payload)
        switch idempotency.begin(key: key, fingerprint: fingerprint) {
        case .replay(let response): return .respond(response)
        case .reject(let failure): return failure.reply
        case .proceed:
            let response = run()
            idempotency.finish(key: key, fingerprint: fingerprint, response: response)
            return .respond(response)
        }
    }

    private static func ok(_ intent: Intent) -> HTTPResponse {
        .json(200, EmulatorResponse.encode(["payment_intent": intent.json]))
    }

    private func intent(_ id: String) throws(BahnFailure) -> Intent {
        guard let intent = store.withLock({ $0.intents[id] }) else { throw Self.missing(id) }
        return intent
    }

    private static func missing(_ id: String) -> BahnFailure {
        BahnFailure(404, code: BahnRules.Code.resourceMissing, message: "No such payment_intent: \(id)", param: "id")
    }

    private static func unexpectedState(_ intent: Intent, action: String) -> BahnFailure {
        BahnFailure(
            400, code: BahnRules.Code.unexpectedState,
            message: "This PaymentIntent's status is \(intent.status), so it cannot be \(action).",
            extra: ["payment_intent": intent.json])
    }

    private static func rejectUnknown(_ body: JSON.Object, allowed: Set<String>) throws(BahnFailure) {
        if let unknown = body.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw BahnFailure(
                400, code: BahnRules.Code.parameterUnknown, message: "Received unknown parameter: \(unknown)",
                param: unknown)
        }
    }

    // MARK: Create

    private func create(_ request: EmulatorRequest, _ body: JSON.Object) throws(BahnFailure) -> HTTPResponse {
        try Self.rejectUnknown(body, allowed: ["amount", "currency", "description", "metadata"])
        func invalid(_ param: String, _ message: String) -> BahnFailure {
            BahnFailure(
                400, code: body[param] == nil ? BahnRules.Code.parameterMissing : BahnRules.Code.parameterInvalid,
                message: message, param: param)
        }
        guard let amount = body.integer("amount"), amount > 0 else {
            throw invalid("amount", "amount must be a positive integer in minor units.")
        }
        guard let currency = body.string("currency"), currency.count == 3, currency.allSatisfy(\.isASCIIDigit) else {
            throw invalid("currency", "currency must be a 3-digit ISO 4217 numeric code as a string, e.g. \"704\".")
        }
        var description: String?
        if let value = body["description"], !value.isNull {
            guard let text = value.stringValue else { throw invalid("description", "description must be a string.") }
            description = text
        }
        var metadata: [String: String] = [:]
        if let value = body["metadata"], !value.isNull {
            guard let map = value.objectValue?.compactMapValues(\.stringValue), map.count == value.objectValue?.count
            else {
                throw invalid("metadata", "metadata must be an object whose values are strings.")
            }
            metadata = map
        }
        let intent = Intent(
            id: BahnRules.newID("pi_"), clientSecret: BahnRules.newClientSecret(), amount: amount,
            currency: currency, description: description, metadata: metadata,
            status: "requires_payment_method", created: Int(Date().timeIntervalSince1970))
        store.withLock { $0.intents[intent.id] = intent }
        return Self.ok(intent)
    }

    // MARK: Confirm

    private func confirm(_ request: EmulatorRequest, _ body: JSON.Object) throws(BahnFailure) -> HTTPResponse {
        let id = request.params["id"] ?? ""
        let current = try intent(id)
        try Self.rejectUnknown(body, allowed: ["payment_method_data", "payment_method_options", "capture_method"])
        guard let methodData = body.object("payment_method_data") else {
            throw BahnFailure(
                400, code: BahnRules.Code.parameterMissing,
                message: "payment_method_data is required.", param: "payment_method_data")
        }
        let kinds = BahnRules.exclusivePaymentMethods.filter { methodData[$0] != nil }
        guard kinds.count <= 1 else {
            throw BahnFailure(
                400, code: BahnRules.Code.parameterInvalid,
                message:
                    "payment_method_data may contain only one of \(BahnRules.exclusivePaymentMethods.joined(separator: ", ")); got \(kinds.joined(separator: " and ")).",
                param: "payment_method_data")
        }
        guard let token = methodData.object("apple_pay")?.string("token") else {
            throw BahnFailure(
                400, code: BahnRules.Code.parameterMissing,
                message:
                    "payment_method_data.apple_pay.token is required: the PKPaymentToken paymentData as a UTF-8 JSON string.",
                param: "payment_method_data.apple_pay.token")
        }
        var captureMethod = "automatic"
        if let value = body["capture_method"] {
            guard let text = value.stringValue, text == "manual" || text == "automatic" else {
                throw BahnFailure(
                    400, code: BahnRules.Code.parameterInvalid,
                    message: "capture_method must be manual or automatic.", param: "capture_method")
            }
            captureMethod = text
        }
        if let options = body["payment_method_options"], options.objectValue == nil {
            throw BahnFailure(
                400, code: BahnRules.Code.parameterInvalid,
                message: "payment_method_options must be an object.", param: "payment_method_options")
        }

        let decrypted = try Self.openToken(token, verifier: verifier)
        guard decrypted.amount == current.amount, decrypted.currencyCode == current.currency else {
            throw BahnFailure(
                400, code: BahnRules.Code.amountMismatch,
                message:
                    "The Apple Pay token authorises \(decrypted.amount) in currency \(decrypted.currencyCode), but the PaymentIntent is for \(current.amount) in \(current.currency).",
                param: "payment_method_data.apple_pay.token")
        }

        let brand = BahnRules.brand(forPAN: decrypted.pan)
        let method = PaymentMethod(
            id: BahnRules.newID("pm_"), brand: brand,
            fundingLast4: BahnRules.fundingLast4ByDPAN[decrypted.pan] ?? BahnRules.defaultFundingLast4,
            dpanLast4: String(decrypted.pan.suffix(4)),
            tokenRequestorID: BahnRules.tokenRequestorID(forBrand: brand))
        let outcome = BahnRules.outcome(forAmount: current.amount)

        // Check and transition under one lock so concurrent confirms (with different keys) cannot both succeed.
        let result = store.withLock { s -> Result<(Intent, declined: Bool), BahnFailure> in
            guard var intent = s.intents[id] else { return .failure(Self.missing(id)) }
            guard !s.usedTransactions.contains(decrypted.transactionId) else {
                return .failure(
                    BahnFailure(
                        400, code: BahnRules.Code.tokenAlreadyUsed,
                        message:
                            "This Apple Pay token (transaction \(decrypted.transactionId)) was already used by an earlier confirm; tokens are single-use. Retry with the same Bn-Idempotency-Key to get the original response.",
                        param: "payment_method_data.apple_pay.token"))
            }
            guard intent.status == "requires_payment_method" else {
                return .failure(Self.unexpectedState(intent, action: "confirmed"))
            }
            s.usedTransactions.insert(decrypted.transactionId)
            s.paymentMethods[method.id] = method
            intent.paymentMethodID = method.id
            intent.latestChargeID = BahnRules.newID("ch_")
            intent.captureMethod = captureMethod
            intent.lastPaymentError = nil
            var declined = false
            switch outcome {
            case .approve:
                approve(&intent)
            case .decline(let declineCode):
                fail(&intent, declineCode: declineCode)
                declined = true
            case .processing(let failWith):
                intent.status = "processing"
                webhooks.emit(type: "payment_intent.status.processing", paymentIntent: intent.json, intentID: id)
                DispatchQueue.global().asyncAfter(deadline: .now() + BahnRules.processingDelay) { [self] in
                    settleProcessing(id, failWith: failWith)
                }
            }
            s.intents[id] = intent
            return .success((intent, declined))
        }
        let (intent, declined) = try result.get()
        if declined, let error = intent.lastPaymentError {
            throw BahnFailure(
                402, type: "card_error", code: BahnRules.Code.cardDeclined, message: error["message"] ?? "",
                extra: ["decline_code": .string(error["decline_code"] ?? ""), "payment_intent": intent.json])
        }
        return Self.ok(intent)
    }

    private static func openToken(
        _ token: String, verifier: ApplePayTokenVerifier
    ) throws(BahnFailure) -> DecryptedPaymentToken {
        let param = "payment_method_data.apple_pay.token"
        let error: ApplePayTokenError
        do {
            return try verifier.open(Data(token.utf8))
        } catch let caught {
            error = caught
        }
        switch error {
        case .malformed(let why):
            throw BahnFailure(
                400, code: BahnRules.Code.tokenMalformed,
                message:
                    "The Apple Pay token could not be read (\(why)). Send PKPaymentToken.paymentData as its UTF-8 JSON string, not base64-wrapped.",
                param: param)
        case .signature(let why):
            throw BahnFailure(
                400, code: BahnRules.Code.tokenInvalid,
                message:
                    "The Apple Pay token failed the signature check over its exact bytes (\(why)). The token must not be re-serialised, reordered or truncated in transit.",
                param: param)
        case .decryption(let why):
            throw BahnFailure(
                400, code: BahnRules.Code.decryptionFailed,
                message:
                    "The Apple Pay token could not be decrypted (\(why)). The payment processing certificate must be made from Bahn's CSR.",
                param: param)
        }
    }

    /// Authorise, and capture too unless capture is manual. Caller holds the store lock.
    private func approve(_ intent: inout Intent) {
        ledger.append(
            provider: "bahn", kind: .authorization, reference: intent.id, amount: intent.amount,
            currency: intent.currency)
        intent.authorized = true
        if intent.captureMethod == "manual" {
            intent.status = "requires_capture"
            webhooks.emit(
                type: "payment_intent.status.requires_capture", paymentIntent: intent.json, intentID: intent.id)
        } else {
            ledger.append(
                provider: "bahn", kind: .capture, reference: intent.id, amount: intent.amount, currency: intent.currency
            )
            intent.status = "succeeded"
            webhooks.emit(type: "payment_intent.status.succeeded", paymentIntent: intent.json, intentID: intent.id)
        }
    }

    /// The attempt failed: the intent can take another payment method. Caller holds the store lock.
    private func fail(_ intent: inout Intent, declineCode: String) {
        intent.status = "requires_payment_method"
        intent.lastPaymentError = [
            "code": BahnRules.Code.cardDeclined, "decline_code": declineCode,
            "message": BahnRules.declineMessage(declineCode),
        ]
        webhooks.emit(type: "payment_intent.payment_failed", paymentIntent: intent.json, intentID: intent.id)
    }

    private func settleProcessing(_ id: String, failWith: String?) {
        store.withLock { s in
            guard var intent = s.intents[id], intent.status == "processing" else { return }
            if let failWith { fail(&intent, declineCode: failWith) } else { approve(&intent) }
            s.intents[id] = intent
        }
    }

    // MARK: Capture and cancel

    private func capture(_ request: EmulatorRequest, _ body: JSON.Object) throws(BahnFailure) -> HTTPResponse {
        let id = request.params["id"] ?? ""
        let result = store.withLock { s -> Result<Intent, BahnFailure> in
            guard var intent = s.intents[id] else { return .failure(Self.missing(id)) }
            guard intent.status == "requires_capture" else {
                return .failure(Self.unexpectedState(intent, action: "captured"))
            }
            ledger.append(
                provider: "bahn", kind: .capture, reference: id, amount: intent.amount, currency: intent.currency)
            intent.status = "succeeded"
            webhooks.emit(type: "payment_intent.status.succeeded", paymentIntent: intent.json, intentID: id)
            s.intents[id] = intent
            return .success(intent)
        }
        return Self.ok(try result.get())
    }

    private func cancel(_ request: EmulatorRequest, _ body: JSON.Object) throws(BahnFailure) -> HTTPResponse {
        let id = request.params["id"] ?? ""
        let result = store.withLock { s -> Result<Intent, BahnFailure> in
            guard var intent = s.intents[id] else { return .failure(Self.missing(id)) }
            guard intent.status == "requires_payment_method" || intent.status == "requires_capture" else {
                return .failure(Self.unexpectedState(intent, action: "canceled"))
            }
            if intent.authorized {
                ledger.append(
                    provider: "bahn", kind: .void, reference: id, amount: intent.amount, currency: intent.currency)
                intent.authorized = false
            }
            intent.status = "canceled"
            // DECISION: the integration guide lists no cancel event; the emulator emits payment_intent.canceled.
            webhooks.emit(type: "payment_intent.canceled", paymentIntent: intent.json, intentID: id)
            s.intents[id] = intent
            return .success(intent)
        }
        return Self.ok(try result.get())
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
