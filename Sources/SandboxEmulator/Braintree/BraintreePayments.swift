import Foundation
import GraphQL
import WireTypes

/// The money-moving mutations: `chargePaymentMethod` and `authorizePaymentMethod` (a nonce → a transaction, the magic
/// amounts deciding the processor's answer), `captureTransaction` and `reverseTransaction`. Each change of state and
/// its ledger entry happen in one store transaction, so a nonce pays once and an authorization is captured once
/// however many requests race.
enum BraintreePayments {
    private typealias Code = BraintreeRules.Code

    /// A charge (`capture`) or an authorization of `input.paymentMethodId` for `input.transaction.amount`.
    static func transact(_ info: ResolveInfo, capture: Bool) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let input = info.arguments["input"]
        let options = input?["transaction"]
        // DECISION: one error per call, checked in this order: amount, merchant account, orderId, then the nonce
        // (so a refused request never spends a nonce).
        guard let cents = BraintreeRules.cents(options?["amount"]) else {
            throw BraintreeFailure(
                "Amount is an invalid format.", legacyCode: Code.amountInvalid,
                inputPath: ["input", "transaction", "amount"])
        }
        if let account = options?["merchantAccountId"]?.stringValue, account != BraintreeRules.merchantAccountID {
            throw BraintreeFailure(
                "Merchant account ID is invalid.", legacyCode: Code.merchantAccountInvalid,
                inputPath: ["input", "transaction", "merchantAccountId"])
        }
        let orderID = options?["orderId"]?.stringValue
        if let orderID, orderID.count > BraintreeRules.orderIDMaxLength {
            throw BraintreeFailure(
                "Order ID is too long.", legacyCode: Code.orderIDTooLong,
                inputPath: ["input", "transaction", "orderId"])
        }
        let nonceID = input?["paymentMethodId"]?.stringValue ?? ""
        let outcome = BraintreeRules.outcome(forCents: cents)
        let now = Date()
        let transaction = try call.store.transact {
            (s: inout BraintreeStore.State) throws(BraintreeFailure) -> BraintreeStore.Transaction in
            let card = try consume(nonceID, in: &s, now: now)
            let t = newTransaction(
                &s, card: card, cents: cents, orderID: orderID, outcome: outcome, capture: capture, now: now)
            s.add(t)
            if outcome == .approved {
                call.ledger.append(
                    provider: "braintree", kind: capture ? .capture : .authorization, reference: t.id, amount: cents,
                    currency: BraintreeRules.currency.alpha)
            }
            return t
        }
        // DECISION (the contract's): a refused transaction exists (search finds it), yet the mutation answers null
        // with the processor's or the gateway's error.
        guard outcome == .approved else {
            throw BraintreeFailure(transaction.processorResponseText, legacyCode: transaction.processorResponseCode)
        }
        return [
            "clientMutationId": GraphQLValue(BraintreeResolvers.clientMutationID(info)),
            "transaction": BraintreeResolvers.transactionValue(transaction),
        ]
    }

    /// The card a payment method id stands for: a documented fake nonce (reusable), or a tokenized nonce, used up here.
    private static func consume(
        _ nonceID: String, in s: inout BraintreeStore.State, now: Date
    ) throws(BraintreeFailure) -> BraintreeRules.Card {
        if let fake = BraintreeRules.fakeNonces[nonceID] { return fake }
        guard var nonce = s.nonces[nonceID], !nonce.used, now < nonce.expiresAt else {
            throw BraintreeFailure(
                BraintreeRules.nonceUnknownMessage, legacyCode: Code.nonceUnknown,
                inputPath: ["input", "paymentMethodId"])
        }
        // The Apple Pay amount may differ from the charge (Braintree does not compare them); the currency may not.
        guard nonce.currencyCode == BraintreeRules.currency.numeric else {
            throw BraintreeFailure(
                "Merchant account does not support payment instrument: the Apple Pay token is in currency \(nonce.currencyCode) (ISO 4217), the merchant account in \(BraintreeRules.currency.alpha) (\(BraintreeRules.currency.numeric)).",
                legacyCode: Code.instrumentNotSupported, inputPath: ["input", "paymentMethodId"])
        }
        nonce.used = true
        s.nonces[nonceID] = nonce
        return nonce.card
    }

    private static func newTransaction(
        _ s: inout BraintreeStore.State, card: BraintreeRules.Card, cents: Int, orderID: String?,
        outcome: BraintreeRules.Outcome, capture: Bool, now: Date
    ) -> BraintreeStore.Transaction {
        let (status, code, text, rejection): (String, String, String, String?) =
            switch outcome {
            case .approved: (capture ? "SUBMITTED_FOR_SETTLEMENT" : "AUTHORIZED", "1000", "Approved", nil)
            case .processorDeclined(let code):
                ("PROCESSOR_DECLINED", String(code), BraintreeRules.processorResponseText(code), nil)
            case .failed: ("FAILED", "3000", BraintreeRules.failedMessage, nil)
            case .gatewayRejected:
                ("GATEWAY_REJECTED", "5001", BraintreeRules.gatewayRejectedMessage, "APPLICATION_INCOMPLETE")
            }
        // A charge is an authorization submitted for settlement at once: both show in the history.
        var history = [
            BraintreeStore.Event(status: outcome == .approved ? "AUTHORIZED" : status, at: now, amount: cents)
        ]
        if status == "SUBMITTED_FOR_SETTLEMENT" {
            history.append(BraintreeStore.Event(status: status, at: now, amount: cents))
        }
        defer { s.nextSequence += 1 }
        return BraintreeStore.Transaction(
            legacyID: s.newLegacyID(), sequence: s.nextSequence, status: status, amount: cents, orderID: orderID,
            merchantAccountID: BraintreeRules.merchantAccountID, createdAt: now, card: card, history: history,
            processorResponseCode: code, processorResponseText: text, gatewayRejectionReason: rejection)
    }

    /// `captureTransaction`: AUTHORIZED → SUBMITTED_FOR_SETTLEMENT for the authorized amount or less.
    static func capture(_ info: ResolveInfo) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let input = info.arguments["input"]
        let id = input?["transactionId"]?.stringValue ?? ""
        // `transaction.amount`, or the deprecated top-level `amount` legacy clients send.
        let given: (value: GraphQLValue, path: [String])? =
            nonNull(input?["transaction"]?["amount"]).map { ($0, ["input", "transaction", "amount"]) }
            ?? nonNull(input?["amount"]).map { ($0, ["input", "amount"]) }
        var requested: Int?
        if let given {
            guard let cents = BraintreeRules.cents(given.value) else {
                throw BraintreeFailure(
                    "Amount is an invalid format.", legacyCode: Code.amountInvalid, inputPath: given.path)
            }
            requested = cents
        }
        let now = Date()
        let transaction = try call.store.transact {
            (s: inout BraintreeStore.State) throws(BraintreeFailure) -> BraintreeStore.Transaction in
            guard var t = s.transaction(id) else { throw .notFound }
            guard t.status == "AUTHORIZED" else {
                throw BraintreeFailure(
                    BraintreeRules.cannotSubmitMessage, legacyCode: Code.cannotSubmitForSettlement,
                    inputPath: ["input", "transactionId"])
            }
            let amount = requested ?? t.amount
            guard amount <= t.amount else {
                throw BraintreeFailure(
                    "Settlement amount is too large: \(DecimalAmount.text(amount)) is more than the \(DecimalAmount.text(t.amount)) authorized.",
                    legacyCode: Code.settlementAmountTooLarge,
                    inputPath: given?.path ?? ["input", "transaction", "amount"])
            }
            t.status = "SUBMITTED_FOR_SETTLEMENT"
            t.amount = amount
            t.history.append(BraintreeStore.Event(status: t.status, at: now, amount: amount))
            s.update(t)
            call.ledger.append(
                provider: "braintree", kind: .capture, reference: t.id, amount: amount,
                currency: BraintreeRules.currency.alpha)
            return t
        }
        return [
            "clientMutationId": GraphQLValue(BraintreeResolvers.clientMutationID(info)),
            "transaction": BraintreeResolvers.transactionValue(transaction),
        ]
    }

    /// `reverseTransaction`: an AUTHORIZED or SUBMITTED_FOR_SETTLEMENT transaction is voided (its reversal is the
    /// transaction itself). DECISION: the emulator never settles on its own, so a reversal is never a Refund.
    static func reverse(_ info: ResolveInfo) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let id = info.arguments["input"]?["transactionId"]?.stringValue ?? ""
        let now = Date()
        let transaction = try call.store.transact {
            (s: inout BraintreeStore.State) throws(BraintreeFailure) -> BraintreeStore.Transaction in
            guard var t = s.transaction(id) else { throw .notFound }
            guard t.status == "AUTHORIZED" || t.status == "SUBMITTED_FOR_SETTLEMENT" else {
                throw BraintreeFailure(
                    BraintreeRules.cannotVoidMessage, legacyCode: Code.cannotBeVoided,
                    inputPath: ["input", "transactionId"])
            }
            t.status = "VOIDED"
            t.history.append(BraintreeStore.Event(status: t.status, at: now, amount: t.amount))
            s.update(t)
            call.ledger.append(
                provider: "braintree", kind: .void, reference: t.id, amount: t.amount,
                currency: BraintreeRules.currency.alpha)
            return t
        }
        return [
            "clientMutationId": GraphQLValue(BraintreeResolvers.clientMutationID(info)),
            "reversal": BraintreeResolvers.transactionValue(transaction),
        ]
    }

    private static func nonNull(_ value: GraphQLValue?) -> GraphQLValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }
}
