import Foundation

/// Flows that ship with the driver. They are written in the same JSON format as users' flow files and
/// go through the same decoder, so a built-in flow is also a worked example of the format.
public enum BuiltinFlows {
    public struct Entry: Sendable {
        public var name: String
        public var description: String
        public var source: String
    }

    public static let all: [Entry] = [bahnApplePay, emulatorOrders] + centraExpressFlows + cashAppFlows + braintreeFlows

    public static func named(_ name: String) -> Entry? { all.first { $0.name == name } }

    public static func load(_ entry: Entry, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        try FlowFile.decode(Data(entry.source.utf8), source: "built-in flow \(entry.name)", registry: registry)
    }

    /// The README's main job: a whole native Apple Pay checkout through Bahn, with the driver playing the
    /// phone (a fresh EC_v1 token) and the merchant backend (create, confirm, poll, webhook).
    static let bahnApplePay = Entry(
        name: "bahn-apple-pay",
        description: "Apple Pay through Bahn: make a token, create an intent, confirm it (JWS, idempotency key), poll, await the signed webhook",
        source: #"""
        {
          "name": "bahn-apple-pay",
          "description": "Apple Pay through Bahn: make a token, create an intent, confirm it (JWS, idempotency key), poll, await the signed webhook",
          "vars": { "amount": 8000, "currency": "704", "order_id": "${uuid}" },
          "deadline": "60s",
          "steps": [
            { "name": "make-token",
              "use": "applepay.makeToken", "with": { "amount": "${vars.amount}", "currency": "${vars.currency}" },
              "capture": { "token_file": "path" } },
            { "name": "create-intent",
              "use": "bahn.createIntent",
              "with": { "amount": "${vars.amount}", "currency": "${vars.currency}", "orderId": "${vars.order_id}",
                        "description": "Order #${vars.order_id}" },
              "expect": { "equals": { "payment_intent.status": "requires_payment_method" } },
              "capture": { "intent": "payment_intent.id" } },
            { "name": "confirm",
              "use": "bahn.confirm", "with": { "intent": "${vars.intent}", "tokenFile": "${vars.token_file}" },
              "expect": { "exists": ["payment_intent.latest_charge_id"] } },
            { "name": "poll",
              "use": "bahn.getIntent", "with": { "intent": "${vars.intent}" },
              "until": { "path": "payment_intent.status", "in": ["succeeded", "requires_capture", "canceled", "requires_payment_method"],
                         "interval": "250ms", "timeout": "30s" },
              "expect": { "equals": { "payment_intent.status": "succeeded" } } },
            { "name": "webhook",
              "use": "bahn.awaitWebhook", "with": { "type": "payment_intent.status.succeeded", "intent": "${vars.intent}", "timeout": "15s" } }
          ]
        }
        """#)

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
        return Entry(name: name, description: description, source: source)
    }

    /// Cash App Pay through Afterpay, one step per SDK call (docs/protocols/cashapp-afterpay.md, "The provider and the flows"). The variants
    /// differ in how the payment ends: captured at once, authorised (captured later with `cashapp capture`), a virtual
    /// card from the Afterpay Button, or the customer's decline (the emulator's 13.13) as the expected outcome.
    static let cashAppFlows: [Entry] = [
        cashApp(name: "cashapp-server", description: "Cash App Pay server checkout: create, sign, customer request, approval, validate, capture",
                amount: "10.00", ending: [#"{ "name": "validate", "use": "cashapp.validate" }"#,
                                          #"{ "name": "capture", "use": "cashapp.capture", "expect": { "equals": { "payment.status": "APPROVED" } } }"#]),
        cashApp(name: "cashapp-server-auth", description: "Cash App Pay server checkout authorised for a later capture: create, sign, request, approval, validate, auth",
                amount: "10.00", ending: [#"{ "name": "validate", "use": "cashapp.validate" }"#,
                                          #"{ "name": "auth", "use": "cashapp.auth", "expect": { "equals": { "payment.paymentState": "AUTH_APPROVED" } } }"#]),
        cashApp(name: "cashapp-button", description: "Cash App Pay through the Afterpay Button: v3 button, sign, request, approval, confirm, virtual card",
                amount: "10.00", button: true, ending: [#"{ "name": "confirm", "use": "cashapp.confirm", "expect": { "exists": ["card.type", "card.validUntil"] } }"#]),
        cashApp(name: "cashapp-declined", description: "Cash App Pay server checkout the customer declines (the emulator's 13.13): the decline is the expected outcome",
                amount: "13.13", expect: "declined", ending: []),
    ]

    static func cashApp(name: String, description: String, amount: String, button: Bool = false, expect: String = "approved",
                        ending: [String]) -> Entry {
        let create = button
            ? #"{ "name": "button", "use": "cashapp.button", "with": { "amount": "${vars.amount}", "email": "${vars.email}" } }"#
            : #"{ "name": "checkout", "use": "cashapp.checkout", "with": { "amount": "${vars.amount}", "email": "${vars.email}" } }"#
        let steps = [
            create,
            #"{ "name": "sign", "use": "cashapp.sign" }"#,
            #"{ "name": "request", "use": "cashapp.request", "with": { "scope": "${vars.scope}" } }"#,
            #"{ "name": "approval", "use": "cashapp.poll", "with": { "timeout": "${vars.approval_timeout}", "interval": "${vars.poll_interval}", "expect": "\#(expect)" } }"#,
        ] + ending
        let source = """
            {
              "name": "\(name)",
              "description": "\(description)",
              "vars": { "amount": "\(amount)", "email": "\(CashAppProtocol.defaultEmail)", "scope": "brand", "approval_timeout": "120s", "poll_interval": "1s" },
              "steps": [
                \(steps.joined(separator: ",\n    "))
              ]
            }
            """
        return Entry(name: name, description: description, source: source)
    }

    /// Apple Pay through Braintree, both halves: the phone (a token), the client SDK (configuration, tokenization into
    /// a nonce) and the merchant server (charge, or authorize then capture). The declined variant uses the sandbox's
    /// processor-declined range and passes when Braintree refuses.
    static let braintreeFlows: [Entry] = [
        braintree(name: "braintree-apple-pay", description: "Apple Pay through Braintree: token, gateway configuration, tokenize into a nonce, charge",
                  amount: "10.00", ending: [#"{ "name": "charge", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "${vars.amount}" }, "expect": { "equals": { "transaction.status": "SUBMITTED_FOR_SETTLEMENT" } } }"#]),
        braintree(name: "braintree-apple-pay-auth-capture", description: "Apple Pay through Braintree: token, configuration, nonce, authorize, then capture",
                  amount: "10.00", ending: [
                    #"{ "name": "authorize", "use": "braintree.authorize", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "${vars.amount}" }, "expect": { "equals": { "transaction.status": "AUTHORIZED" } } }"#,
                    #"{ "name": "capture", "use": "braintree.capture", "with": { "transaction": "${steps.authorize.transaction.id}" }, "expect": { "equals": { "transaction.status": "SUBMITTED_FOR_SETTLEMENT" } } }"#]),
        braintree(name: "braintree-apple-pay-declined", description: "Apple Pay through Braintree in the processor-declined range (2000.00): the refusal is the expected outcome",
                  amount: "2000.00", ending: [#"{ "name": "charge", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "${vars.amount}", "expect": "declined" } }"#]),
    ]

    static func braintree(name: String, description: String, amount: String, ending: [String]) -> Entry {
        let minor = DecimalAmount.minorUnits(amount)!
        let steps = [
            #"{ "name": "make-token", "use": "applepay.makeToken", "with": { "amount": "${vars.amount_minor}", "currency": "${vars.currency}" }, "capture": { "token_file": "path" } }"#,
            #"{ "name": "config", "use": "braintree.config", "with": { "currency": "${vars.currency}", "network": "${vars.network}" } }"#,
            #"{ "name": "tokenize", "use": "braintree.tokenize", "with": { "tokenFile": "${vars.token_file}", "clientApiUrl": "${steps.config.summary.clientApiUrl}", "paymentNetwork": "${vars.network}" } }"#,
        ] + ending
        let source = """
            {
              "name": "\(name)",
              "description": "\(description)",
              "vars": { "amount": "\(amount)", "amount_minor": \(minor), "currency": "USD", "network": "Visa" },
              "deadline": "60s",
              "steps": [
                \(steps.joined(separator: ",\n    "))
              ]
            }
            """
        return Entry(name: name, description: description, source: source)
    }

    /// Raw HTTP requests against the emulator's demo routes: every engine feature in one short flow.
    static let emulatorOrders = Entry(
        name: "emulator-orders",
        description: "Raw HTTP tour of the emulator: health, create an order, pay it once (idempotency key), poll until paid, read the ledger",
        source: #"""
        {
          "name": "emulator-orders",
          "description": "Raw HTTP tour of the emulator: health, create an order, pay it once (idempotency key), poll until paid, read the ledger",
          "vars": { "amount": 8000, "currency": "VND" },
          "steps": [
            { "name": "health",
              "request": { "url": "${env.EMULATOR_URL}/_sandbox/health" },
              "expect": { "status": 200, "equals": { "status": "ok" } } },
            { "name": "create-order",
              "request": { "method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/orders",
                           "json": { "amount": "${vars.amount}", "currency": "${vars.currency}" } },
              "expect": { "status": 201, "matches": { "order.id": "^ord_" }, "equals": { "order.amount": "${vars.amount}" } },
              "capture": { "order_id": "order.id" } },
            { "name": "pay",
              "request": { "method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/orders/${vars.order_id}/pay",
                           "headers": { "Idempotency-Key": "order-${vars.order_id}-pay" } },
              "expect": { "status": 200 } },
            { "name": "await-paid",
              "request": { "url": "${env.EMULATOR_URL}/_sandbox/orders/${vars.order_id}" },
              "until": { "path": "order.status", "equals": "paid", "interval": "100ms", "timeout": "5s" },
              "capture": { "polls": "order.polls" } }
          ],
          "finally": [
            { "name": "ledger",
              "request": { "url": "${env.EMULATOR_URL}/_sandbox/ledger" },
              "expect": { "exists": ["entries[0].id"] } }
          ]
        }
        """#)
}
