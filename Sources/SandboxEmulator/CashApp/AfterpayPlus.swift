import Foundation
import LoopbackHTTP
import WireTypes

/// Afterpay's api-plus host (under `/afterpay-plus`), which the SDK calls without credentials: sign a checkout for
/// Pay Kit, validate the grant Cash App gave, and the v3 button (create, then confirm for a one-time virtual card).
struct AfterpayPlus: Sendable {
    let store: CashAppStore
    let baseURL: @Sendable () -> String

    func routes() -> [Route] {
        let p = CashAppRules.plusPrefix
        return [
            Route("POST", p + "/v2/payments/sign-payment") { request in run(request, sign) },
            Route("POST", p + "/v2/payments/validate-payment") { request in run(request, validate) },
            Route("POST", p + "/v3/button") { request in run(request, createButton) },
            Route("POST", p + "/v3/button/confirm") { request in run(request, confirm) },
        ]
    }

    private func run(
        _ request: EmulatorRequest, _ body: (EmulatorRequest) throws(AfterpayFailure) -> HTTPReply
    ) -> HTTPReply {
        do throws(AfterpayFailure) { return try body(request) } catch { return error.reply }
    }

    // MARK: sign-payment

    /// A JWT for a live checkout (v2 or v3): what Pay Kit's customer request is made from.
    private func sign(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let body = try AfterpayEmulator.object(request)
        let token = body.string("token") ?? ""
        let now = Date()
        guard let checkout = store.withLock({ $0.checkouts[token] }), now < checkout.expiresAt else {
            throw AfterpayFailure(400, "invalid_token", "The token \(token) is not a live checkout or button token.")
        }
        let iat = Int(now.timeIntervalSince1970)
        let jwt = CashAppJWT.sign([
            "externalMerchantId": .string(TestCredentials.afterpayExternalMerchantID), "token": .string(token),
            "amount": [
                "amount": .string(DecimalAmount.text(checkout.amount)), "currency": .string(checkout.currency),
                "symbol": .string(CashAppRules.currencySymbol),
            ],
            "redirectUrl": .string(checkout.redirectConfirmURL), "iat": JSON(iat),
            "exp": JSON(iat + CashAppRules.jwtTTL),
        ])
        return EmulatorResponse.json(
            200,
            [
                "jwtToken": .string(jwt), "redirectUrl": .string(checkout.redirectConfirmURL),
                "externalBrandId": .string(TestCredentials.afterpayExternalBrandID),
            ])
    }

    // MARK: validate-payment

    private func validate(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let body = try AfterpayEmulator.object(request)
        guard let jwt = body.string("jwt"), let customerID = body.string("externalCustomerId"),
            let grantID = body.string("externalGrantId")
        else {
            throw AfterpayFailure.invalidObject(
                "jwt, externalCustomerId and externalGrantId are required.", status: 400)
        }
        let now = Date()
        let payload = try CashAppJWT.verify(jwt, now: now)
        let check = store.withLock {
            Self.check(&$0, payload: payload, customerID: customerID, grantID: grantID, now: now)
        }
        return EmulatorResponse.json(
            200,
            [
                "status": check.passed ? "SUCCESS" : "FAILED", "cashAppTag": .string(check.cashtag),
                "callbackBaseUrl": .string(baseURL() + CashAppRules.plusPrefix),
            ])
    }

    /// Whether the grant pays the checkout the JWT names: a request APPROVED with that grant, ACTIVE, of that customer,
    /// for the JWT's amount, and not already used for another checkout. A pass marks the checkout validated (what
    /// capture, auth and confirm need) and binds the grant to it. Caller holds the lock.
    static func check(
        _ s: inout CashAppStore.State, payload: JSON.Object, customerID: String, grantID: String,
        now: Date
    ) -> (passed: Bool, cashtag: String) {
        let token = payload.string("token") ?? ""
        let cents = payload.object("amount")?.string("amount").flatMap {
            DecimalAmount.exactMinorUnits($0, minimumDecimals: 2)
        }
        guard let requestID = s.requestByGrant[grantID], let request = s.requests[requestID] else { return (false, "") }
        let cashtag = request.customerID == nil ? "" : CashAppRules.cashtag
        guard var checkout = s.checkouts[token], cents == checkout.amount,
            checkout.amount != CashAppRules.validationFailsAmount,
            request.status == .approved,
            let grant = request.grants.first(where: { $0.id == grantID }), grant.status(at: now) == "ACTIVE",
            grant.customerID == customerID, grant.action.amount == cents, grant.action.currency == checkout.currency,
            (s.tokenByGrant[grantID] ?? token) == token
        else { return (false, cashtag) }
        s.tokenByGrant[grantID] = token
        checkout.validation = .init(grantID: grantID, customerID: customerID)
        s.checkouts[token] = checkout
        return (true, cashtag)
    }

    // MARK: v3 button

    private func createButton(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        guard let sdk = request.headers["X-Afterpay-SDK"], !sdk.isEmpty else {
            throw AfterpayFailure.invalidObject("The X-Afterpay-SDK header is required.", status: 400)
        }
        let body = try AfterpayEmulator.object(request)
        guard body.string("shopDirectoryId") == TestCredentials.afterpayShopDirectoryID,
            body.string("shopDirectoryMerchantId") == TestCredentials.afterpayShopMerchantID
        else {
            throw AfterpayFailure(401, "unauthorized", "Unknown shopDirectoryId or shopDirectoryMerchantId.")
        }
        // DECISION: `amount` is the total charged; shipping and tax, when sent, must be valid Money but add nothing.
        let cents = try AfterpayEmulator.amount(body.object("amount"), field: "amount", minDecimals: 0)
        for field in ["shippingAmount", "taxAmount"] where body[field] != nil {
            _ = try AfterpayEmulator.amount(body.object(field), field: field, minDecimals: 0, allowZero: true)
        }
        let urls = try AfterpayEmulator.cashAppRedirects(body)
        let now = Date()
        let button = AfterpayCheckout(
            token: CashAppRules.newButtonToken(), kind: .button, amount: cents, currency: CashAppRules.currency,
            redirectConfirmURL: urls.confirm, redirectCancelURL: urls.cancel, merchantReference: nil,
            createdAt: now, expiresAt: now.addingTimeInterval(CashAppRules.checkoutLifetime),
            singleUseCardToken: UUID().uuidString.lowercased())
        store.withLock { $0.checkouts[button.token] = button }
        return EmulatorResponse.json(
            200,
            [
                "token": .string(button.token),
                "confirmMustBeCalledBefore": .string(CashAppTime.nanoseconds(button.expiresAt)),
                "redirectCheckoutUrl": .string(baseURL() + CashAppRules.afterpayPrefix + "/checkout/" + button.token),
                "singleUseCardToken": .string(button.singleUseCardToken ?? ""),
            ])
    }

    /// The grant checked as validate-payment does, then the one-time card. DECISION: a repeat (same token and
    /// singleUseCardToken) answers with the first card without checking the JWT and grant again, so a retry after a
    /// lost answer cannot fail because the JWT or the grant has expired meanwhile.
    private func confirm(_ request: EmulatorRequest) throws(AfterpayFailure) -> HTTPReply {
        let body = try AfterpayEmulator.object(request)
        let token = body.string("token") ?? ""
        let cardToken = body.string("singleUseCardToken") ?? ""
        let psp = body.object("cashAppPspInfo")
        func earlier(_ s: CashAppStore.State) throws(AfterpayFailure) -> Data? {
            guard let button = s.checkouts[token], button.kind == .button else {
                throw AfterpayFailure(400, "invalid_token", "The token \(token) is not a v3 button token.")
            }
            guard button.singleUseCardToken == cardToken else {
                throw AfterpayFailure(400, "invalid_token", "singleUseCardToken does not belong to this button.")
            }
            return button.confirmation
        }
        if let card = try store.transact({ (s: inout CashAppStore.State) throws(AfterpayFailure) in try earlier(s) }) {
            return .respond(.json(200, card))
        }
        guard let jwt = psp?.string("jwt"), let customerID = psp?.string("externalCustomerId"),
            let grantID = psp?.string("externalGrantId")
        else {
            throw AfterpayFailure.invalidObject(
                "cashAppPspInfo needs jwt, externalCustomerId and externalGrantId.", status: 400)
        }
        let now = Date()
        let payload = try CashAppJWT.verify(jwt, now: now)
        guard payload.string("token") == token else {
            throw AfterpayFailure(400, "invalid_jwt", "The JWT was signed for another token.")
        }
        return try store.transact { (s: inout CashAppStore.State) throws(AfterpayFailure) -> HTTPReply in
            // Looked at again under this lock: a concurrent confirm may have finished meanwhile.
            if let card = try earlier(s) { return .respond(.json(200, card)) }
            guard let button = s.checkouts[token], now < button.expiresAt else {
                throw AfterpayFailure(
                    400, "invalid_token", "confirm must be called before the button's confirmMustBeCalledBefore.")
            }
            guard Self.check(&s, payload: payload, customerID: customerID, grantID: grantID, now: now).passed else {
                throw AfterpayFailure(
                    402, "payment_declined",
                    "Cash App Pay did not approve this payment (the grant does not pay this button).")
            }
            let card = EmulatorResponse.encode([
                "paymentDetails": ["virtualCard": JSON(CashAppRules.virtualCard)],
                "cardValidUntil": .string(CashAppTime.nanoseconds(now.addingTimeInterval(CashAppRules.cardLifetime))),
            ])
            s.checkouts[token]?.confirmation = card
            return .respond(.json(200, card))
        }
    }
}
