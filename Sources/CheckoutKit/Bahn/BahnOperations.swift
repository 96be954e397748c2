import Foundation

/// The Bahn operations a flow step can `use`. Each is one logical Bahn call (confirm also reads the resulting
/// PaymentMethod, for the funding and device last 4); the engine supplies retries, polling and reporting.
public enum BahnOperations {
    public static var all: [FlowOperation] { [createIntent, confirm, getIntent, capture, cancel, awaitWebhook] }

    /// What a step outputs that answers with the PaymentIntent.
    static let intentOutputs: [FlowOperation.Output] = [
        .init("payment_intent", "the PaymentIntent as Bahn returned it"),
        .init("payment_intent.id", "its id (pi_…)"),
        .init("payment_intent.status", "requires_payment_method, requires_capture, succeeded, canceled, …"),
        .init("payment_intent.amount", "minor units"),
        .init("payment_intent.currency", "ISO 4217 numeric code"),
        .init("payment_intent.latest_charge_id", "the latest charge (null before a confirm)"),
    ]

    /// An intent's amount: Bahn takes minor units, so digits are minor units and a decimal is the currency's major
    /// units.
    static let amountHelp = "digits are minor units (8000), a decimal is major units (80.00 USD)"

    /// `bahn.createIntent`'s arguments.
    public struct CreateIntent: OperationArguments {
        public var amount = 0  // required: read before the body runs
        public var currency: Currency = .usd  // required: read before the body runs
        public var description: String?
        public var orderID: String?
        public var metadata: JSON.Object?

        public init() {}

        public static let arguments: [Argument<CreateIntent>] = [
            .amount("amount", \.amount, .minorUnits, currency: "currency", help: amountHelp),
            .currency("currency", \.currency, help: "numeric (704) or alphabetic (VND)"),
            .string("description", \.description, multiline: true), .string("orderId", \.orderID),
            .object("metadata", \.metadata),
        ]
    }

    public static let createIntent = FlowOperation(
        name: "bahn.createIntent", summary: "Create a PaymentIntent (amount in minor units, currency ISO 4217).",
        arguments: CreateIntent.self,
        requiredConfiguration: BahnClient.requiredConfiguration, stateCheck: BahnState.check,
        argumentCheck: BahnClient.keysCheck,
        outputs: intentOutputs
    ) { (args: CreateIntent, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = try BahnClient(context)
        let body = createBody(
            amount: args.amount, currency: args.currency, description: args.description, metadata: args.metadata,
            orderID: args.orderID)
        let response = try await client.post(
            BahnProtocol.createPath, body: body,
            idempotencyKey: BahnProtocol.createIdempotencyKey(orderID: args.orderID))
        let document = try response.requireSuccess("create-intent")
        if let intent = response.intent {
            try BahnState(store: context.state).record(intent: intent, orderID: args.orderID)
        }
        return StepOutput(document: document, status: response.status)
    }

    static func createBody(
        amount: Int, currency: Currency, description: String?, metadata: JSON.Object?, orderID: String?
    ) -> JSON {
        var metadata: JSON.Object = metadata?.mapValues { JSON.string($0.interpolationText) } ?? [:]
        if let orderID { metadata["order_id"] = .string(orderID) }
        var body: JSON.Object = ["amount": .number(amount), "currency": .string(currency.numeric)]
        if let description { body["description"] = .string(description) }
        if !metadata.isEmpty { body["metadata"] = .object(metadata) }
        return .object(body)
    }

    /// `bahn.confirm`'s arguments.
    public struct Confirm: OperationArguments {
        public enum CaptureMethod: String, CaseIterable, Sendable { case manual, automatic }
        public var intent: String?
        public var orderID: String?
        public var tokenFile = ""  // required: read before the body runs
        public var captureMethod: CaptureMethod?
        public var idempotencyKey: String?
        public var amount: Int?
        public var currency: Currency?
        public var description: String?

        public init() {}

        public static let arguments: [Argument<Confirm>] = [
            .string("intent", \.intent, help: "the PaymentIntent id; or give orderId"),
            .string(
                "orderId", \.orderID,
                help: "the order: its intent from the state file, or a new one (then amount and currency)"),
            .string(
                "tokenFile", \.tokenFile, input: .paymentToken,
                help: "PKPaymentToken.paymentData, exactly as PassKit produced it"),
            .choice("captureMethod", \.captureMethod, help: "manual: authorise now, capture later"),
            .string(
                "idempotencyKey", \.idempotencyKey, default: "order-<order id>-applepay", help: "kept in the state file"
            ),
            .amount("amount", \.amount, .minorUnits, currency: "currency", help: amountHelp),
            .currency("currency", \.currency), .string("description", \.description, multiline: true),
        ]
    }

    public static let confirm = FlowOperation(
        name: "bahn.confirm",
        summary: "Confirm a PaymentIntent with an Apple Pay token file (sent byte for byte) under an idempotency key.",
        arguments: Confirm.self, requiredConfiguration: BahnClient.requiredConfiguration, stateCheck: BahnState.check,
        argumentCheck: BahnClient.keysCheck,
        outputs: intentOutputs + [
            .init("payment_method", "the PaymentMethod the confirm made (card, wallet, network token)"),
            .init("summary.intent", "the PaymentIntent id"),
            .init("summary.status", "the intent's status after the confirm"),
            .init("summary.charge", "the charge id"), .init("summary.amount", "minor units"),
            .init("summary.currency", "ISO 4217 numeric code"), .init("summary.brand", "card brand (visa, …)"),
            .init("summary.last4", "funding card's last 4"), .init("summary.dynamicLast4", "device token's last 4"),
            .init("summary.wallet", "apple_pay"), .init("summary.idempotencyKey", "the key the confirm was sent under"),
        ]
    ) { (args: Confirm, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = try BahnClient(context)
        let state = BahnState(store: context.state)
        // Read and check the token before anything is sent: a bad file must cost nothing.
        let token = try PaymentTokenFile.read(
            path: args.tokenFile, redactor: context.redactor, files: context.services.madeFiles)
        let captureMethod = args.captureMethod?.rawValue

        var orderID = args.orderID
        var intentID = args.intent
        if intentID == nil, let orderID { intentID = try state.intentID(forOrder: orderID) }
        // A token this state file sent to another intent is refused before anything — an intent for it included — is
        // made.
        try state.checkUnusedElsewhere(token, intent: intentID)
        // A token that paid anywhere this file saw (another run, another provider) never gets a new intent.
        if intentID == nil {
            try context.refuseIfSpent(token.transactionId, kind: "Apple Pay token", fix: BahnState.freshTokenHint)
        }
        if intentID == nil {
            guard let orderID else {
                throw .usage("confirm needs an intent id or an order id", hint: "pass --intent ID or --order-id ID")
            }
            guard let amount = args.amount, let currency = args.currency else {
                // Under an embedded emulator the state file is this command's own: an earlier create-intent is gone.
                let hint =
                    context.services.emulatorEndsWithRun
                    ? "the embedded emulator (--env local) and its state end with each command: start `checkout-driver sandbox serve` to chain commands, or add --amount N --currency CODE"
                    : "add --amount N --currency CODE, or pass --intent ID"
                throw .usage(
                    "order \(orderID) has no intent in the state file yet; give its amount and currency to create one",
                    hint: hint)
            }
            let body = createBody(
                amount: amount, currency: currency, description: args.description, metadata: nil, orderID: orderID)
            let created = try await client.post(
                BahnProtocol.createPath, body: body,
                idempotencyKey: BahnProtocol.createIdempotencyKey(orderID: orderID))
            _ = try created.requireSuccess("create-intent")
            guard let intent = created.intent, let id = intent["id"]?.stringValue else {
                throw .unavailable(
                    "Bahn's create response has no payment_intent.id",
                    hint: "check BAHN_API_URL points at Bahn's API (see it with -v)")
            }
            try state.record(intent: intent, orderID: orderID)
            context.note("created \(id) for order \(orderID)")
            intentID = id
        }
        let intent = intentID!
        if orderID == nil { orderID = try state.orderID(forIntent: intent) }

        let explicitKey = args.idempotencyKey
        let proposed =
            explicitKey ?? orderID.map(BahnProtocol.confirmIdempotencyKey(orderID:))
            ?? BahnProtocol.confirmIdempotencyKey(intent: intent)
        var prior = try state.priorCharge(intent: intent)
        if prior == .unknown,
            let seen = await context.enrichment(
                "the intent \(intent) as it was before this confirm",
                {
                    () async throws(Diagnostic) -> JSON? in try await client.get(BahnProtocol.intentPath(intent)).intent
                }), let seen
        {
            // An intent this state file never saw: its charge now tells a later read-back whether this confirm got
            // through.
            try state.record(intent: seen, orderID: orderID)
            prior = .known(seen["latest_charge_id"]?.stringValue)
        }
        let (key, isNewAttempt) = try state.confirmKey(
            intent: intent, proposed: proposed, explicit: explicitKey != nil, token: token)
        if isNewAttempt { context.note("a new token for \(intent): confirming under a new idempotency key, \(key)") }
        try context.refuseIfSpent(
            token.transactionId, kind: "Apple Pay token", replay: BahnState.replay(intent: intent, key: key),
            fix: BahnState.freshTokenHint)

        // The token goes in as a JSON string whose characters are exactly the file's: the serializer escapes
        // only what JSON requires, so Bahn decodes the very bytes PassKit produced.
        var body: JSON.Object = [
            "payment_method_data": ["apple_pay": ["token": .string(String(decoding: token.bytes, as: UTF8.self))]]
        ]
        if let captureMethod { body["capture_method"] = .string(captureMethod) }
        let confirmBody = JSON.object(body)
        var readBack = BahnReadBack.confirm(
            intent: intent, orderID: orderID, token: token, key: key, captureMethod: captureMethod,
            prior: prior, client: client, state: state)
        readBack.spends = [SpentCredentials.key("Apple Pay token", token.transactionId)]
        return try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
            let response = try await client.post(
                BahnProtocol.confirmPath(intent), body: confirmBody, idempotencyKey: key)
            // Any answer about the token itself means it is spent (a decline uses it up too).
            if response.status == 200 || response.status == BahnProtocol.declineStatus
                || response.error?.code == BahnProtocol.tokenAlreadyUsedCode
            {
                try state.markSpent(token.transactionId, intent: intent, key: key)
            }
            if response.replayed { context.note("Bahn replayed the original response for idempotency key \(key)") }
            // A decline still changes the intent (a new charge, the error): remember it, so that a later read-back can
            // tell this attempt's charge from the next one's.
            if response.status == BahnProtocol.declineStatus, let declined = response.intent {
                try state.record(intent: declined, orderID: orderID)
            }
            let document = try response.requireSuccess("confirm", intent: intent)
            guard let confirmed = response.intent else {
                throw .uncertain(
                    "Bahn's confirm answer has no payment_intent",
                    hint: "check BAHN_API_URL points at Bahn's API (see it with -v)")
            }
            return try await confirmedOutput(
                document, intent: confirmed, orderID: orderID, key: key, status: response.status,
                client: client, state: state)
        }
    }

    /// A confirmed intent as the step's output: the document, the PaymentMethod (only an enrichment: a failed read
    /// is a warning, never a failed confirm) and the summary people want.
    static func confirmedOutput(
        _ document: JSON, intent: JSON, orderID: String?, key: String, status: Int,
        client: BahnClient, state: BahnState
    ) async throws(Diagnostic) -> StepOutput {
        let context = client.context
        try state.record(intent: intent, orderID: orderID)
        if intent["status"]?.stringValue == "processing" {
            context.note("Bahn returned processing: complete the wallet sheet now and reconcile from the webhook")
        }
        var output = document.objectValue ?? [:]
        if let pm = intent["payment_method_id"]?.stringValue {
            output["payment_method"] = await context.enrichment("the payment method \(pm) (card brand and last 4)") {
                () async throws(Diagnostic) -> JSON in
                try await client.get(BahnProtocol.paymentMethodPath(pm)).requireSuccess("payment method \(pm)")
            }
        }
        output["summary"] = summary(intent: intent, paymentMethod: output["payment_method"], idempotencyKey: key)
        return StepOutput(document: .object(output), status: status)
    }

    /// The fields people want from a confirm: status, amount, funding last 4, wallet, device last 4, charge.
    static func summary(intent: JSON, paymentMethod: JSON?, idempotencyKey: String) -> JSON {
        var s: JSON.Object = [:]
        s["intent"] = intent["id"]
        s["status"] = intent["status"]
        s["amount"] = intent["amount"]
        s["currency"] = intent["currency"]
        s["charge"] = intent["latest_charge_id"]
        s["idempotencyKey"] = .string(idempotencyKey)
        let card = paymentMethod?["card"]
        s["brand"] = card?["brand"]
        s["last4"] = card?["last4"]
        s["wallet"] = card?["wallet"]?["type"]
        s["dynamicLast4"] = card?["network_token"]?["dynamic_last4"]
        if let error = intent["last_payment_error"], error != .null { s["lastPaymentError"] = error }
        return .object(s.filter { $0.value != .null })
    }

    /// The arguments of the operations on one intent: which.
    public struct OnIntent: OperationArguments {
        public var intent: String?

        public init() {}

        public static let arguments: [Argument<OnIntent>] = [
            .string("intent", \.intent, default: "the state file's last intent", help: "the intent id")
        ]
    }

    public static let getIntent = FlowOperation(
        name: "bahn.getIntent", summary: "Read a PaymentIntent (the status poll).", arguments: OnIntent.self,
        requiredConfiguration: BahnClient.requiredConfiguration, stateCheck: BahnState.check,
        argumentCheck: BahnClient.keysCheck,
        outputs: intentOutputs
    ) { (args: OnIntent, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = try BahnClient(context)
        let id = try BahnState(store: context.state).intent(args.intent, for: "intent")
        let response = try await client.get(BahnProtocol.intentPath(id))
        let document = try response.requireSuccess("intent \(id)", intent: id)
        if let intent = response.intent { try BahnState(store: context.state).record(intent: intent, orderID: nil) }
        // An intent in a final state settles whatever was left open on it: nothing more can happen to it. One that
        // waits for its capture settles the confirm (it authorised), not a capture left open.
        if let status = response.intent?["status"]?.stringValue {
            if BahnProtocol.finalStatuses.contains(status) {
                context.settledOpenOutcomes(provider: "bahn", reference: "intent \(id)", "\(id) is \(status)")
            } else if status == BahnProtocol.authorisedStatus {
                context.settledOpenOutcomes(
                    provider: "bahn", reference: "intent \(id)", effect: BahnReadBack.confirmEffect,
                    "\(id) is \(status): the confirm authorised it")
            }
        }
        return StepOutput(document: document, status: response.status)
    }

    public static let capture = intentAction(
        name: "bahn.capture", summary: "Capture an authorised PaymentIntent (manual capture).",
        path: BahnProtocol.capturePath, key: BahnProtocol.captureIdempotencyKey,
        readBack: BahnReadBack.capture)
    public static let cancel = intentAction(
        name: "bahn.cancel", summary: "Cancel a PaymentIntent.",
        path: BahnProtocol.cancelPath, key: BahnProtocol.cancelIdempotencyKey,
        readBack: BahnReadBack.cancel)

    /// capture and cancel: a signed empty-object POST on the intent under its own idempotency key; both move money
    /// (a capture takes it, a cancel voids an authorisation), so a lost answer is read back from the intent.
    private static func intentAction(
        name: String, summary: String, path: @escaping @Sendable (String) -> String,
        key: @escaping @Sendable (String) -> String,
        readBack: @escaping @Sendable (String, BahnClient) -> ReadBack
    ) -> FlowOperation {
        FlowOperation(
            name: name, summary: summary, arguments: OnIntent.self,
            requiredConfiguration: BahnClient.requiredConfiguration,
            stateCheck: BahnState.check, argumentCheck: BahnClient.keysCheck,
            outputs: intentOutputs
        ) { (args: OnIntent, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            let client = try BahnClient(context)
            let id = try BahnState(store: context.state).intent(args.intent, for: String(name.dropFirst(5)))
            return try await context.reconciling(readBack(id, client)) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.post(path(id), body: .object([:]), idempotencyKey: key(id))
                let document = try response.requireSuccess("\(name.dropFirst(5)) \(id)", intent: id)
                if let intent = response.intent {
                    try BahnState(store: context.state).record(intent: intent, orderID: nil)
                }
                return StepOutput(document: document, status: response.status)
            }
        }
    }

    /// `bahn.awaitWebhook`'s arguments.
    public struct AwaitWebhook: OperationArguments {
        public var type = ""  // required: read before the body runs
        public var intent: String?
        public var timeout: Double?

        public init() {}

        public static let arguments: [Argument<AwaitWebhook>] = [
            .string("type", \.type, help: BahnProtocol.eventTypes.joined(separator: ", ")),
            .string("intent", \.intent),
            .duration("timeout", \.timeout, default: "30s", help: "seconds or a duration (\"2m\")"),
        ]
    }

    public static let awaitWebhook = FlowOperation(
        name: "bahn.awaitWebhook", summary: "Wait for a webhook event of a type (for an intent) to arrive, verified.",
        arguments: AwaitWebhook.self, requiredConfiguration: ["BAHN_WEBHOOK_SECRET"],
        outputs: [
            .init("id", "the event id (evt_…)"), .init("type", "the event type"),
            .init("intent", "the PaymentIntent it is about"),
            .init("status", "the intent's status in the event"), .init("event", "the verified event as Bahn sent it"),
        ]
    ) { (args: AwaitWebhook, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        guard let listener = context.services.service(BahnWebhookService.self) else {
            throw .configuration(
                "no webhook listener in this run", hint: "set BAHN_WEBHOOK_SECRET so the run can verify Bahn's webhooks"
            )
        }
        let type = args.type
        let intent = args.intent
        var timeout = args.timeout ?? BahnProtocol.walletSheetBudget
        var cutByDeadline = false
        if let remaining = context.deadline.remaining, remaining < timeout {
            timeout = max(0, remaining)
            cutByDeadline = true
        }
        let found = await listener.events.wait(for: type, intent: intent, timeout: timeout, from: listener.firstEvent)
        if Task.isCancelled { throw .interrupted(during: context.step) }
        guard let event = found else {
            // The runs of a batch share the inbox: the latest few of what it received, and how many more.
            let received = listener.events.received
            var seen = received.suffix(5).map { "\($0.type) \($0.intentID ?? "")" }
            if received.count > 5 { seen.append("\(received.count - 5) earlier") }
            // The budget named is the one that ended the wait: the step's timeout, or the flow's deadline.
            let waited =
                cutByDeadline
                ? "before the flow's deadline of \(FlowRunner.format(context.deadline.seconds ?? 0))s"
                : "within \(FlowRunner.format(timeout))s"
            throw .failure(
                "no \(type) webhook\(intent.map { " for \($0)" } ?? "") \(waited)",
                hint: seen.isEmpty
                    ? "no webhook arrived at \(listener.url ?? "this run's listener") at all: is Bahn configured to deliver there?"
                    : "received instead: \(seen.joined(separator: "; "))")
        }
        return StepOutput(document: [
            "id": .string(event.id), "type": .string(event.type),
            "intent": event.intentID.map(JSON.string) ?? .null,
            "status": event.status.map(JSON.string) ?? .null, "event": event.body,
        ])
    }
}
