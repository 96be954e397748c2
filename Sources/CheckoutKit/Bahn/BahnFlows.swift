import Foundation

extension BuiltinFlows {
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
}
