import CheckoutKit
import Foundation

/// `checkout-driver cashapp …`: Cash App Pay through Afterpay from a shell. `pay` runs a whole built-in flow (the
/// server checkout, or the Afterpay Button); each single step is a one-step flow on the same engine, chained through
/// the state file; `approve` and `decline` play the customer on the emulator.
enum CashAppCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "cashapp",
            abstract: "Cash App Pay through Afterpay: the sign / validate flow, server checkout or Afterpay Button.",
            subcommands: [
                pay, checkout, sign, request, poll, validate, capture, auth, payment, confirm, approve, decline,
            ])
    }

    struct PayInput: CommandInput {
        enum Kind: String, CaseIterable, Sendable { case server, button }

        var flow = Kind.server
        /// Read in US dollars in the body: `.amount` has no default to show, and this one has 10.00.
        var amount: String?
        var email: String?
        var scope = CashAppProtocol.Scope.brand
        var authorize = false
        var approvalTimeout: Double?
        var pollInterval: Double?
        var cardOut: String?

        static let inputs: [Input<Self>] = [
            .choice("flow", \.flow, value: "KIND", help: "server or button.", default: .server),
            .value(
                "amount", \.amount, value: "DECIMAL", help: "The amount in US dollars: 10.00, or 10 for 10.00.",
                default: "10.00"),
            .identifier("email", \.email, value: "ADDRESS", help: "The consumer's e-mail."),
            .choice(
                "scope", \.scope, value: "ID",
                help: "The customer request's scope_id: the brand id or the merchant id.",
                default: .brand),
            .flag(
                "auth", \.authorize,
                help: "Server flow: authorise instead of capturing (capture later with `cashapp capture`)."),
            .seconds("approval-timeout", \.approvalTimeout, help: "How long to wait for the customer.", default: "120"),
            .seconds(
                "poll-interval", \.pollInterval,
                help: "Between reads of the customer request (Pay Kit reads every second).", default: "1"),
            .value(
                "card-out", \.cardOut, value: "FILE",
                help: "Button flow: write the full virtual card to this new file (mode 0600)."),
        ]
    }

    static let pay = CommandSpec(
        name: "pay",
        abstract:
            "The whole payment: checkout, sign, customer request, approval, then capture (or auth), or the button's virtual card.",
        discussion: """
            server (default): create checkout → sign-payment → customer request → wait for the approval → validate-payment
            → capture (--auth: authorise, then `cashapp capture`). button: v3 button → sign → customer request → approval
            → button/confirm → the one-time virtual card, shown masked (--card-out FILE writes it whole to a new 0600 file).
            The approval link is printed, and drawn as a QR code on a terminal for the Cash App sandbox app; against the
            emulator the customer approves by itself after a poll, or with `cashapp approve` from another terminal.
            """,
        input: PayInput.self
    ) { input, invocation throws(Diagnostic) in
        let button = input.flow == .button
        if button && input.authorize {
            throw invocation.usage("--auth is for the server flow; the button flow ends with a virtual card")
        }
        if !button && input.cardOut != nil {
            throw invocation.usage("--card-out is for --flow button (the server flow has no card)")
        }
        var options = CommandFlows.CashAppPay(
            amount: try Amount.parse(option: "--amount", input.amount!, notation: .majorUnits, currency: .usd))
        options.button = button
        options.authorize = input.authorize
        if let email = input.email { options.email = email }
        options.scope = input.scope
        options.approvalTimeout = try positiveSeconds(input.approvalTimeout, option: "approval-timeout", invocation)
        options.pollInterval = try positiveSeconds(input.pollInterval, option: "poll-interval", invocation)
        if let cardOut = input.cardOut {
            // Before anything is sent: a card must never be issued to a file that cannot take it.
            if FileManager.default.fileExists(atPath: cardOut) {
                throw invocation.usage(
                    "--card-out \(cardOut) already exists; the card is only ever written to a new file")
            }
            options.cardOut = cardOut
        }
        let flow = try CommandFlows.cashAppPay(options)
        return try await run(invocation, flow: flow)
    }

    struct CheckoutInput: CommandInput {
        var amount: Int?
        var email: String?
        var reference: String?
        /// Cash App Pay's one currency, which `--amount` is read in.
        var currency: Currency? { .usd }

        static let inputs: [Input<Self>] = [
            .amount(
                "amount", \.amount, .majorUnits, currency: \Self.currency, value: "DECIMAL",
                help: "The amount as a decimal string, e.g. 19.99.", required: true),
            .identifier("email", \.email, value: "ADDRESS", help: "The consumer's e-mail."),
            .identifier("reference", \.reference, value: "REF", help: "The merchant reference (your order id)."),
        ]
    }

    static let checkout = CommandSpec(
        name: "checkout",
        abstract: "Create an Afterpay checkout for Cash App Pay (starts the state file's checkout over).",
        input: CheckoutInput.self
    ) { input, invocation throws(Diagnostic) in
        // The step's currency is left at its USD, which `--amount` was read in.
        var arguments = CashAppOperations.Checkout()
        arguments.amount = input.amount!
        arguments.email = input.email
        arguments.merchantReference = input.reference
        return try await run(invocation, step: "checkout", .operation(CashAppOperations.checkout, arguments))
    }

    struct SignInput: CommandInput {
        var token: String?

        static let inputs: [Input<Self>] = [
            .identifier(
                "token", \.token, value: "T", help: "A checkout token from elsewhere [default: the state file's].")
        ]
    }

    static let sign = CommandSpec(
        name: "sign",
        abstract: "Sign the checkout token (sign-payment) and keep the signing data for the customer request.",
        input: SignInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppOperations.Sign()
        arguments.token = input.token
        return try await run(invocation, step: "sign", .operation(CashAppOperations.sign, arguments))
    }

    struct RequestInput: CommandInput {
        var scope = CashAppProtocol.Scope.brand
        var reference: String?

        static let inputs: [Input<Self>] = [
            .choice(
                "scope", \.scope, value: "ID", help: "scope_id: the brand id or the merchant id.", default: .brand),
            .identifier("reference", \.reference, value: "REF", help: "The request's reference_id."),
        ]
    }

    static let request = CommandSpec(
        name: "request", abstract: "Create the Cash App customer request and show its approval link (and QR code).",
        input: RequestInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppOperations.Request()
        arguments.scope = input.scope
        arguments.referenceId = input.reference
        return try await run(invocation, step: "request", .operation(CashAppOperations.request, arguments))
    }

    struct PollInput: CommandInput {
        var requestID: String?
        var approvalTimeout: Double?
        var pollInterval: Double?

        static let inputs: [Input<Self>] = [
            .argument(
                "REQUEST_ID", \.requestID, help: "The customer request (GRR_…) [default: the state file's].",
                optional: true),
            .seconds("approval-timeout", \.approvalTimeout, help: "How long to wait.", default: "120"),
            .seconds("poll-interval", \.pollInterval, help: "Between reads.", default: "1"),
        ]
    }

    static let poll = CommandSpec(
        name: "poll", abstract: "Wait for the customer's decision on the customer request.", input: PollInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppApproval.Poll()
        arguments.request = try requestID(input.requestID, invocation)
        arguments.timeout = try positiveSeconds(input.approvalTimeout, option: "approval-timeout", invocation)
        arguments.interval = try positiveSeconds(input.pollInterval, option: "poll-interval", invocation)
        return try await run(invocation, step: "approval", .operation(CashAppApproval.poll, arguments))
    }

    static let validate = CommandSpec(
        name: "validate", abstract: "Validate the approved order with Afterpay (only SUCCESS passes)."
    ) { invocation throws(Diagnostic) in
        try await run(invocation, step: "validate", .operation(CashAppOperations.validate, NoArguments()))
    }

    struct CaptureInput: CommandInput {
        var amount: Int?
        var reference: String?
        /// Cash App Pay's one currency, which `--amount` is read in.
        var currency: Currency? { .usd }

        static let inputs: [Input<Self>] = [
            .amount(
                "amount", \.amount, .majorUnits, currency: \Self.currency, value: "DECIMAL",
                help: "An authorised order: how much [default: all that is open]."),
            .identifier("reference", \.reference, value: "REF", help: "The merchant reference."),
        ]
    }

    static let capture = CommandSpec(
        name: "capture", abstract: "Capture the validated checkout, or the order `cashapp auth` authorised.",
        input: CaptureInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppPayments.Capture()
        // The operation reads the amount in the order's currency, which it learns as it runs: Cash App Pay's is always
        // USD, so the dollars `--amount` was read in are given as they were read.
        if let minor = input.amount {
            arguments.amount = try PendingAmount(Currency.usd.decimal(minor), notation: .majorUnits)
        }
        arguments.merchantReference = input.reference
        return try await run(invocation, step: "capture", .operation(CashAppPayments.capture, arguments))
    }

    struct AuthInput: CommandInput {
        var reference: String?

        static let inputs: [Input<Self>] = [
            .identifier("reference", \.reference, value: "REF", help: "The merchant reference.")
        ]
    }

    static let auth = CommandSpec(
        name: "auth", abstract: "Authorise the validated checkout, to capture later.", input: AuthInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppPayments.Auth()
        arguments.merchantReference = input.reference
        return try await run(invocation, step: "auth", .operation(CashAppPayments.auth, arguments))
    }

    struct PaymentInput: CommandInput {
        var order: String?

        static let inputs: [Input<Self>] = [
            .identifier("order", \.order, help: "The Afterpay order id [default: the state file's].")
        ]
    }

    static let payment = CommandSpec(
        name: "payment", abstract: "Read the checkout's payment (to settle an unknown outcome).",
        input: PaymentInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppPayments.Payment()
        arguments.order = input.order
        return try await run(invocation, step: "payment", .operation(CashAppPayments.payment, arguments))
    }

    struct ConfirmInput: CommandInput {
        var cardOut: String?

        static let inputs: [Input<Self>] = [
            .value("card-out", \.cardOut, value: "FILE", help: "Write the full card to this new file (mode 0600).")
        ]
    }

    static let confirm = CommandSpec(
        name: "confirm", abstract: "Afterpay Button: confirm the approved checkout and show the virtual card (masked).",
        input: ConfirmInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CashAppCard.Confirm()
        arguments.cardOut = input.cardOut
        return try await run(invocation, step: "confirm", .operation(CashAppCard.confirm, arguments))
    }

    static let approve = decision(
        .approve, abstract: "Emulator only: approve a customer request, as the customer would in Cash App.")
    static let decline = decision(
        .decline, abstract: "Emulator only: decline a customer request, as the customer would in Cash App.")

    /// `approve` and `decline`.
    struct DecisionInput: CommandInput {
        var requestID: String?

        static let inputs: [Input<Self>] = [
            .argument(
                "REQUEST_ID", \.requestID, help: "The customer request (GRR_…) [default: the state file's].",
                optional: true)
        ]
    }

    /// The command is named by its decision (`cashapp approve`, `cashapp decline`), as is its step.
    private static func decision(_ decision: CashAppOperations.Decide.Decision, abstract: String) -> CommandSpec {
        CommandSpec(
            name: decision.rawValue, abstract: abstract,
            discussion:
                "Run it in another terminal while `cashapp pay` waits, against a `sandbox serve` (an embedded emulator ends with its command). In the Cash App sandbox, scan the QR code with the sandbox app or open the approval link instead.",
            input: DecisionInput.self
        ) { input, invocation throws(Diagnostic) in
            var arguments = CashAppOperations.Decide()
            arguments.decision = decision
            arguments.request = try requestID(input.requestID, invocation)
            return try await run(
                invocation, step: decision.rawValue, .operation(CashAppOperations.decide, arguments), emulatorOnly: true
            )
        }
    }

    // MARK: -

    private static func positiveSeconds(
        _ value: Double?, option: String, _ invocation: Invocation
    ) throws(Diagnostic) -> Double {
        guard let value, value > 0 else {
            throw invocation.usage("--\(option) must be more than 0 seconds")
        }
        return value
    }

    private static func requestID(_ id: String?, _ invocation: Invocation) throws(Diagnostic) -> String? {
        guard let id else { return nil }
        guard id.hasPrefix("GRR_"),
            id.dropFirst(4).allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") })
        else {
            throw invocation.usage("REQUEST_ID must be a customer request id such as GRR_…, got '\(id)'")
        }
        return id
    }

    /// Runs the one-step flow `cashapp-<step>` whose step does `action`.
    private static func run(
        _ invocation: Invocation, step: String, _ action: Step.Action, emulatorOnly: Bool = false
    ) async throws(Diagnostic) -> ExitCode {
        let flow = Flow(name: "cashapp-\(step)", steps: [Step(name: step, action: action)])
        return try await run(invocation, flow: flow, emulatorOnly: emulatorOnly)
    }

    /// Runs the flow and, in text mode, prints what a person wants to see of each step that passed.
    private static func run(
        _ invocation: Invocation, flow: Flow, emulatorOnly: Bool = false
    ) async throws(Diagnostic) -> ExitCode {
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        if emulatorOnly && environment.configuration.kind != .local {
            throw .usage(
                "`cashapp \(flow.steps.first?.name ?? "approve")` plays the customer on the emulator only (--env local)",
                hint:
                    "in the Cash App sandbox, scan the approval link's QR code with the Cash App sandbox app, or open the link in a browser"
            )
        }
        return try await environment.session.runPrintingSummaries(flow, summary: summary)
    }

    static func summary(_ output: JSON) -> [String] {
        func text(_ value: JSON?) -> String { value?.interpolationText ?? "?" }
        let s = output["summary"]
        if let card = output["card"] {
            var lines = [
                "virtual card      \(text(card["type"])) \(text(card["number"]))  expires \(text(card["expiry"]))"
            ]
            if let left = card["secondsLeft"]?.intValue {
                lines.append("authorise before  \(text(card["validUntil"]))  (\(left / 60) min \(left % 60) s left)")
            }
            if let path = card["writtenTo"]?.stringValue {
                lines.append("card written to   \(path) (mode 0600; number and CVC are in it)")
            }
            return lines
        }
        if let signing = output["signing"] {
            return [
                "signed            \(text(signing["amountText"])) \(text(signing["currency"])) for \(text(signing["merchantId"]))  (\(text(signing["alg"])) JWT, kid \(text(signing["kid"])))"
            ]
        }
        if let validation = output["validation"] {
            return ["validated         \(text(validation["status"]))  \(text(validation["cashAppTag"]))"]
        }
        if output["payment"] != nil, let s {
            return [
                "payment           order \(text(s["orderId"]))  \(text(s["status"]))  \(text(s["paymentState"]))  \(text(s["amount"])) \(text(s["currency"]))  (open to capture \(text(s["openToCapture"])))"
            ]
        }
        if output["request"] != nil, let s {
            if let grant = s["grantId"], grant != .null {
                return [
                    "approved          by \(text(s["cashtag"]))  (customer \(text(s["customerId"])), grant \(text(grant)), after \(text(s["polls"])) polls)"
                ]
            }
            // Its status when made is always PENDING: what the customer decided comes after (approved, or the decline's
            // error).
            let status = s["status"]?.stringValue ?? "?"
            return ["customer request  \(text(s["id"]))  \(status == "PENDING" ? "sent to Cash App" : status)"]
        }
        if let s, s["cents"] != nil {
            return ["checkout          \(text(s["amount"])) \(text(s["currency"]))  (\(text(s["cents"])) cents)"]
        }
        return []
    }
}
