import Foundation

extension BuiltinFlows {
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
}
