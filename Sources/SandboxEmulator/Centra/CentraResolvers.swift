import Foundation
import GraphQL

/// One Storefront API call as the resolvers see it: the session it runs in and what the request carried.
final class CentraCall: @unchecked Sendable {
    let store: CentraStore
    let sessionID: String
    let sharedSecretValid: Bool
    let baseURL: String
    let ledger: Ledger
    let verifier: ApplePayTokenVerifier

    init(store: CentraStore, sessionID: String, sharedSecretValid: Bool, baseURL: String, ledger: Ledger, verifier: ApplePayTokenVerifier) {
        self.store = store
        self.sessionID = sessionID
        self.sharedSecretValid = sharedSecretValid
        self.baseURL = baseURL
        self.ledger = ledger
        self.verifier = verifier
    }

    static func from(_ info: ResolveInfo) throws -> CentraCall {
        guard let call = info.context as? CentraCall else { throw GraphQLError("internal: no Centra call context") }
        return call
    }

    var session: CentraStore.Session {
        get throws { guard let s = store.session(sessionID) else { throw GraphQLError("Unauthorized") }; return s }
    }
}

/// The Storefront API's fields the express checkout uses, resolved against the store. Values are built as
/// dictionaries; the GraphQL engine projects exactly what was selected. Payloads carry their `__typename` where the
/// schema's type is an interface.
enum CentraResolvers {
    static func make() -> Resolvers {
        var r = Resolvers()
        r["Query", "selection"] = { _, info in selection(try CentraCall.from(info).session) }
        r["Query", "order"] = { _, info in try CentraCall.from(info).session.orders.last.map(order) }
        r["Query", "expressCheckoutWidgets"] = { _, info in try expressCheckoutWidgets(info) }
        r["Mutation", "addItem"] = { _, info in try addItem(info) }
        r["Mutation", "updateLine"] = { _, info in
            try selectionMutation(info) { (s: inout CentraStore.Session) throws(CentraFailure) in
                let id = info.arguments["lineId"]?.stringValue ?? ""
                guard let index = s.lines.firstIndex(where: { $0.id == id }) else { throw .userError("Line not found", path: ["lineId"]) }
                guard let quantity = info.arguments["quantity"]?.intValue else { return }
                guard quantity >= 0 else { throw .userError("Quantity cannot be negative", path: ["quantity"]) }
                if quantity == 0 { s.lines.remove(at: index) } else { s.lines[index].quantity = quantity }
            }
        }
        r["Mutation", "deleteLine"] = { _, info in
            try selectionMutation(info) { (s: inout CentraStore.Session) throws(CentraFailure) in
                let id = info.arguments["lineId"]?.stringValue ?? ""
                guard let index = s.lines.firstIndex(where: { $0.id == id }) else { throw .userError("Line not found", path: ["lineId"]) }
                s.lines.remove(at: index)
            }
        }
        r["Mutation", "setShippingMethod"] = { _, info in
            try selectionMutation(info) { (s: inout CentraStore.Session) throws(CentraFailure) in
                let id = info.arguments["id"]?.intValue ?? -1
                guard let method = CentraRules.shippingMethods.first(where: { $0.id == id }) else {
                    throw .userError("Shipping method \(id) does not exist", path: ["id"])
                }
                guard method.price(for: s.shippingCountry) != nil else {
                    throw .userError("Shipping method \(method.name) does not ship to \(s.shippingCountry ?? "the address")", path: ["id"])
                }
                s.shippingMethod = id
            }
        }
        r["Mutation", "handleWidgetEvent"] = { _, info in
            try selectionMutation(info) { (s: inout CentraStore.Session) throws(CentraFailure) in
                guard info.arguments["payload"]?["expressCheckout"]?.boolValue == true else {
                    throw .userError("Unsupported widget event", path: ["payload"])
                }
                s.ingridHandled = true
            }
        }
        r["Mutation", "paymentInstructions"] = { _, info in try CentraPayments.paymentInstructions(info) }
        r["Mutation", "paymentResult"] = { _, info in try CentraPayments.paymentResult(info) }
        return r
    }

    // MARK: Payloads

    static func userErrors(_ failure: CentraFailure?) throws -> [[String: Any]] {
        switch failure {
        case nil: return []
        case .userError(let message, let path)?: return [["__typename": "UserErrorBase", "message": message, "path": path]]
        case .unauthorized?: throw GraphQLError("Unauthorized")
        }
    }

    /// A `SelectionMutationPayload`: the change applied (or its userError), and the selection as it now is.
    static func selectionMutation(_ info: ResolveInfo, _ change: (inout CentraStore.Session) throws(CentraFailure) -> Void) throws -> [String: Any] {
        let call = try CentraCall.from(info)
        var failure: CentraFailure?
        do { try call.store.update(call.sessionID, change) } catch { failure = error }
        return ["__typename": "GenericSelectionMutationPayload", "userErrors": try userErrors(failure),
                "selection": selection(try call.session)]
    }

    static func addItem(_ info: ResolveInfo) throws -> [String: Any] {
        let call = try CentraCall.from(info)
        let item = info.arguments["item"]?.stringValue ?? ""
        let quantity = info.arguments["quantity"]?.intValue ?? 1
        var failure: CentraFailure?
        var added: CentraStore.Line?
        do {
            added = try call.store.update(call.sessionID) { (s: inout CentraStore.Session) throws(CentraFailure) -> CentraStore.Line in
                guard CentraRules.product(item) != nil else { throw .userError("Item \(item) does not exist", path: ["item"]) }
                guard quantity > 0 else { throw .userError("Quantity must be at least 1", path: ["quantity"]) }
                let line = CentraStore.Line(id: CentraRules.newID("line_"), item: item, quantity: quantity)
                s.lines.append(line)
                return line
            }
        } catch { failure = error }
        return ["__typename": "AddItemPayload", "userErrors": try userErrors(failure), "line": added.map(line) as Any,
                "selection": selection(try call.session)]
    }

    static func expressCheckoutWidgets(_ info: ResolveInfo) throws -> [String: Any] {
        let call = try CentraCall.from(info)
        // DECISION: a missing or wrong shared secret is a top-level error on this field (the data Centra would hide).
        guard call.sharedSecretValid else {
            throw GraphQLError("Access denied: expressCheckoutWidgets needs a valid \(CentraRules.sharedSecretHeader) header")
        }
        let session = try call.session
        let plugins = info.arguments["plugins"]?.listValue ?? []
        var lists: [[String: Any]] = []
        for plugin in plugins {
            let type = plugin["type"]?.stringValue ?? ""
            guard type == "express_checkout_adyen" else {
                lists.append(["name": type, "widgets": [["id": nil as String? as Any, "name": type, "contents": nil as String? as Any,
                                                         "error": "The store has no \(type) plugin"]]])
                continue
            }
            let amount = plugin["additionalData"]?["amount"]?.intValue ?? CentraTotals(session).grandTotal
            let country = session.shippingCountry ?? CentraRules.country.code
            let contents: [String: Any] = [
                "clientKey": CentraRules.adyenClientKey,
                "context": CentraRules.adyenContext,
                "country": country,
                "languageCode": CentraRules.languageCode,
                "paymentAmount": ["amount": amount, "currency": CentraRules.currency.code],
                "paymentMethodsResponse": ["paymentMethods": [
                    ["type": "applepay", "name": "Apple Pay",
                     "configuration": ["merchantId": TestCredentials.merchantIdentifier, "merchantName": CentraRules.adyenMerchantAccount]],
                    ["type": "scheme", "name": "Cards", "brands": ["visa", "mc", "amex"]],
                ]],
                "shippingMethods": CentraRules.shippingMethods.compactMap { m -> [String: Any]? in
                    guard let price = m.price(for: country) else { return nil }
                    return ["id": m.id, "name": m.name, "price": Money.value(price)]
                },
            ]
            let text = String(decoding: EmulatorResponse.encode(contents), as: UTF8.self)
            lists.append(["name": type, "widgets": [["id": "adyen-express", "name": type, "contents": text, "error": nil as String? as Any]]])
        }
        return ["__typename": "ExpressCheckoutWidgetsPayload", "list": lists, "userErrors": [] as [Any]]
    }

    // MARK: Values

    static func selection(_ s: CentraStore.Session) -> [String: Any] {
        let totals = CentraTotals(s)
        let methods: [[String: Any]] = CentraRules.shippingMethods.compactMap { m in
            guard let price = m.price(for: s.shippingCountry) else { return nil }
            return ["id": m.id, "name": m.name, "price": Money.value(price), "selected": m.id == s.shippingMethod, "comment": nil as String? as Any]
        }
        let chosen = methods.first { ($0["id"] as? Int) == s.shippingMethod }
        let checkout: [String: Any] = [
            "shippingAddress": address(s.shippingAddress),
            "separateBillingAddress": s.billingAddress.map(address) as Any,
            "hasSeparateBillingAddress": s.billingAddress != nil,
            "shippingMethods": methods,
            "shippingMethod": chosen as Any,
            "paymentMethods": [paymentMethod],
            "paymentMethod": paymentMethod,
            "totals": totalRows(items: totals.items, shipping: totals.shipping ?? 0),
            "deliveryGroups": [] as [Any],
            "checkoutScript": nil as String? as Any,
            "widgets": nil as [Any]? as Any,
        ]
        return ["id": s.selectionID, "lines": s.lines.map(line), "grandTotal": Money.value(totals.grandTotal),
                "checkout": checkout, "comment": nil as String? as Any, "discounts": [] as [Any], "taxExempt": false,
                "usedFallbackTax": false, "externalGiftCardAvailable": false, "attributes": [] as [Any], "availableAttributes": [] as [Any]]
    }

    static var paymentMethod: [String: Any] { [
        "id": 1, "name": "Adyen Drop-In", "kind": "ADYEN_DROPIN", "uri": "adyen-drop-in", "active": true,
        "initiateOnlySupported": true, "recurringSupported": false, "addressAfterPayment": false, "handlingCost": Money.value(0),
    ] }

    static func totalRows(items: Int, shipping: Int) -> [[String: Any]] {
        [["__typename": "SelectionTotalRowBase", "type": "ITEMS_SUBTOTAL", "price": Money.value(items)],
         ["__typename": "SelectionTotalRowBase", "type": "SHIPPING", "price": Money.value(shipping)],
         ["__typename": "SelectionTotalRowBase", "type": "GRAND_TOTAL", "price": Money.value(items + shipping)]]
    }

    static func line(_ l: CentraStore.Line) -> [String: Any] {
        let product = CentraRules.product(l.item)
        let unit = product?.price ?? 0
        let value: FieldFunction = { _ in Money.value(unit * l.quantity) }
        let unitValue: FieldFunction = { _ in Money.value(unit) }
        let zero: FieldFunction = { _ in Money.value(0) }
        return ["__typename": "ProductLine", "id": l.id, "quantity": l.quantity, "name": product?.name ?? l.item,
                "size": product?.size ?? "", "productNumber": String(product?.displayItemID ?? 0), "productVariantName": product?.size ?? "",
                "comment": "", "hasDiscount": false, "discountPercent": 0.0, "taxPercent": 25.0,
                "item": ["id": l.item, "name": product?.size ?? "", "sku": l.item, "GTIN": "", "preorder": false, "productSizeId": 1,
                         "horizontalLabelIndex": 0, "verticalLabelIndex": 0],
                "displayItem": ["id": product?.displayItemID ?? 0, "name": product?.name ?? l.item, "productNumber": String(product?.displayItemID ?? 0),
                                "uri": l.item, "available": true, "hasStock": true],
                "lineValue": value, "originalLineValue": value, "unitPrice": unitValue, "unitOriginalPrice": unitValue,
                "unitPriceReduction": zero, "appliedPromotions": [] as [Any], "attributes": [] as [Any]]
    }

    static func address(_ fields: [(String, GraphQLValue)]) -> [String: Any] {
        var out: [String: Any] = [:]
        for (key, value) in fields {
            switch key {
            case "country":
                let code = value.stringValue ?? ""
                out["country"] = ["code": code, "name": code == CentraRules.country.code ? CentraRules.country.name : code,
                                  "isEU": true, "shipTo": true, "translations": [] as [Any]]
            case "state":
                out["state"] = value.stringValue.map { ["code": $0, "name": $0] } as Any
                out["stateOrProvince"] = value.stringValue as Any
            default:
                out[key] = value.stringValue as Any
            }
        }
        return out
    }

    static func order(_ o: CentraStore.Order) -> [String: Any] {
        let method = CentraRules.shippingMethods.first { $0.id == o.shippingMethod }
        return ["id": o.id, "number": o.number, "status": "CONFIRMED", "lines": o.lines.map(line),
                "totals": totalRows(items: o.itemsTotal, shipping: o.shipping),
                "shippingAddress": address(o.shippingAddress), "billingAddress": (o.billingAddress ?? o.shippingAddress).isEmpty ? nil as Any? as Any : address(o.billingAddress ?? o.shippingAddress),
                "shippingMethod": ["id": o.shippingMethod, "name": method?.name ?? "", "price": Money.value(o.shipping), "selected": true],
                "paymentMethod": paymentMethod,
                "orderDate": { (_: ResolveInfo) in ISO8601DateFormatter().string(from: o.createdAt) } as FieldFunction,
                "currencyBaseRate": 1.0, "usedFallbackTax": false, "affiliateHtml": "", "paymentHtml": "", "otherComment": "",
                "attributes": [] as [Any], "deliveryGroups": [] as [Any], "discountsApplied": [] as [Any]]
    }
}

/// `MonetaryValue`: major units as a Float (what the schema says), the formatted text, the currency.
enum Money {
    static func value(_ minor: Int) -> [String: Any] {
        let c = CentraRules.currency
        let major = minor / c.denominator, fraction = abs(minor % c.denominator)
        let text = "\(minor < 0 && major == 0 ? "-" : "")\(major).\(fraction < 10 ? "0" : "")\(fraction) \(c.code)"
        return ["value": Double(minor) / Double(c.denominator), "formattedValue": text,
                "currency": ["code": c.code, "isoNumber": c.isoNumber, "denominator": c.denominator, "decimalDigits": 2, "id": 1,
                             "name": c.name, "currentBaseRate": 1.0, "decimalPoint": ".", "thousandsSeparator": ",",
                             "prefix": nil as String? as Any, "suffix": " \(c.code)"]]
    }
}
