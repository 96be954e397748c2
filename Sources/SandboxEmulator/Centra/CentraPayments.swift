import Foundation
import GraphQL

/// `paymentInstructions` and `paymentResult`: the express checkout's shipping-contact step (initiate only: totals and
/// shipping methods for a partial address) and its final step (addresses, Adyen's Apple Pay state data, an action),
/// then the 3DS return. The Apple Pay token is verified and decrypted by the same verifier Bahn's emulator uses.
enum CentraPayments {
    static func paymentInstructions(_ info: ResolveInfo) throws -> GraphQLValue {
        let call = try CentraCall.from(info)
        let input = info.arguments["input"] ?? .null
        var failure: CentraFailure?
        var action: GraphQLValue?
        do { action = try instruct(input, call) } catch { failure = error }
        return [
            "action": action ?? .null, "userErrors": try CentraResolvers.userErrors(failure),
            "selection": CentraResolvers.selection(try call.session),
        ]
    }

    private static func members(_ value: GraphQLValue?) -> [(String, GraphQLValue)] {
        (value?.objectValue ?? []).filter { !$0.1.isNull }
    }

    private static func text(_ value: GraphQLValue?) -> String { value?.stringValue ?? "" }

    private static func instruct(_ input: GraphQLValue, _ call: CentraCall) throws(CentraFailure) -> GraphQLValue? {
        let shipping = members(input["shippingAddress"])
        let country = text(input["shippingAddress"]?["country"]).uppercased()
        guard CentraRules.shipsTo(country) else {
            throw .userError(
                "The store does not ship to \(country.isEmpty ? "an empty country" : "'\(country)'")",
                path: ["input", "shippingAddress", "country"])
        }
        // The address as the sheet revealed it so far; the shipping method falls back to one that ships there.
        try call.store.update(call.sessionID) { (s: inout CentraStore.Session) throws(CentraFailure) in
            s.shippingAddress = shipping.map { $0.0 == "country" ? ($0.0, .string(country)) : $0 }
            let billing = members(input["separateBillingAddress"])
            s.billingAddress = billing.isEmpty ? nil : billing
            let current = CentraRules.shippingMethods.first { $0.id == s.shippingMethod }
            if current?.price(for: country) == nil,
                let first = CentraRules.shippingMethods.first(where: { $0.price(for: country) != nil })
            {
                s.shippingMethod = first.id
            }
        }
        if input["paymentInitiateOnly"]?.boolValue == true { return nil }

        // The final call: everything the order needs.
        guard input["termsAndConditions"]?.boolValue == true else {
            throw .userError("Terms and conditions must be accepted", path: ["input", "termsAndConditions"])
        }
        for page in ["paymentReturnPage", "paymentFailedPage"]
        where !(text(input[page]).hasPrefix("http://") || text(input[page]).hasPrefix("https://")) {
            throw .userError("\(page) must be an absolute http(s) URL", path: ["input", page])
        }
        for field in ["address1", "city", "zipCode", "firstName", "lastName"]
        where text(input["shippingAddress"]?[field]).isEmpty {
            throw .userError("The shipping address needs \(field)", path: ["input", "shippingAddress", field])
        }
        guard let session = call.store.session(call.sessionID) else { throw .unauthorized }
        guard !session.lines.isEmpty else { throw .userError("The selection is empty", path: ["selection"]) }
        if call.store.ingrid && !session.ingridHandled {
            throw .userError(CentraRules.ingridUserError, path: ["input", "shippingMethod"])
        }
        let totals = CentraTotals(session)
        guard totals.shipping != nil else {
            throw .userError("No shipping method ships to \(country)", path: ["input", "shippingMethod"])
        }

        // Adyen's Apple Pay state data: {"paymentMethod": {"type": "applepay", "applePayToken": <base64>}, "express":
        // true}.
        let fields = input["paymentMethodSpecificFields"]
        guard text(fields?["paymentMethod"]?["type"]) == "applepay",
            let encoded = fields?["paymentMethod"]?["applePayToken"]?.stringValue, !encoded.isEmpty
        else {
            throw .userError(
                "paymentMethodSpecificFields needs Adyen's Apple Pay state data: {paymentMethod: {type: \"applepay\", applePayToken: <base64 token>}}",
                path: ["input", "paymentMethodSpecificFields", "paymentMethod"])
        }
        guard let bytes = Data(base64Encoded: encoded) else {
            throw .userError(
                "applePayToken is not base64",
                path: ["input", "paymentMethodSpecificFields", "paymentMethod", "applePayToken"])
        }
        let token: DecryptedPaymentToken
        do { token = try call.verifier.open(bytes) } catch {
            throw .userError(
                "Payment refused: \(error)",
                path: ["input", "paymentMethodSpecificFields", "paymentMethod", "applePayToken"])
        }
        guard token.amount == totals.grandTotal, token.currencyCode == CentraRules.currency.isoNumber else {
            throw .userError(
                "Payment refused: the token is for \(token.amount) in \(token.currencyCode), the selection totals \(totals.grandTotal) in \(CentraRules.currency.isoNumber)",
                path: ["input", "paymentMethodSpecificFields", "paymentMethod", "applePayToken"])
        }
        guard call.store.spend(transaction: token.transactionId) else {
            throw .userError(
                "Payment refused: this Apple Pay token was already used",
                path: ["input", "paymentMethodSpecificFields", "paymentMethod", "applePayToken"])
        }

        let scenario =
            session.lines.compactMap { CentraRules.product($0.item)?.scenario }.max { rank($0) < rank($1) } ?? .success
        let returnPage = text(input["paymentReturnPage"])
        let failedPage = text(input["paymentFailedPage"])
        switch scenario {
        case .declined:
            throw .userError(
                "Payment refused: Refused (the emulator's declined product)",
                path: ["input", "paymentMethodSpecificFields"])
        case .success:
            let order = try call.store.placeOrder(call.sessionID, expectedTotal: totals.grandTotal)
            call.ledger.append(
                provider: "centra", kind: .authorization, reference: order.id, amount: totals.grandTotal,
                currency: CentraRules.currency.isoNumber)
            return [
                "__typename": "SuccessPaymentAction", "action": "SUCCESS", "order": CentraResolvers.order(order),
                "formFields": nil,
            ]
        case .redirect, .native3DS, .form:
            let reference = CentraRules.newID("3ds_")
            let payment = CentraStore.PendingPayment(
                reference: reference, scenario: scenario, amount: totals.grandTotal,
                result: CentraRules.newID("res_"), paymentData: CentraRules.newID("pd_"),
                returnPage: returnPage, failedPage: failedPage, sessionID: call.sessionID)
            call.store.addPending(payment)
            if scenario == .redirect {
                return [
                    "__typename": "RedirectPaymentAction", "action": "REDIRECT",
                    "url": .string(call.baseURL + CentraChallenge.pagePath(reference)),
                ]
            }
            if scenario == .form {
                // A bank's page posting back at once: the shop's return page gets MD (the reference) and PaRes.
                let html = """
                    <!doctype html><meta charset=utf-8><title>3DS</title>
                    <form id="threeds" method="post" action="\(returnPage)">
                    <input type="hidden" name="MD" value="\(reference)">
                    <input type="hidden" name="PaRes" value="\(payment.result)">
                    <button type="submit">Continue</button></form>
                    <script>document.getElementById("threeds").submit()</script>
                    """
                return [
                    "__typename": "FormPaymentAction", "action": "FORM", "formType": "adyen-3ds1",
                    "html": .string(html),
                    "formFields": ["MD": .string(reference), "PaRes": .string(payment.result)], "expressHtml": nil,
                ]
            }
            let challenge: GraphQLValue = [
                "threeDSServerTransID": .string(reference),
                "acsURL": .string(call.baseURL + CentraChallenge.completePath(reference)),
            ]
            let adyenAction: GraphQLValue = [
                "type": "threeDS2", "subtype": "challenge", "paymentMethodType": "scheme",
                "paymentData": .string(payment.paymentData),
                "token": .string(challenge.jsonData.base64EncodedString()),
            ]
            // formFields is the Adyen action itself, as docs/protocols/centra.md says.
            return [
                "__typename": "JavascriptPaymentAction", "action": "JAVASCRIPT", "formType": "adyen",
                "script": "", "formFields": adyenAction,
            ]
        }
    }

    private static func rank(_ s: CentraRules.PaymentScenario) -> Int {
        switch s {
        case .success: 0
        case .redirect: 1
        case .form: 2
        case .native3DS: 3
        case .declined: 4
        }
    }

    /// `paymentResult(paymentMethodFields:)`: the 3DS step's result completes the waiting payment, once; the same
    /// result again answers with the order already placed (never a second one).
    static func paymentResult(_ info: ResolveInfo) throws -> GraphQLValue {
        let call = try CentraCall.from(info)
        let fields = info.arguments["paymentMethodFields"] ?? .null
        var failure: CentraFailure?
        var placed: CentraStore.Order?
        do { placed = try complete(fields, call) } catch { failure = error }
        let selection = CentraResolvers.selection(try call.session)
        guard let placed else {
            return [
                "__typename": "PaymentResultFailedPayload", "type": "FAILED", "selection": selection,
                "userErrors": try CentraResolvers.userErrors(failure),
            ]
        }
        return [
            "__typename": "PaymentResultSuccessPayload", "type": "SUCCESS", "order": CentraResolvers.order(placed),
            "selection": selection, "userErrors": [],
        ]
    }

    private static func complete(_ fields: GraphQLValue, _ call: CentraCall) throws(CentraFailure) -> CentraStore.Order
    {
        let redirectResult = fields["redirectResult"]?.stringValue
        let details = fields["details"]?["threeDSResult"]?.stringValue
        let paymentData = fields["paymentData"]?.stringValue
        let md = fields["MD"]?.stringValue
        let paRes = fields["PaRes"]?.stringValue
        guard redirectResult != nil || details != nil || (md != nil && paRes != nil) else {
            throw .userError(
                "paymentMethodFields needs redirectResult (after a redirect), details.threeDSResult (with paymentData), or MD and PaRes (after a form)",
                path: ["paymentMethodFields"])
        }
        guard
            let payment = call.store.pendingPayment(matching: { p in
                guard p.sessionID == call.sessionID else { return false }
                switch p.scenario {
                case .redirect: return redirectResult == p.result
                case .native3DS: return details == p.result && (paymentData == nil || paymentData == p.paymentData)
                case .form: return md == p.reference && paRes == p.result
                case .success, .declined: return false
                }
            })
        else {
            throw .userError("No payment in this session is waiting for that 3DS result", path: ["paymentMethodFields"])
        }
        return try call.store.completePending(payment.reference) { () throws(CentraFailure) -> CentraStore.Order in
            let order = try call.store.placeOrder(call.sessionID, expectedTotal: payment.amount)
            call.ledger.append(
                provider: "centra", kind: .authorization, reference: order.id, amount: payment.amount,
                currency: CentraRules.currency.isoNumber)
            return order
        }
    }
}
