import Foundation

/// The Afterpay calls that move money — capture, auth, and the capture of an authorised order — and the read of a
/// payment that settles them when an answer is lost. Capture of a checkout is idempotent on its token and auth and
/// a deferred capture on their `requestId` (kept in the state file before the request goes out), so the engine may
/// repeat them; when it cannot tell what happened, the payment is read back by token or order id.
public enum CashAppPayments {
    /// What a step outputs that answers with the Afterpay payment.
    static let paymentOutputs: [FlowOperation.Output] = [
        .init("payment", "the payment as Afterpay returned it"), .init("summary.orderId", "the Afterpay order id"),
        .init("summary.status", "APPROVED or DECLINED"),
        .init("summary.paymentState", "AUTH_APPROVED, CAPTURED, PARTIALLY_CAPTURED, …"),
        .init("summary.amount", "the original amount, a decimal string"), .init("summary.currency", "ISO 4217 code"),
        .init("summary.openToCapture", "what is left to capture, a decimal string"),
    ]

    /// `cashapp.capture`'s arguments.
    public struct Capture: OperationArguments {
        /// How much of an authorised order to capture, in the order's currency (known once the order is read).
        public var amount: PendingAmount?
        public var merchantReference: String?

        public init() {}

        public static let arguments: [Argument<Capture>] = [
            .amount(
                "amount", \.amount, .majorUnits, default: "all that is open",
                help: "for an authorised order: how much to capture, in its currency's major units (19.99)"),
            .string("merchantReference", \.merchantReference),
        ]
    }

    public static let capture = FlowOperation(
        name: "cashapp.capture",
        summary:
            "Capture the payment: the whole checkout (POST /v2/payments/capture), or an authorised order (deferred capture).",
        arguments: Capture.self, requiredConfiguration: AfterpayClient.serverConfiguration,
        stateCheck: CashAppState.check,
        outputs: paymentOutputs
    ) { (args: Capture, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = AfterpayClient(context)
        let state = CashAppState(store: context.state)
        let section = try state.read()
        guard let token = section.token else {
            throw .usage(
                "no checkout to capture",
                hint: "run `checkout-driver cashapp pay --auth` or the single steps from `cashapp checkout` first")
        }
        if let order = section.orderID, let paymentState = section.paymentState,
            CashAppProtocol.capturableStates.contains(paymentState)
        {
            return try await deferredCapture(order, args: args, section: section, client: client, state: state)
        }
        if let order = section.orderID, let finalState = section.paymentState,
            CashAppProtocol.finalPaymentStates.contains(finalState)
        {
            throw .failure(
                "refused before sending: order \(order) is already \(finalState) (state file \(context.state?.path ?? "")); nothing more can be captured",
                hint:
                    "see it with `checkout-driver cashapp payment`; a new payment starts with `checkout-driver cashapp pay`"
            )
        }
        if args.amount != nil {
            throw .usage(
                "--amount is for an authorised order; a checkout is captured whole",
                hint: "authorise first (`checkout-driver cashapp auth`), or leave --amount out")
        }
        try requireValidated(section, action: "capture")
        try context.refuseIfSpent(
            token, kind: "Afterpay checkout",
            fix:
                "it is captured: nothing more to do (see it with `checkout-driver cashapp payment`); a new payment starts with `checkout-driver cashapp pay`"
        )
        var body: JSON.Object = ["token": .string(token)]
        body["merchantReference"] = args.merchantReference.map(JSON.string)
        var readBack = byToken(
            token, action: "capture", effect: "the capture", done: ["CAPTURED"], client: client, state: state,
            resend: ["cashapp", "capture"], replay: "capture of checkout \(OpenOutcome.fingerprint(token))",
            asked: asked(.charge, section))
        readBack.spends = [SpentCredentials.key("Afterpay checkout", token)]
        let output = try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
            let response = try await client.server(
                "POST", CashAppProtocol.capturePath, body: .object(body), idempotent: true)
            return try settled(
                try response.requireSuccess("capture"), status: response.status, action: "capture", state: state)
        }
        try context.markSpent(
            token, kind: "Afterpay checkout",
            by: "the capture of order \(output.document["payment"]?["id"]?.stringValue ?? "?")")
        return output
    }

    /// `cashapp.auth`'s arguments.
    public struct Auth: OperationArguments {
        public var merchantReference: String?

        public init() {}

        public static let arguments: [Argument<Auth>] = [.string("merchantReference", \.merchantReference)]
    }

    public static let auth = FlowOperation(
        name: "cashapp.auth",
        summary: "Authorise the payment (POST /v2/payments/auth), to capture later with cashapp.capture.",
        arguments: Auth.self, requiredConfiguration: AfterpayClient.serverConfiguration, stateCheck: CashAppState.check,
        outputs: paymentOutputs
    ) { (args: Auth, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = AfterpayClient(context)
        let state = CashAppState(store: context.state)
        let section = try state.read()
        guard let token = section.token else {
            throw .usage("no checkout to authorise", hint: "run `checkout-driver cashapp checkout` first")
        }
        try requireValidated(section, action: "auth")
        let requestID = try keptRequestID(\.authRequestID, state: state)
        var body: JSON.Object = ["token": .string(token), "requestId": .string(requestID)]
        body["merchantReference"] = args.merchantReference.map(JSON.string)
        let readBack = byToken(
            token, action: "auth", effect: "the authorisation",
            done: ["AUTH_APPROVED", "PARTIALLY_CAPTURED", "CAPTURED"],
            client: client, state: state, resend: ["cashapp", "auth"], replay: "auth request \(requestID)",
            asked: asked(.authorization, section))
        return try await forgettingOnRefusal(\.authRequestID, state: state) {
            () async throws(Diagnostic) -> StepOutput in
            try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.server(
                    "POST", CashAppProtocol.authPath, body: .object(body), idempotent: true)
                return try settled(
                    try response.requireSuccess("auth"), status: response.status, action: "auth", state: state)
            }
        }
    }

    /// `cashapp.payment`'s arguments.
    public struct Payment: OperationArguments {
        public var order: String?

        public init() {}

        public static let arguments: [Argument<Payment>] = [
            .string("order", \.order, default: "the state file's", help: "the Afterpay order id")
        ]
    }

    public static let payment = FlowOperation(
        name: "cashapp.payment", summary: "Read the checkout's payment (by order id, or by checkout token).",
        arguments: Payment.self, requiredConfiguration: AfterpayClient.serverConfiguration,
        stateCheck: CashAppState.check,
        outputs: paymentOutputs
    ) { (args: Payment, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = AfterpayClient(context)
        let state = CashAppState(store: context.state)
        let section = try state.read()
        let path: String
        if let order = args.order ?? section.orderID {
            path = CashAppProtocol.paymentPath(order)
        } else if let token = section.token {
            path = CashAppProtocol.paymentByTokenPath(token)
        } else {
            throw .usage("no payment to read", hint: "give --order ID, or run the checkout first")
        }
        let response = try await client.server("GET", path)
        let document = try response.requireSuccess("reading the payment")
        try record(document, state: state)
        // A payment in a final state settles what was left open on its checkout or order: nothing more can happen to
        // it.
        if let paymentState = document["paymentState"]?.stringValue,
            CashAppProtocol.finalPaymentStates.contains(paymentState)
        {
            let finding = "order \(document["id"]?.stringValue ?? "?") is \(paymentState)"
            if let token = section.token, args.order == nil || document["token"]?.stringValue == token {
                context.settledOpenOutcomes(
                    provider: "cashapp", reference: "checkout \(OpenOutcome.fingerprint(token))", finding)
            }
            if let order = document["id"]?.stringValue {
                context.settledOpenOutcomes(provider: "cashapp", reference: "order \(order)", finding)
            }
        }
        return StepOutput(document: ["payment": document, "summary": summary(document)], status: response.status)
    }

    // MARK: -

    private static func deferredCapture(
        _ order: String, args: Capture, section: CashAppSection, client: AfterpayClient,
        state: CashAppState
    ) async throws(Diagnostic) -> StepOutput {
        let context = client.context
        let before = try await client.server("GET", CashAppProtocol.paymentPath(order)).requireSuccess(
            "reading order \(order)")
        let currency =
            (try? Currency.parse(before["openToCaptureAmount"]?["currency"]?.stringValue ?? section.currency ?? "USD"))
            ?? .usd
        guard let open = before["openToCaptureAmount"]?["amount"]?.stringValue.flatMap(currency.minorUnits(ofDecimal:)),
            open > 0
        else {
            try record(before, state: state)
            // The settle command of a capture left open: the order captured whole means it went through; nothing open
            // in any other state (voided, expired) means it did not.
            let paymentState = before["paymentState"]?.stringValue ?? "?"
            if !(try context.openOutcomes(provider: "cashapp")).filter({ $0.reference == "order \(order)" }).isEmpty {
                try state.update { $0.captureRequestID = nil }
                if paymentState == "CAPTURED" {
                    context.settledOpenOutcomes(
                        provider: "cashapp", reference: "order \(order)", "already captured — nothing more to do")
                    return StepOutput(document: ["payment": before, "summary": summary(before)], status: 200)
                }
                context.settledOpenOutcomes(
                    provider: "cashapp", reference: "order \(order)",
                    "order \(order) is \(paymentState): the capture did not happen")
            }
            throw .failure(
                "order \(order) has nothing open to capture (\(paymentState))",
                hint: "see it with `checkout-driver cashapp payment`")
        }
        let amount = try args.amount?.minorUnits(in: currency) ?? open
        guard amount <= open else {
            throw .usage(
                "cannot capture \(currency.format(amount)): only \(currency.format(open)) of order \(order) is open to capture",
                hint: "give at most \(currency.decimal(open)), or leave --amount out to capture all of it")
        }
        let requestID = try keptRequestID(\.captureRequestID, state: state)
        var body: JSON.Object = [
            "amount": ["amount": .string(currency.decimal(amount)), "currency": .string(currency.code)],
            "requestId": .string(requestID),
        ]
        body["merchantReference"] = args.merchantReference.map(JSON.string)
        let readBack = ReadBack(
            provider: "cashapp", action: "capture", effect: "the capture", resource: "order \(order)",
            reference: "order \(order)",
            replay: "capture request \(requestID)",
            asked: MoneyMovement(
                provider: "cashapp", kind: .capture, outcome: .unknown, amount: amount, currency: currency.code,
                reference: "order \(order)"),
            shown: { output in movement(.capture, output, amount: amount) },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let now = try await client.server("GET", CashAppProtocol.paymentPath(order)).requireSuccess(
                    "reading order \(order)")
                guard
                    let left = now["openToCaptureAmount"]?["amount"]?.stringValue.flatMap(
                        currency.minorUnits(ofDecimal:))
                else {
                    return .notSeen(shows: "order \(order) shows no openToCaptureAmount")
                }
                if captured(amount, open: open, leftOpen: left, paymentState: now["paymentState"]?.stringValue) {
                    try record(now, state: state)
                    try state.update { $0.captureRequestID = nil }
                    return .tookEffect(
                        StepOutput(document: ["payment": now, "summary": summary(now)], status: 200),
                        shows: "\(currency.format(open - left)) was captured; \(currency.format(left)) is still open")
                }
                return .notSeen(shows: "\(currency.format(left)) is still open to capture, as before")
            },
            settle: { _ in
                settleWays(
                    ["cashapp", "capture", "--amount", currency.decimal(amount)], context: context,
                    replay: "its requestId \(requestID) is kept, so Afterpay answers a repeat with the first capture")
            })
        return try await forgettingOnRefusal(\.captureRequestID, state: state) {
            () async throws(Diagnostic) -> StepOutput in
            try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.server(
                    "POST", CashAppProtocol.deferredCapturePath(order), body: .object(body), idempotent: true)
                let output = try settled(
                    try response.requireSuccess("capture of order \(order)"), status: response.status,
                    action: "capture", state: state)
                try state.update { $0.captureRequestID = nil }  // the next partial capture is a new one
                return output
            }
        }
    }

    /// Capture and auth of an order the state file watched being approved: refused here, before anything is sent,
    /// unless Afterpay validated it (the integration guide: "Don't skip this step";
    /// docs/protocols/cashapp-afterpay.md).
    private static func requireValidated(_ section: CashAppSection, action: String) throws(Diagnostic) {
        guard section.flow == .server else {
            throw .usage(
                "an Afterpay Button checkout is paid with its virtual card, not with \(action)",
                hint: "see the card with `checkout-driver cashapp pay --flow button`")
        }
        if section.requestID != nil && !section.validated {
            throw .failure(
                "\(action) refused: Afterpay has not validated this Cash App order (validation was skipped or failed)",
                hint:
                    "run `checkout-driver cashapp validate` first; if it fails, start again with `checkout-driver cashapp pay`"
            )
        }
    }

    /// Runs a call made idempotent by the request id at `path`, and forgets the id when the call was definitely
    /// refused: the next attempt is a new request (a kept id would only replay the refusal). An open outcome keeps it.
    private static func forgettingOnRefusal(
        _ path: WritableKeyPath<CashAppSection, String?>, state: CashAppState,
        _ call: () async throws(Diagnostic) -> StepOutput
    ) async throws(Diagnostic) -> StepOutput {
        do { return try await call() } catch {
            if error.code != .outcomeUnknown && error.code != .interrupted && !error.outcomeUncertain {
                try state.update { $0[keyPath: path] = nil }
            }
            throw error
        }
    }

    /// The request id that makes a call idempotent: the one kept from an earlier attempt, or a new one kept now.
    private static func keptRequestID(
        _ path: WritableKeyPath<CashAppSection, String?>, state: CashAppState
    ) throws(Diagnostic) -> String {
        var id = ""
        try state.update { section in
            if section[keyPath: path] == nil { section[keyPath: path] = UUID.random().uuidString.lowercased() }
            id = section[keyPath: path]!
        }
        return id
    }

    /// A capture or auth answer: a decline (201 or 402, UNCONFIRMED which) fails the step; an approval is recorded.
    private static func settled(
        _ payment: JSON, status: Int, action: String, state: CashAppState
    ) throws(Diagnostic) -> StepOutput {
        try record(payment, state: state)
        if CashAppProtocol.isDecline(payment) {
            throw .failure(
                "Afterpay declined the \(action): status DECLINED, paymentState \(payment["paymentState"]?.stringValue ?? "?") (HTTP \(status))",
                hint: "nothing was charged; offer another payment method")
        }
        return StepOutput(document: ["payment": payment, "summary": summary(payment)], status: status)
    }

    private static func record(_ payment: JSON, state: CashAppState) throws(Diagnostic) {
        try state.update { section in
            if let id = payment["id"]?.stringValue { section.orderID = id }
            if let paymentState = payment["paymentState"]?.stringValue { section.paymentState = paymentState }
        }
    }

    /// What a call on the checkout would move, as the state file knows it (the checkout's amount).
    static func asked(
        _ kind: MoneyMovement.Kind, _ section: CashAppSection, amount: Int? = nil, reference: String? = nil
    ) -> MoneyMovement {
        MoneyMovement(
            provider: "cashapp", kind: kind, outcome: .unknown, amount: amount ?? section.amount,
            currency: section.currency ?? "USD",
            reference: reference ?? section.orderID)
    }

    /// A payment as the account shows it: the amount the call moved, the order, its status in words.
    static func movement(_ kind: MoneyMovement.Kind, _ output: StepOutput, amount: Int? = nil) -> MoneyMovement {
        let summary = output.document["summary"]
        let currency = summary?["currency"]?.stringValue ?? "USD"
        let original = summary?["amount"]?.stringValue.flatMap {
            ((try? Currency.parse(currency)) ?? .usd).minorUnits(ofDecimal: $0)
        }
        return MoneyMovement(
            provider: "cashapp", kind: kind, amount: amount ?? original, currency: currency,
            reference: summary?["orderId"]?.stringValue.map { "order \($0)" },
            status: MoneyMovement.words(summary?["status"]?.stringValue, summary?["paymentState"]?.stringValue))
    }

    static func summary(_ payment: JSON) -> JSON {
        [
            "orderId": payment["id"] ?? .null, "status": payment["status"] ?? .null,
            "paymentState": payment["paymentState"] ?? .null,
            "amount": payment["originalAmount"]?["amount"] ?? .null,
            "currency": payment["originalAmount"]?["currency"] ?? .null,
            "openToCapture": payment["openToCaptureAmount"]?["amount"] ?? .null,
        ]
    }

    /// Capture and auth of a checkout, read back by its token: a payment there is the call's outcome (Afterpay keeps
    /// one payment per checkout), a 404 means none was made yet.
    private static func byToken(
        _ token: String, action: String, effect: String, done: Set<String>, client: AfterpayClient,
        state: CashAppState, resend: [String], replay: String, asked: MoneyMovement
    ) -> ReadBack {
        ReadBack(
            provider: "cashapp", action: action, effect: effect, resource: "the checkout's payment",
            reference: "checkout \(OpenOutcome.fingerprint(token))", replay: replay, asked: asked,
            shown: { output in movement(asked.kind, output) },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let response = try await client.server("GET", CashAppProtocol.paymentByTokenPath(token))
                if response.status == 404 { return .notSeen(shows: "the checkout has no payment yet") }
                let payment = try response.requireSuccess("reading the checkout's payment")
                try record(payment, state: state)
                return finding(payment, action: action, done: done)
            },
            settle: { _ in
                settleWays(
                    resend, context: client.context,
                    replay: "Afterpay answers a repeat for the same checkout with the first payment")
            })
    }

    /// What a checkout's payment says of a lost capture or auth: a decline means nothing was charged; only a state in
    /// `done` is this call's effect (an authorisation, when this was a capture, is not).
    static func finding(_ payment: JSON, action: String, done: Set<String>) -> ReadBack.Finding {
        guard !CashAppProtocol.isDecline(payment) else {
            return .refused(
                .failure(
                    "Afterpay declined the \(action): paymentState \(payment["paymentState"]?.stringValue ?? "?")",
                    hint: "nothing was charged; offer another payment method"))
        }
        let paymentState = payment["paymentState"]?.stringValue ?? "?"
        guard done.contains(paymentState) else { return .notSeen(shows: "the checkout's payment is \(paymentState)") }
        return .tookEffect(
            StepOutput(document: ["payment": payment, "summary": summary(payment)], status: 200),
            shows: "order \(payment["id"]?.stringValue ?? "?") is \(paymentState)")
    }

    /// Whether a lost deferred capture of `amount` went through: the order shows a capture (a void or an expiry also
    /// empties what is open, and captures nothing) and what is left open to capture has dropped by at least that much
    /// since before it (a smaller drop is someone else's capture, not this one).
    static func captured(_ amount: Int, open: Int, leftOpen left: Int, paymentState: String?) -> Bool {
        guard let paymentState, CashAppProtocol.capturedStates.contains(paymentState) else { return false }
        return left <= open - amount
    }

    private static func settleWays(_ resend: [String], context: OperationContext, replay: String) -> [String] {
        func command(_ arguments: [String]) -> String {
            "`" + ShellWords.join(["checkout-driver"] + arguments + context.services.settleOptions) + "`"
        }
        return ["re-send it (\(replay)): \(command(resend))", "read the payment: \(command(["cashapp", "payment"]))"]
    }
}
