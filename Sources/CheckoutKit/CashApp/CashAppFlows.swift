import Foundation

extension BuiltinFlows {
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
        return Entry(name: name, description: description, source: source, needsPerson: true)
    }
}
