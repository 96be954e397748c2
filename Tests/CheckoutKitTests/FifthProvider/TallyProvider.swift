import Foundation

@testable import CheckoutKit

/// The driver's side of Tally, a sketch of a fifth provider (see `FifthProviderTests`): what a provider's folder under
/// `Sources/CheckoutKit/` would hold — its configuration variables, its money call with the read-back that settles a
/// lost answer, and a built-in flow — declared as one `Provider` value, as `Providers.all` lists the others.
enum Tally {
    static let provider = Provider(
        name: "tally",
        variables: [
            .init(name: "TALLY_API_URL", meaning: "Tally's API", defaultValue: nil, isSecret: false),
            .init(name: "TALLY_API_KEY", meaning: "the Bearer key", defaultValue: nil, isSecret: true),
        ],
        operations: [charge],
        flows: [BuiltinFlows.Entry(Array(flow.utf8))])

    /// The built-in flow: one charge of the amount, under a key of the run's.
    static let flow = #"""
        {
          "name": "tally-charge",
          "description": "Charge an amount through Tally",
          "vars": { "amount": "10.00", "key": "${uuid}" },
          "steps": [
            { "name": "charge", "use": "tally.charge", "with": { "amount": "${vars.amount}", "key": "${vars.key}" },
              "expect": { "equals": { "charge.status": "succeeded" } } }
          ]
        }
        """#

    struct Charge: OperationArguments {
        var amount = 0  // required: read before the body runs
        var currency = Currency.usd
        /// What makes a repeat of the charge a replay Tally answers with the first outcome.
        var key = ""  // required: read before the body runs

        static let arguments: [Argument<Charge>] = [
            .amount("amount", \.amount, .majorUnits, currency: "currency", defaultCurrency: "USD", help: "how much"),
            .currency("currency", \.currency, default: "USD", help: "ISO 4217"),
            .string("key", \.key, help: "the Idempotency-Key: the same key never charges twice"),
        ]
    }

    static let charge = FlowOperation(
        name: "tally.charge", summary: "Charge an amount (POST /charges), idempotent on its key.",
        arguments: Charge.self, requiredConfiguration: ["TALLY_API_URL", "TALLY_API_KEY"],
        outputs: [.init("charge", "the charge as Tally returned it")]
    ) { (args: Charge, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let base = context.configuration.value("TALLY_API_URL")!
        let headers: HTTPHeaders = [
            "Authorization": "Bearer \(try context.configuration.headerValue("TALLY_API_KEY")!)",
            "Content-Type": "application/json",
        ]
        let asked = MoneyMovement(
            provider: "tally", kind: .charge, amount: args.amount, currency: args.currency.code,
            reference: "key \(args.key)")
        let readBack = ReadBack(
            provider: "tally", action: "charge", effect: "the charge", resource: "the charge of key \(args.key)",
            reference: "key \(args.key)", replay: "tally charge \(args.key)", asked: asked,
            shown: { output in
                var shown = asked
                shown.reference = output.document["charge"]?["id"]?.stringValue
                shown.status = "succeeded"
                return shown
            },
            read: { (context: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
                    HTTPClientRequest(
                        method: "GET", url: "\(base)/charges/\(args.key)", headers: headers,
                        timeout: context.requestTimeout, readOnly: true)
                }
                if response.status == 404 { return .notSeen(shows: "Tally has no charge of key \(args.key)") }
                guard response.status == 200 else {
                    throw .unavailable("reading the charge back: Tally answered \(response.status)")
                }
                return try outcome(
                    response.jsonDocument(service: "Tally", hint: "check TALLY_API_URL"), status: 200
                ).finding
            },
            settle: { _ in
                [
                    "re-send it under the same key, which Tally answers with the first outcome and never charges twice: the step with \"key\": \"\(args.key)\""
                ]
            })
        return try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
            let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
                var request = HTTPClientRequest(
                    method: "POST", url: "\(base)/charges", headers: headers,
                    body: JSON.object(["amount": JSON(args.amount), "currency": .string(args.currency.code)]).data,
                    timeout: context.requestTimeout, idempotent: true)
                request.headers["Idempotency-Key"] = args.key
                return request
            }
            let document = try response.jsonDocument(service: "Tally", hint: "check TALLY_API_URL")
            if response.outcomeOpen || response.status >= 500 {
                throw .uncertain("the charge: Tally answered \(response.status)")
            }
            return try outcome(document, status: response.status).output
        }
    }

    /// What a charge says: it took the money, or Tally declined it (a refusal: nothing was charged).
    static func outcome(
        _ charge: JSON, status: Int
    ) throws(Diagnostic) -> (output: StepOutput, finding: ReadBack.Finding) {
        switch charge["status"]?.stringValue {
        case "succeeded":
            let output = StepOutput(document: ["charge": charge], status: status)
            return (output, .tookEffect(output, shows: "charge \(charge["id"]?.stringValue ?? "?") succeeded"))
        case "declined":
            throw .failure("Tally declined the charge", hint: "nothing was charged")
        default:
            throw .uncertain("Tally answered \(status) with no charge status")
        }
    }
}
