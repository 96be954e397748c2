import Foundation
import GraphQL
import WireTypes

/// One Storefront API call as the resolvers see it: the session it runs in and what the request carried.
final class CentraCall: @unchecked Sendable {
    let store: CentraStore
    let sessionID: String
    let sharedSecretValid: Bool
    let baseURL: String
    let ledger: Ledger
    let verifier: ApplePayTokenVerifier

    init(
        store: CentraStore, sessionID: String, sharedSecretValid: Bool, baseURL: String, ledger: Ledger,
        verifier: ApplePayTokenVerifier
    ) {
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
        get throws {
            guard let s = store.session(sessionID) else { throw GraphQLError("Unauthorized") }
            return s
        }
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
                guard let index = s.lines.firstIndex(where: { $0.id == id }) else {
                    throw .userError("Line not found", path: ["lineId"])
                }
                guard let quantity = info.arguments["quantity"]?.intValue else { return }
                guard quantity >= 0 else { throw .userError("Quantity cannot be negative", path: ["quantity"]) }
                if quantity == 0 { s.lines.remove(at: index) } else { s.lines[index].quantity = quantity }
            }
        }
        r["Mutation", "deleteLine"] = { _, info in
            try selectionMutation(info) { (s: inout CentraStore.Session) throws(CentraFailure) in
                let id = info.arguments["lineId"]?.stringValue ?? ""
                guard let index = s.lines.firstIndex(where: { $0.id == id }) else {
                    throw .userError("Line not found", path: ["lineId"])
                }
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
                    throw .userError(
                        "Shipping method \(method.name) does not ship to \(s.shippingCountry ?? "the address")",
                        path: ["id"])
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

    static func userErrors(_ failure: CentraFailure?) throws -> GraphQLValue {
        switch failure {
        case nil: return []
        case .userError(let message, let path)?:
            return [
                [
                    "__typename": "UserErrorBase", "message": .string(message),
                    "path": .list(path.map(GraphQLValue.string)),
                ]
            ]
        case .unauthorized?: throw GraphQLError("Unauthorized")
        }
    }

    /// A `SelectionMutationPayload`: the change applied (or its userError), and the selection as it now is.
    static func selectionMutation(
        _ info: ResolveInfo, _ change: (inout CentraStore.Session) throws(CentraFailure) -> Void
    ) throws -> GraphQLValue {
        let call = try CentraCall.from(info)
        var failure: CentraFailure?
        do { try call.store.update(call.sessionID, change) } catch { failure = error }
        return [
            "__typename": "GenericSelectionMutationPayload", "userErrors": try userErrors(failure),
            "selection": selection(try call.session),
        ]
    }

    static func addItem(_ info: ResolveInfo) throws -> GraphQLValue {
        let call = try CentraCall.from(info)
        let item = info.arguments["item"]?.stringValue ?? ""
        let quantity = info.arguments["quantity"]?.intValue ?? 1
        var failure: CentraFailure?
        var added: CentraStore.Line?
        do {
            added = try call.store.update(call.sessionID) {
                (s: inout CentraStore.Session) throws(CentraFailure) -> CentraStore.Line in
                guard CentraRules.product(item) != nil else {
                    throw .userError("Item \(item) does not exist", path: ["item"])
                }
                guard quantity > 0 else { throw .userError("Quantity must be at least 1", path: ["quantity"]) }
                let line = CentraStore.Line(id: CentraRules.newID("line_"), item: item, quantity: quantity)
                s.lines.append(line)
                return line
            }
        } catch { failure = error }
        return [
            "__typename": "AddItemPayload", "userErrors": try userErrors(failure), "line": added.map(line) ?? .null,
            "selection": selection(try call.session),
        ]
    }

    static func expressCheckoutWidgets(_ info: ResolveInfo) throws -> GraphQLValue {
        let call = try CentraCall.from(info)
        // DECISION: a missing or wrong shared secret is a top-level error on this field (the data Centra would hide).
        guard call.sharedSecretValid else {
            throw GraphQLError(
                "Access denied: expressCheckoutWidgets needs a valid \(CentraRules.sharedSecretHeader) header")
        }
        let session = try call.session
        let plugins = info.arguments["plugins"]?.listValue ?? []
        var lists: [GraphQLValue] = []
        for plugin in plugins {
            let type = plugin["type"]?.stringValue ?? ""
            guard type == "express_checkout_adyen" else {
                lists.append([
                    "name": .string(type),
                    "widgets": [
                        [
                            "id": nil, "name": .string(type), "contents": nil,
                            "error": .string("The store has no \(type) plugin"),
                        ]
                    ],
                ])
                continue
            }
            let amount = plugin["additionalData"]?["amount"]?.intValue ?? CentraTotals(session).grandTotal
            let country = session.shippingCountry ?? CentraRules.country.code
            // The widget's contents are a JSON text inside the GraphQL string.
            let contents: GraphQLValue = [
                "clientKey": .string(CentraRules.adyenClientKey),
                "context": .string(CentraRules.adyenContext),
                "country": .string(country),
                "languageCode": .string(CentraRules.languageCode),
                "paymentAmount": ["amount": .int(amount), "currency": .string(CentraRules.currency.code)],
                "paymentMethodsResponse": [
                    "paymentMethods": [
                        [
                            "type": "applepay", "name": "Apple Pay",
                            "configuration": [
                                "merchantId": .string(TestCredentials.merchantIdentifier),
                                "merchantName": .string(CentraRules.adyenMerchantAccount),
                            ],
                        ],
                        ["type": "scheme", "name": "Cards", "brands": ["visa", "mc", "amex"]],
                    ]
                ],
                "shippingMethods": .list(
                    CentraRules.shippingMethods.compactMap { m -> GraphQLValue? in
                        guard let price = m.price(for: country) else { return nil }
                        return ["id": .int(m.id), "name": .string(m.name), "price": Money.value(price)]
                    }),
            ]
            lists.append([
                "name": .string(type),
                "widgets": [
                    [
                        "id": "adyen-express", "name": .string(type),
                        "contents": .string(contents.jsonText), "error": nil,
                    ]
                ],
            ])
        }
        return ["__typename": "ExpressCheckoutWidgetsPayload", "list": .list(lists), "userErrors": []]
    }

    // MARK: Values

    static func selection(_ s: CentraStore.Session) -> GraphQLValue {
        let totals = CentraTotals(s)
        let methods = CentraRules.shippingMethods.compactMap { m -> (id: Int, value: GraphQLValue)? in
            guard let price = m.price(for: s.shippingCountry) else { return nil }
            return (
                m.id,
                [
                    "id": .int(m.id), "name": .string(m.name), "price": Money.value(price),
                    "selected": .bool(m.id == s.shippingMethod), "comment": nil,
                ]
            )
        }
        let checkout: GraphQLValue = [
            "shippingAddress": address(s.shippingAddress),
            "separateBillingAddress": s.billingAddress.map(address) ?? .null,
            "hasSeparateBillingAddress": .bool(s.billingAddress != nil),
            "shippingMethods": .list(methods.map(\.value)),
            "shippingMethod": methods.first { $0.id == s.shippingMethod }?.value ?? .null,
            "paymentMethods": [paymentMethod],
            "paymentMethod": paymentMethod,
            "totals": totalRows(items: totals.items, shipping: totals.shipping ?? 0),
            "deliveryGroups": [],
            "checkoutScript": nil,
            "widgets": nil,
        ]
        return [
            "id": .string(s.selectionID), "lines": .list(s.lines.map(line)),
            "grandTotal": Money.value(totals.grandTotal),
            "checkout": checkout, "comment": nil, "discounts": [], "taxExempt": false,
            "usedFallbackTax": false, "externalGiftCardAvailable": false, "attributes": [], "availableAttributes": [],
        ]
    }

    static var paymentMethod: GraphQLValue {
        [
            "id": 1, "name": "Adyen Drop-In", "kind": "ADYEN_DROPIN", "uri": "adyen-drop-in", "active": true,
            "initiateOnlySupported": true, "recurringSupported": false, "addressAfterPayment": false,
            "handlingCost": Money.value(0),
        ]
    }

    static func totalRows(items: Int, shipping: Int) -> GraphQLValue {
        [
            ["__typename": "SelectionTotalRowBase", "type": "ITEMS_SUBTOTAL", "price": Money.value(items)],
            ["__typename": "SelectionTotalRowBase", "type": "SHIPPING", "price": Money.value(shipping)],
            ["__typename": "SelectionTotalRowBase", "type": "GRAND_TOTAL", "price": Money.value(items + shipping)],
        ]
    }

    static func line(_ l: CentraStore.Line) -> GraphQLValue {
        let product = CentraRules.product(l.item)
        let unit = product?.price ?? 0
        let value = Money.value(unit * l.quantity)
        let unitValue = Money.value(unit)
        let name = GraphQLValue.string(product?.name ?? l.item)
        let size = GraphQLValue.string(product?.size ?? "")
        let displayItemID = product?.displayItemID ?? 0
        return [
            "__typename": "ProductLine", "id": .string(l.id), "quantity": .int(l.quantity), "name": name,
            "size": size, "productNumber": .string(String(displayItemID)), "productVariantName": size,
            "comment": "", "hasDiscount": false, "discountPercent": 0.0, "taxPercent": 25.0,
            "item": [
                "id": .string(l.item), "name": size, "sku": .string(l.item), "GTIN": "", "preorder": false,
                "productSizeId": 1,
                "horizontalLabelIndex": 0, "verticalLabelIndex": 0,
            ],
            "displayItem": [
                "id": .int(displayItemID), "name": name, "productNumber": .string(String(displayItemID)),
                "uri": .string(l.item), "available": true, "hasStock": true,
            ],
            "lineValue": value, "originalLineValue": value, "unitPrice": unitValue, "unitOriginalPrice": unitValue,
            "unitPriceReduction": Money.value(0), "appliedPromotions": [], "attributes": [],
        ]
    }

    static func address(_ fields: [(String, GraphQLValue)]) -> GraphQLValue {
        var out: [(String, GraphQLValue)] = []
        for (key, value) in fields {
            switch key {
            case "country":
                let code = value.stringValue ?? ""
                out.append(
                    (
                        "country",
                        [
                            "code": .string(code),
                            "name": .string(code == CentraRules.country.code ? CentraRules.country.name : code),
                            "isEU": true, "shipTo": true, "translations": [],
                        ]
                    ))
            case "state":
                out.append(("state", value.stringValue.map { ["code": .string($0), "name": .string($0)] } ?? .null))
                out.append(("stateOrProvince", GraphQLValue(value.stringValue)))
            default:
                out.append((key, GraphQLValue(value.stringValue)))
            }
        }
        return .object(out)
    }

    static func order(_ o: CentraStore.Order) -> GraphQLValue {
        let method = CentraRules.shippingMethods.first { $0.id == o.shippingMethod }
        let billing = o.billingAddress ?? o.shippingAddress
        return [
            "id": .string(o.id), "number": .int(o.number), "status": "CONFIRMED", "lines": .list(o.lines.map(line)),
            "totals": totalRows(items: o.itemsTotal, shipping: o.shipping),
            "shippingAddress": address(o.shippingAddress), "billingAddress": billing.isEmpty ? .null : address(billing),
            "shippingMethod": [
                "id": .int(o.shippingMethod), "name": .string(method?.name ?? ""), "price": Money.value(o.shipping),
                "selected": true,
            ],
            "paymentMethod": paymentMethod,
            // Whole seconds and `Z`, as ISO8601DateFormatter writes it.
            "orderDate": .string(Timestamp.iso8601(o.createdAt, fractionDigits: 0)),
            "currencyBaseRate": 1.0, "usedFallbackTax": false, "affiliateHtml": "", "paymentHtml": "",
            "otherComment": "",
            "attributes": [], "deliveryGroups": [], "discountsApplied": [],
        ]
    }
}

/// `MonetaryValue`: major units as a Float (what the schema says), the formatted text, the currency.
enum Money {
    static func value(_ minor: Int) -> GraphQLValue {
        let c = CentraRules.currency
        let major = minor / c.denominator
        let fraction = abs(minor % c.denominator)
        let text = "\(minor < 0 && major == 0 ? "-" : "")\(major).\(fraction < 10 ? "0" : "")\(fraction) \(c.code)"
        return [
            "value": .float(Double(minor) / Double(c.denominator)), "formattedValue": .string(text),
            "currency": [
                "code": .string(c.code), "isoNumber": .string(c.isoNumber), "denominator": .int(c.denominator),
                "decimalDigits": 2, "id": 1, "name": .string(c.name), "currentBaseRate": 1.0, "decimalPoint": ".",
                "thousandsSeparator": ",", "prefix": nil, "suffix": .string(" \(c.code)"),
            ],
        ]
    }
}
