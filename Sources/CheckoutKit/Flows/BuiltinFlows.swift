import Foundation

/// Flows that ship with the driver. They are written in the same JSON format as users' flow files and
/// go through the same decoder, so a built-in flow is also a worked example of the format.
public enum BuiltinFlows {
    public struct Entry: Sendable {
        public var name: String
        public var description: String
        public var source: String
        /// Outside `--env local` a person must act in it: approve in Cash App, answer a 3DS challenge in a browser.
        /// (The local emulator approves and answers by itself.)
        public var needsPerson = false
    }

    /// Every provider's flows (`Provider.flows`), and the raw-request demo of the emulator's own routes.
    public static let all: [Entry] = Providers.all.flatMap(\.flows) + [emulatorOrders]

    public static func named(_ name: String) -> Entry? { all.first { $0.name == name } }

    /// What `flow run --all` runs: every flow under the local emulator; elsewhere the ones no person has to act in.
    public static func unattended(local: Bool) -> [Entry] { local ? all : all.filter { !$0.needsPerson } }

    public static func load(_ entry: Entry, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        try FlowFile.decode(Data(entry.source.utf8), source: "built-in flow \(entry.name)", registry: registry)
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
