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

    static let clientTokenOption = OptionSpec(
        "client-token", value: "TOKEN",
        help: "Authorise the client API with a client token instead of BRAINTREE_TOKENIZATION_KEY.")

    static let config = CommandSpec(
        name: "config",
        abstract: "Show the gateway's Apple Pay configuration (status, country, currency, merchant id, networks).",
        options: [clientTokenOption]
    ) { invocation throws(Diagnostic) in
        try await run(
            invocation, step: "config", use: "braintree.config",
            with: ["clientToken": invocation.string("client-token").map(JSON.string)])
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
        options: [
            OptionSpec("token-file", value: "FILE", help: "PKPaymentToken.paymentData, byte for byte."),
            OptionSpec("nonce", value: "NONCE", help: "A payment method nonce (skips tokenization)."),
            OptionSpec(
                "amount", value: "DECIMAL", help: "The amount in the currency's major units, e.g. 10.00 (10 is 10.00).",
                required: true),
            OptionSpec("authorize-only", help: "Authorize now; capture later with `braintree capture TXN`."),
            OptionSpec("order-id", value: "ID", help: "The transaction's orderId [default: a new one]."),
            OptionSpec(
                "currency", value: "CODE",
                help: "The payment request's currency, checked against the gateway's [default: USD]."),
            OptionSpec("network", value: "NAME", help: "The card network (paymentNetwork) [default: Visa]."),
            clientTokenOption,
        ]
    ) { invocation throws(Diagnostic) in
        if invocation.isGiven("token-file") && invocation.isGiven("nonce") {
            throw invocation.usage("give --token-file FILE or --nonce NONCE, not both")
        }
        let currency = try Currency.parse(try invocation.identifier("currency") ?? "USD")
        var options = CommandFlows.BraintreeApplePay(
            amount: try invocation.amount(notation: .majorUnits, currency: currency) ?? 0)
        options.authorizeOnly = invocation.flag("authorize-only")
        options.currency = invocation.isGiven("currency") ? currency : nil
        options.network = try invocation.identifier("network")
        options.tokenFile = invocation.string("token-file")
        options.nonce = try invocation.identifier("nonce")
        options.clientToken = invocation.string("client-token")
        options.orderID = try invocation.identifier("order-id")
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
        let flow = try CommandFlows.braintreeApplePay(options, registry: Operations.registry)
        return try await show(environment, flow: flow)
    }

    static let capture = CommandSpec(
        name: "capture", abstract: "Capture an authorized transaction.",
        arguments: [ArgumentSpec("TXN", help: "The transaction id.")],
        options: [
            OptionSpec(
                "amount", value: "DECIMAL", help: "Less than authorized: a partial capture, in major units (10.00)."),
            OptionSpec(
                "currency", value: "CODE", help: "The merchant account's currency, how --amount is read [default: USD]."
            ),
        ]
    ) { invocation throws(Diagnostic) in
        var with: [String: JSON?] = ["transaction": .string(try transactionID(invocation))]
        let currency = try Currency.parse(try invocation.identifier("currency") ?? "USD")
        if let minor = try invocation.amount(notation: .majorUnits, currency: currency) {
            with["amount"] = .string(currency.decimal(minor))
            with["currency"] = .string(currency.code)
        }
        return try await run(invocation, step: "capture", use: "braintree.capture", with: with)
    }

    static let void = CommandSpec(
        name: "void", abstract: "Void an authorized or submitted transaction (reverseTransaction).",
        arguments: [ArgumentSpec("TXN", help: "The transaction id.")]
    ) { invocation throws(Diagnostic) in
        try await run(
            invocation, step: "void", use: "braintree.void",
            with: ["transaction": .string(try transactionID(invocation))])
    }

    static let transaction = CommandSpec(
        name: "transaction",
        abstract: "Read a transaction, or find an order's transactions (to settle an unknown outcome).",
        arguments: [ArgumentSpec("TXN", help: "The transaction id.", optional: true)],
        options: [OptionSpec("order-id", value: "ID", help: "Find the transactions of this orderId instead.")]
    ) { invocation throws(Diagnostic) in
        guard invocation.argument("TXN") != nil || invocation.isGiven("order-id") else {
            throw invocation.usage("give TXN or --order-id ID")
        }
        return try await run(
            invocation, step: "transaction", use: "braintree.transaction",
            with: [
                "transaction": invocation.argument("TXN") != nil ? .string(try transactionID(invocation)) : nil,
                "orderId": try invocation.identifier("order-id").map(JSON.string),
            ])
    }

    static let ping = CommandSpec(name: "ping", abstract: "query { ping }: check the API keys and the endpoint.") {
        invocation throws(Diagnostic) in
        try await run(invocation, step: "ping", use: "braintree.ping", with: [:])
    }

    static let clientToken = CommandSpec(
        name: "client-token", abstract: "Create a client token (createClientToken) and print it.",
        options: [
            OptionSpec("merchant-account", value: "ID", help: "The merchant account."),
            OptionSpec("customer", value: "ID", help: "A vaulted customer."),
        ]
    ) { invocation throws(Diagnostic) in
        let with: [String: JSON?] = [
            "merchantAccountId": try invocation.identifier("merchant-account").map(JSON.string),
            "customerId": try invocation.identifier("customer").map(JSON.string),
        ]
        let flow = Flow(
            name: "braintree-client-token",
            steps: [
                Step(
                    name: "client-token",
                    action: .operation(
                        name: "braintree.clientToken", arguments: .object(JSON.Object(with.compactMapValues { $0 }))))
            ])
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

    private static func transactionID(_ invocation: Invocation) throws(Diagnostic) -> String {
        guard let id = try invocation.identifier("TXN") ?? invocation.argument("TXN"), !id.isEmpty else {
            throw invocation.usage("give the transaction id")
        }
        return id
    }

    private static func run(
        _ invocation: Invocation, step: String, use operation: String, with arguments: [String: JSON?]
    ) async throws(Diagnostic) -> ExitCode {
        let flow = Flow(
            name: "braintree-\(step)",
            steps: [
                Step(
                    name: step,
                    action: .operation(
                        name: operation, arguments: .object(JSON.Object(arguments.compactMapValues { $0 }))))
            ])
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
