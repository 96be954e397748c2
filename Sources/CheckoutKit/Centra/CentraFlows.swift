import Foundation

extension BuiltinFlows {
    /// The Centra express checkout, one step per Apple Pay sheet callback (docs/protocols/centra.md, "The provider and
    /// the flow"). Its variants differ only in what the template is given: a PDP item (added, and rolled back in
    /// `finally` unless the payment placed the order), the Ingrid workaround first.
    static let centraExpressFlows: [Entry] = [
        centraExpress(name: "centra-express", description: "Centra + Adyen Apple Pay express checkout of the cart: widgets, shipping contact, shipping method, token, payment, order", item: nil),
        centraExpress(name: "centra-express-pdp", description: "Centra PDP express checkout: add the product, pay, or roll the line back on cancel or failure", item: "1002-M"),
        centraExpress(name: "centra-express-3ds-redirect", description: "Centra PDP express checkout whose payment needs a 3DS redirect (the emulator's 3001-M)", item: "3001-M"),
        centraExpress(name: "centra-express-3ds-native", description: "Centra PDP express checkout with a native 3DS2 challenge (the emulator's 3002-M)", item: "3002-M"),
        centraExpress(name: "centra-express-ingrid", description: "Centra express checkout on an Ingrid store: handleWidgetEvent(expressCheckout: true) first", item: nil, ingrid: true),
    ]

    static func centraExpress(name: String, description: String, item: String?, ingrid: Bool = false) -> Entry {
        var steps: [String] = []
        if ingrid {
            steps.append(#"{ "name": "widget-event", "use": "centra.handleWidgetEvent", "with": { "payload": { "expressCheckout": true } } }"#)
        }
        steps.append(#"{ "name": "express-config", "use": "centra.expressConfig", "expect": { "equals": { "summary.applePay": true } } }"#)
        if item != nil {
            steps.append(#"{ "name": "add-item", "use": "centra.addItem", "with": { "item": "${vars.item}" } }"#)
        }
        steps += [
            #"{ "name": "shipping", "use": "centra.shipping", "with": { "address": "${vars.contact}" } }"#,
            #"{ "name": "shipping-method", "use": "centra.setShippingMethod" }"#,
            #"{ "name": "make-token", "use": "applepay.makeToken", "with": { "amount": "${steps.shipping-method.summary.grandTotal}", "currency": "${steps.shipping-method.summary.currency}" }, "capture": { "token_file": "path" } }"#,
            #"{ "name": "payment", "use": "centra.paymentInstructions", "with": { "shippingAddress": "${vars.contact}", "tokenFile": "${vars.token_file}", "open": "${vars.open}" } }"#,
            #"{ "name": "order", "use": "centra.order", "expect": { "exists": ["order.id", "order.status"] } }"#,
        ]
        let finally = item == nil ? "" : #", "finally": [{ "name": "rollback", "use": "centra.rollback" }]"#
        let itemVar = item.map { #", "item": "\#($0)""# } ?? ""
        let source = """
            {
              "name": "\(name)",
              "description": "\(description)",
              "vars": { "contact": \(CentraAddress.testContact.serialized()), "open": false\(itemVar) },
              "deadline": "120s",
              "steps": [
                \(steps.joined(separator: ",\n    "))
              ]\(finally)
            }
            """
        // A 3DS challenge is a page in the shopper's browser.
        return Entry(name: name, description: description, source: source, needsPerson: item?.hasPrefix("300") == true)
    }
}
