import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver bahn …`: each subcommand is a one-step built-in flow on the shared engine, so retries,
/// recording, reports and the state file work exactly as in `flow run`.
enum BahnCommands {
    /// `bahn events resend ID`: a webhook event delivered again by the emulator (Bahn's API has no such call).
    static let events = CommandSpec(
        name: "events", abstract: "Bahn webhook events on the emulator: resend one.",
        subcommands: [SandboxCommands.resend(provider: BahnEmulator.name)])

    static var spec: CommandSpec {
        CommandSpec(
            name: "bahn",
            abstract: "Bahn PaymentIntents with Apple Pay: create, confirm with a token file, poll, capture, webhooks.",
            subcommands: [createIntent, confirm, intent, capture, cancel, listen, events])
    }

    /// `bahn create-intent`'s options. The amount is kept as typed and read in the body (`amount(_:currency:)`): it is
    /// read in the currency, which help shows after it.
    struct CreateIntentInput: CommandInput {
        var amount: String?
        var currency: String?
        var description: String?
        var orderID: String?
        var metadata: [String: String] = [:]

        static let inputs: [Input<CreateIntentInput>] = [
            .value("amount", \.amount, value: "N", help: "Amount in minor units (VND has none).", required: true),
            .value(
                "currency", \.currency, value: "CODE", help: "ISO 4217 numeric (704) or alphabetic (VND).",
                required: true),
            .value("description", \.description, value: "TEXT", help: "Shown on the intent, e.g. \"Order #1234\"."),
            .identifier(
                "order-id", \.orderID, help: "Your order: stored as metadata.order_id and keys later confirms."),
            .pairs("metadata", \.metadata, help: "A metadata entry."),
        ]
    }

    static let createIntent = CommandSpec(
        name: "create-intent", abstract: "Create a PaymentIntent.", input: CreateIntentInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = BahnOperations.CreateIntent()
        // Both options are required, so the parser has refused a missing one: both are read here.
        let (amount, currency) = try amount(input.amount, currency: input.currency)
        (arguments.amount, arguments.currency) = (amount!, currency!)
        arguments.description = input.description
        arguments.orderID = input.orderID
        // No --metadata leaves the argument out rather than giving an empty object.
        if !input.metadata.isEmpty { arguments.metadata = JSON.Object(input.metadata.mapValues(JSON.string)) }
        return try await run(invocation, step: "create-intent", .operation(BahnOperations.createIntent, arguments))
    }

    /// `bahn confirm`'s options. The amount is kept as typed and read in the body, in the currency (given after it);
    /// the operation uses them only when the intent must be created.
    struct ConfirmInput: CommandInput {
        var intent: String?
        var orderID: String?
        var tokenFile: String?
        var capture: BahnOperations.Confirm.CaptureMethod?
        var idempotencyKey: String?
        var wait = false
        var amount: String?
        var currency: String?

        static let inputs: [Input<ConfirmInput>] = [
            .identifier("intent", \.intent, help: "The PaymentIntent to confirm."),
            .identifier("order-id", \.orderID, help: "Your order (instead of --intent)."),
            .value(
                "token-file", \.tokenFile, value: "FILE", help: "PKPaymentToken.paymentData, byte for byte.",
                required: true),
            .choice("capture", \.capture, value: "METHOD", help: "manual: authorise now, capture later."),
            .identifier("idempotency-key", \.idempotencyKey, value: "KEY", help: "Override the idempotency key."),
            .flag("wait", \.wait, help: "Poll until a terminal status (within --deadline, default 30 s)."),
            .value("amount", \.amount, value: "N", help: "With --order-id, when the intent must be created."),
            .value("currency", \.currency, value: "CODE", help: "With --order-id, when the intent must be created."),
        ]
    }

    static let confirm = CommandSpec(
        name: "confirm", abstract: "Confirm a PaymentIntent with an Apple Pay token file.",
        discussion: """
            The token file holds PKPaymentToken.paymentData exactly as PassKit produced it; its bytes are sent
            unchanged. It is checked first (not JSON, base64-wrapped, a PKPayment wrapper, an unknown version, a token
            already confirmed from this state file): a bad file exits 65 and nothing is sent.
            The request is a JWS-signed body with a Bn-Idempotency-Key (default order-<order id>-applepay), kept in the
            state file so that a retry — in this run or a later one — replays the original response instead of
            spending the single-use token twice. With --order-id and no intent, the order's intent from the state file
            is used, or one is created (give --amount and --currency).
            """,
        input: ConfirmInput.self
    ) { input, invocation throws(Diagnostic) in
        guard (input.intent != nil) != (input.orderID != nil) else {
            throw invocation.usage("give exactly one of --intent ID or --order-id ID")
        }
        var arguments = BahnOperations.Confirm()
        arguments.tokenFile = input.tokenFile!
        arguments.intent = input.intent
        arguments.orderID = input.orderID
        arguments.captureMethod = input.capture
        arguments.idempotencyKey = input.idempotencyKey
        // The argument takes a Currency, so --currency is read here even without --amount: a bad one is refused as the
        // option it is, before anything runs.
        (arguments.amount, arguments.currency) = try amount(input.amount, currency: input.currency)
        var steps = [
            Step(
                name: "confirm", action: .operation(BahnOperations.confirm, arguments),
                capture: ["intent": JSONPath(components: [.key("payment_intent"), .key("id")])])
        ]
        // The wallet sheet gives the backend about 30 s; --deadline changes the budget.
        let budget = try GlobalSettings(invocation).time.deadline ?? 30
        if input.wait {
            // One polling mechanism: the engine's `until`, within the budget; a decline at the end is a failure.
            let status = JSONPath(components: [.key("payment_intent"), .key("status")])
            steps.append(
                Step(
                    name: "wait", action: .operation(BahnOperations.getIntent, onIntent("${vars.intent}")),
                    expect: Expectation(conditions: [
                        Condition(path: status, test: .oneOf(["succeeded", "requires_capture"]))
                    ]),
                    until: Until(
                        condition: Condition(
                            path: status, test: .oneOf(BahnProtocol.terminalStatuses.sorted().map(JSON.string))),
                        interval: 0.5, timeout: max(1, budget - 1),
                        timeoutHint:
                            "the intent is still in flight: complete the wallet sheet on processing and reconcile from the webhook (raise --deadline to wait longer)"
                    )))
        }
        let flow = Flow(
            name: "bahn-confirm", description: "confirm a PaymentIntent with an Apple Pay token file",
            steps: steps, deadline: budget + 5)
        return try await run(invocation, flow: flow)
    }

    /// `bahn intent | capture | cancel ID`: the intent, or the state file's last one.
    struct IntentIDInput: CommandInput {
        var id: String?

        static let inputs: [Input<IntentIDInput>] = [
            .identifier(
                argument: "ID", \.id, help: "The PaymentIntent id [default: the state file's last intent].",
                optional: true)
        ]
    }

    static let intent = CommandSpec(
        name: "intent", abstract: "Show a PaymentIntent (its status).", input: IntentIDInput.self
    ) { input, invocation throws(Diagnostic) in
        try await run(invocation, step: "intent", .operation(BahnOperations.getIntent, onIntent(input.id)))
    }

    static let capture = CommandSpec(
        name: "capture", abstract: "Capture an authorised PaymentIntent (after --capture manual).",
        input: IntentIDInput.self
    ) { input, invocation throws(Diagnostic) in
        try await run(invocation, step: "capture", .operation(BahnOperations.capture, onIntent(input.id)))
    }

    static let cancel = CommandSpec(
        name: "cancel", abstract: "Cancel a PaymentIntent.", input: IntentIDInput.self
    ) { input, invocation throws(Diagnostic) in
        try await run(invocation, step: "cancel", .operation(BahnOperations.cancel, onIntent(input.id)))
    }

    struct ListenInput: CommandInput {
        var port: Int?
        var forwardTo: String?

        static let inputs: [Input<ListenInput>] = [
            .integer(
                "port", \.port, range: 0...65535,
                help: "Port to listen on [default: BAHN_WEBHOOK_PORT, else any free port]."),
            .url("forward-to", \.forwardTo, help: "Forward each verified, new delivery here."),
        ]
    }

    static let listen = CommandSpec(
        name: "listen", abstract: "Receive Bahn webhooks: verify, dedupe, print, optionally forward.",
        discussion: """
            Listens on 127.0.0.1 (path /webhooks/bahn; any path works) until Ctrl-C. Each delivery's Bn-Signature is
            checked over the raw body with BAHN_WEBHOOK_SECRET (tolerance 300 s); a bad or stale signature gets 400.
            Events are deduplicated by id and printed (text, or one JSON line each with --format jsonl);
            --forward-to sends each new delivery on unchanged.
            """,
        input: ListenInput.self
    ) { input, invocation throws(Diagnostic) in
        let forwardTo = input.forwardTo
        if try GlobalSettings(invocation).output.format == .json {
            throw invocation.usage(
                "bahn listen streams its deliveries, and one JSON document would never end: use --format jsonl (one JSON line each)"
            )
        }
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        try environment.configuration.require(["BAHN_WEBHOOK_SECRET"], for: "bahn listen")
        let port: UInt16
        if let given = input.port {
            port = UInt16(given)
        } else {
            port = try BahnWebhookService.port(environment.configuration)
        }
        let console = environment.console
        let redactor = environment.redactor
        let format = environment.settings.output.format
        let environmentName = environment.configuration.environment
        let inbox = try BahnWebhookInbox(
            secret: environment.configuration.value("BAHN_WEBHOOK_SECRET")!, port: UInt16(port),
            forwardTo: forwardTo,
            onEvent: { event in
                if format == .text {
                    console.out(
                        "\(Timestamp.iso8601(event.receivedAt))  \(event.type)  \(event.intentID ?? "-")  \(event.status ?? "")  \(event.id)"
                    )
                } else {
                    console.out(
                        redactor.json([
                            "event": "webhook", "time": .string(Timestamp.iso8601(event.receivedAt)),
                            "environment": .string(environmentName),
                            "id": .string(event.id), "type": .string(event.type),
                            "intent": event.intentID.map(JSON.string) ?? .null, "body": event.body,
                        ]).serialized())
                }
            },
            onDuplicate: { event in
                if format == .text {
                    console.err("duplicate delivery of \(event.id) (\(event.type)): already received, answered 200")
                } else {
                    console.out(
                        redactor.json([
                            "event": "duplicate", "time": .string(Timestamp.iso8601(Date())),
                            "environment": .string(environmentName),
                            "id": .string(event.id), "type": .string(event.type),
                        ]).serialized())
                }
            },
            onRejected: { reason in console.err("rejected a delivery: \(reason)") },
            onForwarded: { result in
                if format == .jsonl {
                    var line: JSON.Object = [
                        "event": "forwarded", "time": .string(Timestamp.iso8601(Date())),
                        "environment": .string(environmentName),
                        "id": .string(result.eventID), "to": .string(result.url), "delivered": .bool(result.delivered),
                    ]
                    line["status"] = result.status.map { .number(Double($0)) }
                    line["error"] = result.failure.map(JSON.string)
                    console.out(redactor.json(.object(line)).serialized())
                }
                if let problem = result.problem { console.err(redactor.text(problem)) }
            })
        inbox.start()
        // Under --env local the emulator (a running `sandbox serve`, when there is one) delivers here too, beside any
        // other listener; the target goes when this command does.
        let service: BahnWebhookService
        do throws(Diagnostic) {
            service = BahnWebhookService(
                inbox: inbox,
                removeTarget: try await environment.registerWebhookTarget(
                    url: inbox.url, provider: Provider.bahn.name, emulatorBase: "BAHN_API_URL"))
        } catch {
            inbox.shutdown()
            throw error
        }
        let stop = DispatchSemaphore(value: 0)
        onTerminationSignals { stop.signal() }
        console.whenReaderGone { stop.signal() }
        console.err("listening for Bahn webhooks at \(inbox.url)")
        // An embedded emulator ends with this command and takes no other command's requests: nothing will ever deliver.
        if environment.emulator != nil {
            console.err(
                "warning: no `checkout-driver sandbox serve` is running, so nothing under --env local will deliver here; start it in another terminal first"
            )
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                stop.wait()
                done.resume()
            }
        }
        await service.stop()
        inbox.waitUntilShutdown()
        return .ok
    }

    // MARK: -

    /// `--amount` as typed, read in minor units in `--currency` as typed (each checked here, the currency first); nil
    /// for an option left out.
    private static func amount(
        _ amount: String?, currency code: String?
    ) throws(Diagnostic) -> (minorUnits: Int?, currency: Currency?) {
        let currency = try code.map { (code) throws(Diagnostic) in try Currency.parse(code) }
        guard let amount else { return (nil, currency) }
        return (try Amount.parse(option: "--amount", amount, notation: .minorUnits, currency: currency), currency)
    }

    /// The arguments of `bahn.getIntent`, `bahn.capture` and `bahn.cancel`: the intent (an id, or a template), or
    /// none for the state file's last one.
    private static func onIntent(_ intent: String?) -> BahnOperations.OnIntent {
        var arguments = BahnOperations.OnIntent()
        arguments.intent = intent
        return arguments
    }

    private static func run(
        _ invocation: Invocation, step: String, _ action: Step.Action
    ) async throws(Diagnostic) -> ExitCode {
        try await run(invocation, flow: Flow(name: "bahn-\(step)", steps: [Step(name: step, action: action)]))
    }

    /// Runs the command's flow and, in text mode, prints what a person wants to see of the intent.
    private static func run(_ invocation: Invocation, flow: Flow) async throws(Diagnostic) -> ExitCode {
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        let result = try await environment.session.run(flow, vars: [:], registry: Operations.registry)
        if environment.settings.output.format == .text,
            var output = result.steps.first(where: { $0.output != nil })?.output
        {
            // Confirm's output carries the card and key details; a later poll has the intent's latest state.
            if let latest = result.steps.last(where: { $0.output != nil && $0.name != result.steps.first?.name })?
                .output?["payment_intent"],
                var object = output.objectValue
            {
                object["payment_intent"] = latest
                output = .object(object)
            }
            for line in summary(output, redactor: environment.redactor) { environment.console.out(line) }
        }
        if let failure = result.failure { throw failure }
        return .ok
    }

    static func summary(_ output: JSON, redactor: Redactor) -> [String] {
        guard let intent = output["payment_intent"] else { return [] }
        var lines: [String] = []
        let id = intent["id"]?.interpolationText ?? "?"
        let status = intent["status"]?.interpolationText ?? "?"
        lines.append("payment_intent \(id)  \(status)")
        if let amount = intent["amount"], let currency = intent["currency"]?.stringValue {
            let alpha = Currency.alphabetic(forNumeric: currency).map { " (\($0))" } ?? ""
            lines.append("amount          \(amount.interpolationText) \(currency)\(alpha)")
        }
        if let s = output["summary"] {
            if let last4 = s["last4"]?.stringValue {
                lines.append(
                    "card            \(s["brand"]?.stringValue ?? "card") ····\(last4) via \(s["wallet"]?.stringValue ?? "?")  (device token ····\(s["dynamicLast4"]?.stringValue ?? "?"))"
                )
            }
            if let key = s["idempotencyKey"]?.stringValue { lines.append("idempotency key \(key)") }
        }
        if let charge = intent["latest_charge_id"]?.stringValue { lines.append("charge          \(charge)") }
        if let error = intent["last_payment_error"], error != .null {
            lines.append(
                "last error      \(error["code"]?.interpolationText ?? "") \(error["decline_code"]?.interpolationText ?? ""): \(error["message"]?.interpolationText ?? "")"
            )
        }
        return lines.map(redactor.text)
    }
}
