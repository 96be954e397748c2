import Foundation
import LoopbackHTTP
import WireTypes

/// Afterpay's Online API v2 as a merchant server calls it (under `/afterpay`): Cash App Pay checkouts, capture or
/// auth once the checkout was validated, deferred captures, and reading a payment. Every call needs Basic auth and a
/// User-Agent; errors are `{errorCode, errorId, message, httpStatusCode}`.
struct AfterpayEmulator: Sendable {
    let store: CashAppStore
    let ledger: Ledger
    let baseURL: @Sendable () -> String

    static let provider = "afterpay"

    func routes() -> [Route] {
        let p = CashAppRules.afterpayPrefix + "/v2"
        return [
            Route("POST", p + "/checkouts") { request in merchant(request, createCheckout) },
            Route("POST", p + "/payments/capture") { request in
                merchant(request) { (r) throws(AfterpayFailure) in try pay(r, flow: .capture) }
            },
            Route("POST", p + "/payments/auth") { request in
                merchant(request) { (r) throws(AfterpayFailure) in try pay(r, flow: .auth) }
            },
            Route("POST", p + "/payments/:orderId/capture") { request in merchant(request, deferredCapture) },
            Route("GET", p + "/payments/:orderId") { request in merchant(request, payment) },
        ]
    }

    private func merchant(
        _ request: EmulatorRequest, _ body: (EmulatorRequest) throws(AfterpayFailure) -> HTTPReply
    ) -> HTTPReply {
        do throws(AfterpayFailure) {
            try Self.checkMerchant(request)
            return try body(request)
        } catch {
            return error.reply
        }
    }

    /// Basic auth with the test merchant id and secret key, then a User-Agent (Afterpay requires one on every call).
    static func checkMerchant(_ request: EmulatorRequest) throws(AfterpayFailure) {
        let credentials = request.headers["Authorization"].flatMap { header -> String? in
            let parts = header.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "basic", let data = Data(base64Encoded: String(parts[1]))
            else { return nil }
            return String(data: data, encoding: .utf8)
        }
        guard credentials == TestCredentials.afterpayMerchantID + ":" + TestCredentials.afterpaySecretKey else {
            throw AfterpayFailure(
                401, "unauthorized",
                request.headers["Authorization"] == nil
                    ? "Credentials are required: send Authorization: Basic base64(merchantId:secretKey)."
                    : "Invalid merchant id or secret key.")
        }
        guard let agent = request.headers["User-Agent"], !agent.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw AfterpayFailure.invalidObject(
                "The User-Agent header is required (e.g. MyPlugin/1.0 (Platform) Merchant/<merchantId>).", status: 400)
        }
    }

    static func object(_ request: EmulatorRequest) throws(AfterpayFailure) -> JSON.Object {
        guard let body = request.jsonObject else {
            throw AfterpayFailure.invalidObject("The request body must be a JSON object.", status: 400)
        }
        return body
    }

    // MARK: Checkouts

    private func createCheckout(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let body = try Self.object(request)
        let cents = try Self.amount(body.object("amount"), field: "amount")
        guard let email = body.object("consumer")?.string("email"), !email.isEmpty else {
            throw AfterpayFailure.invalidObject("consumer.email is required.")
        }
        let urls = try Self.cashAppRedirects(body)
        let now = Date()
        let checkout = AfterpayCheckout(
            token: CashAppRules.newCheckoutToken(), kind: .server, amount: cents, currency: CashAppRules.currency,
            redirectConfirmURL: urls.confirm, redirectCancelURL: urls.cancel,
            merchantReference: body.string("merchantReference"), createdAt: now,
            expiresAt: now.addingTimeInterval(CashAppRules.checkoutLifetime))
        store.withLock { $0.checkouts[checkout.token] = checkout }
        return EmulatorResponse.json(
            201,
            [
                "token": .string(checkout.token), "expires": .string(CashAppTime.nanoseconds(checkout.expiresAt)),
                "redirectCheckoutUrl": .string(baseURL() + CashAppRules.afterpayPrefix + "/checkout/" + checkout.token),
            ])
    }

    /// An Afterpay Money object `{amount: "50.00", currency: "USD"}` in cents: in USD — said first, since an amount is
    /// written by its currency's digits — more than zero, with exactly two decimals (`minDecimals` 0 lets the v3
    /// button's "10" through).
    static func amount(
        _ money: JSON.Object?, field: String, minDecimals: Int = 2, allowZero: Bool = false
    ) throws(AfterpayFailure) -> Int {
        guard money?.string("currency") == CashAppRules.currency else {
            throw AfterpayFailure.invalidObject("\(field).currency must be \(CashAppRules.currency).")
        }
        guard let text = money?.string("amount"),
            let cents = DecimalAmount.exactMinorUnits(text, minimumDecimals: minDecimals), cents > 0 || allowZero
        else {
            throw AfterpayFailure.invalidObject(
                "\(field).amount must be a decimal string like \"50.00\"\(allowZero ? "" : ", more than 0").")
        }
        return cents
    }

    /// DECISION: the emulator takes only Cash App Pay checkouts (`isCashAppPay: true`): it models no Afterpay
    /// consumer approval, so any other checkout could never be paid. Both redirect URLs are required for them.
    static func cashAppRedirects(_ body: JSON.Object) throws(AfterpayFailure) -> (confirm: String, cancel: String) {
        guard body["isCashAppPay"]?.boolValue == true else {
            throw AfterpayFailure.invalidObject(
                "isCashAppPay must be true: the emulator takes Cash App Pay checkouts only.")
        }
        let merchant = body.object("merchant")
        guard let confirm = merchant?.string("redirectConfirmUrl"), confirm.isAbsoluteURL,
            let cancel = merchant?.string("redirectCancelUrl"), cancel.isAbsoluteURL
        else {
            throw AfterpayFailure.invalidObject(
                "merchant.redirectConfirmUrl and merchant.redirectCancelUrl are required for Cash App Pay (absolute URLs)."
            )
        }
        return (confirm, cancel)
    }

    // MARK: Capture and auth

    /// Immediate capture or auth of a validated checkout, once per token: a repeat answers with the Payment it made.
    private func pay(_ request: EmulatorRequest, flow: AfterpayPayment.Flow) throws(AfterpayFailure) -> HTTPReply {
        let body = try Self.object(request)
        guard let token = body.string("token"), !token.isEmpty else {
            throw AfterpayFailure.invalidObject("token is required.")
        }
        let reference = body.string("merchantReference")
        let now = Date()
        return try store.transact { (s: inout CashAppStore.State) throws(AfterpayFailure) -> HTTPReply in
            if let id = s.paymentByToken[token], let existing = s.payments[id] {
                guard existing.flow == flow else {
                    throw AfterpayFailure(
                        412, "invalid_order_transaction_status",
                        flow == .capture
                            ? "The checkout \(token) was authorised (order \(id)): capture it with POST /v2/payments/\(id)/capture."
                            : "The checkout \(token) was already captured (order \(id)).")
                }
                return Self.reply(existing)
            }
            let checkout = try Self.validatedCheckout(s, token)
            let declined = checkout.amount == CashAppRules.paymentDeclinedAmount
            let state =
                switch (flow, declined) {
                case (.capture, false): "CAPTURED"
                case (.capture, true): "CAPTURE_DECLINED"
                case (.auth, false): "AUTH_APPROVED"
                case (.auth, true): "AUTH_DECLINED"
                }
            let id = String(s.nextOrderID)
            s.nextOrderID += 1
            let payment = AfterpayPayment(
                id: id, token: token, flow: flow, status: declined ? "DECLINED" : "APPROVED", paymentState: state,
                amount: checkout.amount, openToCapture: flow == .auth && !declined ? checkout.amount : 0,
                currency: checkout.currency,
                merchantReference: reference ?? checkout.merchantReference, created: now,
                events: [.init(id: CashAppRules.newErrorID(), created: now, type: state, amount: checkout.amount)])
            if !declined {
                // Under the store's lock, so two concurrent calls for one token cannot both charge.
                ledger.append(
                    provider: Self.provider, kind: flow == .capture ? .capture : .authorization, reference: id,
                    amount: checkout.amount, currency: checkout.currency)
            }
            s.payments[id] = payment
            s.paymentByToken[token] = id
            return Self.reply(payment)
        }
    }

    /// 201 with the Payment; DECISION (the protocol accepts either): a declined auth is 402 with the Payment body,
    /// a declined capture 201 with status DECLINED.
    private static func reply(_ payment: AfterpayPayment) -> HTTPReply {
        EmulatorResponse.json(payment.paymentState == "AUTH_DECLINED" ? 402 : 201, payment.json)
    }

    /// The checkout a capture or auth may pay: a server checkout that a validate-payment passed.
    private static func validatedCheckout(
        _ s: CashAppStore.State, _ token: String
    ) throws(AfterpayFailure) -> AfterpayCheckout {
        guard let checkout = s.checkouts[token] else {
            throw AfterpayFailure(402, "invalid_token", "The checkout token \(token) is not valid.")
        }
        guard checkout.kind == .server else {
            throw AfterpayFailure(
                402, "invalid_token", "\(token) is a v3 button token: it is paid with its virtual card, not captured.")
        }
        // DECISION: once validated, a checkout may be captured after its `expires` (that bounds the customer's part).
        guard checkout.validation != nil else {
            throw AfterpayFailure(
                402, "invalid_token",
                "The Cash App Pay checkout \(token) has not been validated: call validate-payment with the approved grant first."
            )
        }
        return checkout
    }

    // MARK: Deferred capture and reading

    /// Captures part or all of an auth. A repeat with the same requestId answers with what the first did.
    private func deferredCapture(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let id = request.params["orderId"] ?? ""
        let body = try Self.object(request)
        // Checked after the order's existence and state, so those errors come first.
        let parsed = Result { () throws(AfterpayFailure) -> Int in
            try Self.amount(body.object("amount"), field: "amount")
        }
        let requestID = body.string("requestId")
        let now = Date()
        return try store.transact { (s: inout CashAppStore.State) throws(AfterpayFailure) -> HTTPReply in
            guard var payment = s.payments[id] else {
                throw AfterpayFailure(404, "not_found", "No payment with order id \(id).")
            }
            if let requestID, let replay = payment.captureReplies[requestID] { return .respond(.json(201, replay)) }
            guard payment.flow == .auth,
                payment.paymentState == "AUTH_APPROVED" || payment.paymentState == "PARTIALLY_CAPTURED"
            else {
                throw AfterpayFailure(
                    412, "invalid_order_transaction_status",
                    "Order \(id) is \(payment.paymentState): only an AUTH_APPROVED or PARTIALLY_CAPTURED order can be captured."
                )
            }
            let cents = try parsed.get()
            guard cents <= payment.openToCapture else {
                throw AfterpayFailure(
                    422, "invalid_amount",
                    "The capture of \(DecimalAmount.text(cents)) is more than the \(DecimalAmount.text(payment.openToCapture)) open to capture."
                )
            }
            payment.openToCapture -= cents
            payment.paymentState = payment.openToCapture == 0 ? "CAPTURED" : "PARTIALLY_CAPTURED"
            payment.events.append(.init(id: CashAppRules.newErrorID(), created: now, type: "CAPTURED", amount: cents))
            if let reference = body.string("merchantReference") { payment.merchantReference = reference }
            ledger.append(
                provider: Self.provider, kind: .capture, reference: id, amount: cents, currency: payment.currency)
            let reply = EmulatorResponse.encode(payment.json)
            if let requestID { payment.captureReplies[requestID] = reply }
            s.payments[id] = payment
            return .respond(.json(201, reply))
        }
    }

    /// By order id, or by checkout token when the segment is `token:<token>`.
    private func payment(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let key = request.params["orderId"] ?? ""
        let payment = store.withLock { s -> AfterpayPayment? in
            let id = key.hasPrefix("token:") ? s.paymentByToken[String(key.dropFirst(6))] : key
            return id.flatMap { s.payments[$0] }
        }
        guard let payment else { throw AfterpayFailure(404, "not_found", "No payment for \(key).") }
        return EmulatorResponse.json(200, payment.json)
    }
}
