import CheckoutKit
import Foundation

/// `checkout-driver braintree …`: Braintree's Apple Pay from a shell, both halves — the client SDK's (the gateway
/// configuration, tokenization into a nonce) and the merchant server's (charge, or authorize and later capture;
/// void). Each command is a built-in flow (or a one-step one) on the shared engine.
enum BraintreeCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "braintree",
            abstract: "Braintree Apple Pay: configuration → nonce → charge, or authorize then capture.",
            subcommands: [config, applePay, capture, void, transaction, ping, clientToken])
    }

    /// `--client-token TOKEN`, which `config` and `apple-pay` take.
    static func clientTokenInput<Root>(_ path: WritableKeyPath<Root, String?> & Sendable) -> Input<Root> {
        .value(
            "client-token", path, value: "TOKEN",
            help: "Authorise the client API with a client token instead of BRAINTREE_TOKENIZATION_KEY.")
    }

    struct ConfigInput: CommandInput {
        var clientToken: String?

        static let inputs: [Input<Self>] = [clientTokenInput(\.clientToken)]
    }

    static let config = CommandSpec(
        name: "config",
        abstract: "Show the gateway's Apple Pay configuration (status, country, currency, merchant id, networks).",
        input: ConfigInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = BraintreeOperations.Config()
        arguments.clientToken = input.clientToken
        return try await run(invocation, step: "config", .operation(BraintreeOperations.config, arguments))
    }

    struct ApplePayInput: CommandInput {
        var tokenFile: String?
        var nonce: String?
        /// Read in the body, in `--currency` (declared after it, and parsed as `Currency.parse` says).
        var amount: String?
        var authorizeOnly = false
        var orderID: String?
        /// The code as typed: nil when left out (the gateway's currency is then not checked; amounts are in USD).
        var currency: String?
        var network: String?
        var clientToken: String?

        static let inputs: [Input<Self>] = [
            .value("token-file", \.tokenFile, value: "FILE", help: "PKPaymentToken.paymentData, byte for byte."),
            .identifier("nonce", \.nonce, value: "NONCE", help: "A payment method nonce (skips tokenization)."),
            .value(
                "amount", \.amount, value: "DECIMAL",
                help: "The amount in the currency's major units, e.g. 10.00 (10 is 10.00).", required: true),
            .flag(
                "authorize-only", \.authorizeOnly, help: "Authorize now; capture later with `braintree capture TXN`."),
            .identifier("order-id", \.orderID, help: "The transaction's orderId [default: a new one]."),
            .identifier(
                "currency", \.currency, value: "CODE",
                help: "The payment request's currency, checked against the gateway's [default: USD]."),
            .identifier(
                "network", \.network, value: "NAME", help: "The card network (paymentNetwork) [default: Visa]."),
            clientTokenInput(\.clientToken),
        ]
    }

    static let applePay = CommandSpec(
        name: "apple-pay",
        abstract: "Pay with Apple Pay: configuration, tokenize the token into a nonce, then charge (or authorize).",
        discussion: """
            --token-file F tokenizes PKPaymentToken.paymentData byte for byte; --nonce N skips tokenization (the sandbox's
            fake nonces fake-apple-pay-visa-nonce, -mastercard-, -amex- smoke-test a real sandbox with no device). Under
            --env local with neither, a test token is made for the amount. The driver always sets an orderId (a new one
            unless --order-id), so a charge whose answer is lost is found again instead of being repeated.
            """,
        input: ApplePayInput.self
    ) { input, invocation throws(Diagnostic) in
        if input.tokenFile != nil && input.nonce != nil {
            throw invocation.usage("give --token-file FILE or --nonce NONCE, not both")
        }
        let currency = try Currency.parse(input.currency ?? "USD")
        var options = CommandFlows.BraintreeApplePay(
            amount: try amount(input.amount, in: currency) ?? 0)
        options.authorizeOnly = input.authorizeOnly
        options.currency = currency
        if let network = input.network { options.network = network }
        options.tokenFile = input.tokenFile
        options.nonce = input.nonce
        options.clientToken = input.clientToken
        options.orderID = input.orderID
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        if options.nonce != nil {
            if environment.configuration.value("BRAINTREE_TOKENIZATION_KEY") == nil && options.clientToken == nil {
                options.skipConfiguration = true
                environment.console.err(
                    "note: no BRAINTREE_TOKENIZATION_KEY or --client-token: the gateway's configuration (and the --currency and --network checks) is skipped"
                )
            }
        } else if options.tokenFile == nil && environment.configuration.kind != .local {
            throw invocation.usage(
                "give --token-file FILE (a token from the phone) or --nonce NONCE outside --env local (a made token only works with the emulator)"
            )
        }
        let flow = CommandFlows.braintreeApplePay(options)
        return try await show(environment, flow: flow)
    }

    struct CaptureInput: CommandInput {
        var transaction: String?
        /// Read in the body, in `--currency` (declared after it, and parsed as `Currency.parse` says).
        var amount: String?
        var currency: String?

        static let inputs: [Input<Self>] = [
            .identifier(argument: "TXN", \.transaction, help: "The transaction id."),
            .value(
                "amount", \.amount, value: "DECIMAL",
                help: "Less than authorized: a partial capture, in major units (10.00)."),
            .identifier(
                "currency", \.currency, value: "CODE",
                help: "The merchant account's currency, how --amount is read [default: USD]."),
        ]
    }

    static let capture = CommandSpec(
        name: "capture", abstract: "Capture an authorized transaction.", input: CaptureInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = BraintreeOperations.Capture()
        arguments.transaction = try transactionID(input.transaction, invocation)
        let currency = try Currency.parse(input.currency ?? "USD")
        if let minor = try amount(input.amount, in: currency) {
            // The step reads the amount in its currency's text, which the money movement records: the code, not the
            // option as typed (840 is USD). A whole capture leaves both out.
            arguments.amount = minor
            arguments.currency = currency.code
        }
        return try await run(invocation, step: "capture", .operation(BraintreeOperations.capture, arguments))
    }

    struct VoidInput: CommandInput {
        var transaction: String?

        static let inputs: [Input<Self>] = [.identifier(argument: "TXN", \.transaction, help: "The transaction id.")]
    }

    static let void = CommandSpec(
        name: "void", abstract: "Void an authorized or submitted transaction (reverseTransaction).",
        input: VoidInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = BraintreeOperations.VoidTransaction()
        arguments.transaction = try transactionID(input.transaction, invocation)
        return try await run(invocation, step: "void", .operation(BraintreeOperations.void, arguments))
    }

    struct TransactionInput: CommandInput {
        var transaction: String?
        var orderID: String?

        static let inputs: [Input<Self>] = [
            .identifier(argument: "TXN", \.transaction, help: "The transaction id.", optional: true),
            .identifier("order-id", \.orderID, help: "Find the transactions of this orderId instead."),
        ]
    }

    static let transaction = CommandSpec(
        name: "transaction",
        abstract: "Read a transaction, or find an order's transactions (to settle an unknown outcome).",
        input: TransactionInput.self
    ) { input, invocation throws(Diagnostic) in
        guard input.transaction != nil || input.orderID != nil else {
            throw invocation.usage("give TXN or --order-id ID")
        }
        var arguments = BraintreeOperations.Transaction()
        if input.transaction != nil { arguments.transaction = try transactionID(input.transaction, invocation) }
        arguments.orderID = input.orderID
        return try await run(invocation, step: "transaction", .operation(BraintreeOperations.transaction, arguments))
    }

    static let ping = CommandSpec(name: "ping", abstract: "query { ping }: check the API keys and the endpoint.") {
        invocation throws(Diagnostic) in
        try await run(invocation, step: "ping", .operation(BraintreeOperations.ping, NoArguments()))
    }

    struct ClientTokenInput: CommandInput {
        var merchantAccount: String?
        var customer: String?

        static let inputs: [Input<Self>] = [
            .identifier("merchant-account", \.merchantAccount, help: "The merchant account."),
            .identifier("customer", \.customer, help: "A vaulted customer."),
        ]
    }

    static let clientToken = CommandSpec(
        name: "client-token", abstract: "Create a client token (createClientToken) and print it.",
        input: ClientTokenInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = BraintreeOperations.ClientToken()
        arguments.merchantAccountID = input.merchantAccount
        arguments.customerID = input.customer
        let flow = Flow(
            name: "braintree-client-token",
            steps: [Step(name: "client-token", action: .operation(BraintreeOperations.clientToken, arguments))])
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        let result = try await environment.session.run(flow, vars: [:], registry: Operations.registry)
        if let failure = result.failure { throw failure }
        // The token is this command's product, so stdout gets it as it is; every other output masks it.
        if environment.settings.output.format == .text,
            let token = result.steps.last?.output?["clientToken"]?.stringValue
        {
            environment.console.out(token)
        }
        return .ok
    }

    // MARK: -

    /// `--amount`'s text read in `currency`'s major units.
    private static func amount(_ text: String?, in currency: Currency) throws(Diagnostic) -> Int? {
        guard let text else { return nil }
        return try Amount.parse(option: "--amount", text, notation: .majorUnits, currency: currency)
    }

    private static func transactionID(_ id: String?, _ invocation: Invocation) throws(Diagnostic) -> String {
        guard let id, !id.isEmpty else {
            throw invocation.usage("give the transaction id")
        }
        return id
    }

    /// Runs the one-step flow `braintree-<step>` whose step does `action`.
    private static func run(
        _ invocation: Invocation, step: String, _ action: Step.Action
    ) async throws(Diagnostic) -> ExitCode {
        let flow = Flow(name: "braintree-\(step)", steps: [Step(name: step, action: action)])
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        return try await show(environment, flow: flow)
    }

    private static func show(_ environment: RunEnvironment, flow: Flow) async throws(Diagnostic) -> ExitCode {
        try await environment.session.runPrintingSummaries(flow, summary: summary)
    }

    static func summary(_ output: JSON) -> [String] {
        func text(_ value: JSON?) -> String { value.map { $0 == .null ? "?" : $0.interpolationText } ?? "?" }
        if let s = output["summary"], output["configuration"] != nil {
            return [
                "apple pay         \(text(s["status"]))  (environment \(text(s["environment"])))",
                "country, currency \(text(s["countryCode"])), \(text(s["currencyCode"]))",
                "merchant id       \(text(s["merchantIdentifier"]))",
                "networks          \((s["supportedNetworks"]?.arrayValue ?? []).map(\.interpolationText).joined(separator: ", "))",
            ]
        }
        if let s = output["summary"], output["transaction"] != nil {
            var lines = output["nonce"]?.stringValue.map { ["nonce             \($0.prefix(6))… (masked)"] } ?? []
            lines += [
                "transaction       \(text(s["id"]))  \(text(s["status"]))  \(text(s["amount"])) \(text(s["currency"]))  (order \(text(s["orderId"])))",
                "card              \(text(s["cardType"])) \(text(s["last4"]))  (\(text(s["origin"])))",
            ]
            return lines
        }
        if output["nonce"] != nil {
            return ["tokenized         \(text(output["card"]?["details"]?["cardType"]))"]
        }
        if let refused = output["refused"]?.stringValue { return ["refused           \(refused)"] }
        if let pong = output["ping"]?.stringValue { return ["ping              \(pong)"] }
        return []
    }
}
