import CheckoutKit
import Foundation

/// `checkout-driver centra …`: one subcommand per Apple Pay sheet callback of the Centra + Adyen express checkout,
/// each a one-step built-in flow on the shared engine and chained through the state file (the session token, the
/// added line, the order); `centra express` runs the whole sequence.
enum CentraCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "centra",
            abstract:
                "Centra Storefront API express checkout (Apple Pay via Adyen): each sheet callback, or all of it.",
            subcommands: [
                express, expressConfig, selection, order, addItem, rollback, shipping, shippingMethod,
                paymentInstructions, paymentResult,
            ])
    }

    struct ExpressConfigInput: CommandInput {
        var amount: Int?
        var lines: [String] = []
        var returnURL: String?

        static let inputs: [Input<Self>] = [
            // Minor units: the selection's currency, which a decimal would need, is not known before the request.
            .amount(
                "amount", \.amount, .minorUnits, value: "MINOR",
                help: "Amount in minor units [default: the selection's grand total]."),
            .values(
                "line", \.lines, value: "NAME=PRICE",
                help: "A line item (price as a decimal string) [default: the selection's lines]."),
            .url("return-url", \.returnURL, help: "Where Adyen returns."),
        ]
    }

    static let expressConfig = CommandSpec(
        name: "express-config", abstract: "Fetch the Adyen express checkout config (expressCheckoutWidgets).",
        discussion:
            "Sends X-Shared-Secret (CENTRA_SHARED_SECRET) on this call only. Prints the Adyen config parsed out of the widget's contents.",
        input: ExpressConfigInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CentraOperations.ExpressConfig()
        // In the order given (two lines may share a name); each price a decimal string, as Centra takes it.
        var items: [JSON] = []
        for pair in input.lines {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let price = parts.count == 2 ? String(parts[1]) : ""
            guard parts.count == 2, !parts[0].isEmpty,
                price.wholeMatch(of: /[0-9]{1,12}(\.[0-9]{1,4})?/) != nil
            else {
                throw invocation.usage(
                    "--line \(pair): expected NAME=PRICE with a decimal price, e.g. --line \"Linen shirt=799.00\"")
            }
            items.append(["name": .string(String(parts[0])), "price": .string(price)])
        }
        // None given: the operation takes the selection's lines.
        if !items.isEmpty { arguments.lineItems = items }
        if let url = input.returnURL { arguments.returnUrl = url }
        // Minor units, already checked by the option; the step reads them in the selection's currency as it runs.
        arguments.amount = try input.amount.map { minor throws(Diagnostic) in
            try PendingAmount(String(minor), notation: .minorUnits)
        }
        return try await run(
            invocation, step: "express-config", .operation(CentraOperations.expressConfig, arguments))
    }

    static let selection = CommandSpec(
        name: "selection", abstract: "Show the session's selection (cart, totals, shipping methods)."
    ) { invocation throws(Diagnostic) in
        try await run(invocation, step: "selection", .operation(CentraOperations.selection, NoArguments()))
    }

    static let order = CommandSpec(name: "order", abstract: "Show the session's latest order.") {
        invocation throws(Diagnostic) in
        try await run(invocation, step: "order", .operation(CentraOperations.order, NoArguments()))
    }

    struct AddItemInput: CommandInput {
        var item: String?
        var quantity: Int?

        static let inputs: [Input<Self>] = [
            .identifier(argument: "ITEM", \.item, help: "The item id (a product's size), e.g. 1002-M."),
            .integer("quantity", \.quantity, range: 1...999, help: "How many [default: 1]."),
        ]
    }

    static let addItem = CommandSpec(
        name: "add-item", abstract: "Add an item to the selection (PDP express); remembered for rollback.",
        input: AddItemInput.self
    ) { input, invocation throws(Diagnostic) in
        var arguments = CentraOperations.AddItem()
        arguments.item = input.item!
        // Left out: the operation's default (1).
        arguments.quantity = input.quantity
        return try await run(invocation, step: "add-item", .operation(CentraOperations.addItem, arguments))
    }

    static let rollback = CommandSpec(
        name: "rollback",
        abstract:
            "Remove the line add-item added (updateLine quantity 0), as an express checkout cancelled on the sheet does.",
        discussion:
            "Run by hand it rolls back even when a payment's outcome was left unknown (check `centra order` first); the express checkout's own rollback waits in that case."
    ) { invocation throws(Diagnostic) in
        var arguments = CentraOperations.Rollback()
        arguments.evenIfPaymentStarted = true
        return try await run(invocation, step: "rollback", .operation(CentraOperations.rollback, arguments))
    }

    struct ShippingInput: CommandInput {
        var contact: String?
        var address: String?
        var country: String?
        var city: String?
        var zip: String?
        var state: String?

        static let inputs: [Input<Self>] = [
            .value("contact", \.contact, value: "FILE", help: "A PKContact as JSON."),
            .value("address", \.address, value: "FILE", help: "A Centra AddressInput as JSON."),
            .identifier("country", \.country, value: "C", help: "ISO country code, instead of a file."),
            .identifier("city", \.city, value: "X", help: "With --country."),
            .identifier("zip", \.zip, value: "Z", help: "With --country."),
            .identifier("state", \.state, value: "S", help: "With --country."),
        ]
    }

    static let shipping = CommandSpec(
        name: "shipping",
        abstract: "The shipping-contact callback: totals and shipping methods for what the sheet reveals.",
        discussion:
            "Sends paymentInstructions with paymentInitiateOnly: true and only country, city, state and zip (address1 empty).",
        input: ShippingInput.self
    ) { input, invocation throws(Diagnostic) in
        guard [input.contact, input.address, input.country].compactMap({ $0 }).count == 1 else {
            throw invocation.usage("give exactly one of --contact FILE, --address FILE or --country C")
        }
        var address: JSON.Object
        if let country = input.country {
            address = ["country": .string(country.uppercased())]
            for (value, field) in [(input.city, "city"), (input.zip, "zipCode"), (input.state, "state")] {
                if let value { address[field] = .string(value) }
            }
        } else if input.contact != nil {
            address = try contact(input.contact, option: "contact")!
        } else {
            address = try contact(input.address, option: "address")!
        }
        var arguments = CentraOperations.Shipping()
        arguments.address = address
        return try await run(invocation, step: "shipping", .operation(CentraOperations.shipping, arguments))
    }

    struct ShippingMethodInput: CommandInput {
        var id: String?

        static let inputs: [Input<Self>] = [
            .argument("ID", \.id, help: "The shipping method id (see `centra selection`).")
        ]
    }

    static let shippingMethod = CommandSpec(
        name: "shipping-method", abstract: "The shipping-method callback (setShippingMethod); prints the new total.",
        input: ShippingMethodInput.self
    ) { input, invocation throws(Diagnostic) in
        guard let text = input.id, let id = Int(text), id >= 0 else {
            throw invocation.usage("ID must be a shipping method id (a whole number), got '\(input.id ?? "")'")
        }
        var arguments = CentraOperations.SetShippingMethod()
        arguments.id = id
        return try await run(
            invocation, step: "shipping-method", .operation(CentraOperations.setShippingMethod, arguments))
    }

    struct PaymentInstructionsInput: CommandInput {
        var contact: String?
        var billing: String?
        var tokenFile: String?
        var paymentFields: String?
        var open = false
        var threeDSDetails: String?

        static let inputs: [Input<Self>] = [
            .value(
                "contact", \.contact, value: "FILE",
                help: "The shipping contact: a PKContact (or AddressInput) as JSON.", required: true),
            .value("billing", \.billing, value: "FILE", help: "The billing contact, when it differs."),
            .value("token-file", \.tokenFile, value: "FILE", help: "PKPaymentToken.paymentData, byte for byte."),
            .value(
                "payment-fields", \.paymentFields, value: "FILE",
                help: "paymentMethodSpecificFields as JSON, instead of a token file."),
            .flag("open", \.open, help: "Open a 3DS redirect in a browser."),
            .value("3ds-details", \.threeDSDetails, value: "FILE", help: "The native 3DS2 result (details) as JSON."),
        ]
    }

    static let paymentInstructions = CommandSpec(
        name: "payment-instructions",
        abstract: "The final submission (didSubmit): addresses and the Apple Pay token; then the action.",
        discussion: """
            Sends the full shipping address, billing as separateBillingAddress, both return pages (a loopback listener),
            termsAndConditions: true, and the token as Adyen's Apple Pay state data (base64 of the file's exact bytes).
            A redirect is printed (--open opens it with $BROWSER, else xdg-open) and its return goes to paymentResult; a
            native 3DS2 challenge is completed with --3ds-details FILE (against the emulator, by its challenge).
            """,
        input: PaymentInstructionsInput.self
    ) { input, invocation throws(Diagnostic) in
        guard (input.tokenFile != nil) != (input.paymentFields != nil) else {
            throw invocation.usage("give exactly one of --token-file FILE or --payment-fields FILE")
        }
        var arguments = CentraOperations.PaymentInstructions()
        // The files read in this order: the first unreadable one is the one blamed.
        arguments.shippingAddress = try contact(input.contact, option: "contact")!
        arguments.billingAddress = try contact(input.billing, option: "billing")
        arguments.tokenFile = input.tokenFile
        if let path = input.paymentFields {
            arguments.paymentFields = try FileIO.readJSONObject(path, what: "--payment-fields file")
        }
        arguments.open = input.open
        arguments.threeDSDetails = input.threeDSDetails
        return try await run(
            invocation, step: "payment", .operation(CentraOperations.paymentInstructions, arguments))
    }

    struct PaymentResultInput: CommandInput {
        var fieldsFile: String?
        var fields: [String: String] = [:]

        static let inputs: [Input<Self>] = [
            .value("fields", \.fieldsFile, value: "FILE", help: "The paymentMethodFields as a JSON object."),
            .pairs("field", \.fields, value: "KEY=VALUE", help: "One field (e.g. redirectResult=…)."),
        ]
    }

    static let paymentResult = CommandSpec(
        name: "payment-result", abstract: "paymentResult with the fields a 3DS step returned.",
        input: PaymentResultInput.self
    ) { input, invocation throws(Diagnostic) in
        var fields: JSON.Object = [:]
        if let path = input.fieldsFile { fields = try FileIO.readJSONObject(path, what: "--fields file") }
        for (key, value) in input.fields { fields[key] = .string(value) }
        guard !fields.isEmpty else { throw invocation.usage("give the fields: --fields FILE or --field KEY=VALUE") }
        var arguments = CentraOperations.PaymentResult()
        arguments.fields = fields
        return try await run(
            invocation, step: "payment-result", .operation(CentraOperations.paymentResult, arguments))
    }

    struct ExpressInput: CommandInput {
        var item: String?
        var contact: String?
        var billing: String?
        var method: Int?
        var tokenFile: String?
        var ingrid = false
        var cancelAfter: CommandFlows.CentraExpress.Stop?
        var open = false
        var threeDSDetails: String?

        static let inputs: [Input<Self>] = [
            .identifier(
                "item", \.item, value: "ITEM",
                help: "PDP express: add this item first (rolled back unless the order is placed)."),
            .value(
                "contact", \.contact, value: "FILE",
                help: "The shipping contact (PKContact or AddressInput) [default under --env local: a test shopper]."),
            .value("billing", \.billing, value: "FILE", help: "The billing contact, when it differs."),
            .integer(
                "method", \.method, value: "ID", range: 0...Int(Int32.max),
                help: "The shipping method [default: the first offered]."),
            .value("token-file", \.tokenFile, value: "FILE", help: "PKPaymentToken.paymentData, byte for byte."),
            .flag(
                "ingrid", \.ingrid, help: "Run the Ingrid workaround (handleWidgetEvent expressCheckout: true) first."),
            .choice(
                "cancel-after", \.cancelAfter, value: "STEP",
                help: "Stop after this step, as a shopper dismissing the sheet."),
            .flag("open", \.open, help: "Open a 3DS redirect in a browser."),
            .value("3ds-details", \.threeDSDetails, value: "FILE", help: "The native 3DS2 result (details) as JSON."),
        ]
    }

    static let express = CommandSpec(
        name: "express", abstract: "The whole express checkout in one run (cart, or a PDP item with rollback).",
        discussion: """
            Runs the protocol's sequence: express config, (add the item), shipping contact, shipping method (default: the
            first offered), the final payment and its action, the order. With --item the added line is rolled back on
            cancel or failure. Under --env local without --token-file a token is made for the selection's grand total.
            """,
        input: ExpressInput.self
    ) { input, invocation throws(Diagnostic) in
        var options = CommandFlows.CentraExpress()
        options.item = input.item
        // Nil: the emulator's test shopper, which only the emulator knows.
        let shopper = try contact(input.contact, option: "contact")
        if let shopper { options.contact = shopper }
        options.billing = try contact(input.billing, option: "billing")
        options.shippingMethod = input.method
        options.tokenFile = input.tokenFile
        options.threeDSDetails = input.threeDSDetails
        options.open = input.open
        options.ingrid = input.ingrid
        options.cancelAfter = input.cancelAfter
        let flow = try CommandFlows.centraExpress(options)
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        if shopper == nil && environment.configuration.kind != .local {
            throw invocation.usage(
                "--contact FILE is needed outside --env local (the test shopper is for the emulator)")
        }
        if options.tokenFile == nil && environment.configuration.kind != .local {
            throw invocation.usage(
                "--token-file FILE is needed outside --env local (a made token only works with the emulator)")
        }
        return try await show(environment, flow: flow, cancelledAfter: input.cancelAfter)
    }

    // MARK: -

    /// The address in the file at `path` (given to `--option`), or nil when the option was left out.
    private static func contact(_ path: String?, option: String) throws(Diagnostic) -> JSON.Object? {
        guard let path else { return nil }
        return try CentraAddress.read(path: path, option: "--\(option)")
    }

    /// Runs the one-step flow `centra-<step>` whose step is `action` (built from an operation's typed arguments).
    private static func run(
        _ invocation: Invocation, step: String, _ action: Step.Action
    ) async throws(Diagnostic) -> ExitCode {
        let flow = Flow(name: "centra-\(step)", steps: [Step(name: step, action: action)])
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        return try await show(environment, flow: flow)
    }

    /// Runs the flow and, in text mode, prints what a person wants to see of its last answer — after a cancel, that
    /// the checkout was cancelled, and the cart as the rollback left it.
    private static func show(
        _ environment: RunEnvironment, flow: Flow, cancelledAfter: CommandFlows.CentraExpress.Stop? = nil
    ) async throws(Diagnostic) -> ExitCode {
        let result = try await environment.session.run(flow, vars: [:], registry: Operations.registry)
        // The answer worth showing is the last main step's (a finally rollback's when nothing else ran, or after a
        // cancel).
        let main = result.steps.last { $0.output != nil && $0.outcome == .passed && !$0.isFinally }
        let rollback = result.steps.last { $0.output != nil && $0.outcome == .passed && $0.isFinally }
        let shown = cancelledAfter != nil ? (rollback ?? main) : (main ?? rollback)
        if environment.settings.output.format == .text {
            if let stop = cancelledAfter, result.failure == nil {
                environment.console.out(
                    "cancelled         after \(stop.rawValue), as a shopper dismissing the sheet: nothing was paid")
            }
            for line in summary(shown?.output ?? .null) { environment.console.out(environment.redactor.text(line)) }
        }
        if let failure = result.failure { throw failure }
        return .ok
    }

    static func summary(_ output: JSON) -> [String] {
        var lines: [String] = []
        if let config = output["summary"], config["clientKey"] != nil {
            lines.append("adyen client key  \(config["clientKey"]?.interpolationText ?? "?")")
            lines.append(
                "context           \(config["context"]?.interpolationText ?? "?") (Adyen environment \(config["adyenEnvironment"]?.interpolationText ?? "?"))"
            )
            lines.append(
                "country, language \(config["country"]?.interpolationText ?? "?"), \(config["languageCode"]?.interpolationText ?? "?")"
            )
            lines.append(
                "amount            \(config["amount"]?.interpolationText ?? "?") minor units of \(config["currency"]?.interpolationText ?? "?")"
            )
            lines.append("apple pay         \(config["applePay"]?.boolValue == true ? "offered" : "not offered")")
            for m in config["shippingMethods"]?.arrayValue ?? [] {
                lines.append(
                    "shipping method   \(m["id"]?.interpolationText ?? "?")  \(m["name"]?.interpolationText ?? "")  \(m["priceText"]?.interpolationText ?? m["price"]?.serialized() ?? "")"
                )
            }
            return lines
        }
        if let order = output["order"], order != .null, let s = output["summary"] {
            lines.append(
                "order             \(s["number"]?.interpolationText ?? "?")  \(s["status"]?.interpolationText ?? "?")  (\(s["id"]?.interpolationText ?? "?"))"
            )
            lines.append(
                "total             \(s["grandTotalText"]?.interpolationText ?? "?") \(s["currency"]?.interpolationText ?? "")  (\(money(s["grandTotal"])) minor units)"
            )
            return lines
        }
        if let selection = output["selection"], selection != .null, let s = output["summary"], s != .null {
            for line in selection["lines"]?.arrayValue ?? [] {
                lines.append(
                    "line              \(line["id"]?.interpolationText ?? "?")  \(line["quantity"]?.interpolationText ?? "1") × \(line["name"]?.interpolationText ?? "?")  \(line["lineValue"]?["formattedValue"]?.interpolationText ?? "")"
                )
            }
            for m in s["shippingMethods"]?.arrayValue ?? [] {
                lines.append(
                    "shipping method   \(m["id"]?.interpolationText ?? "?")  \(m["name"]?.interpolationText ?? "")  \(m["priceText"]?.interpolationText ?? "?")\(m["selected"]?.boolValue == true ? "  (selected)" : "")"
                )
            }
            lines.append(
                "grand total       \(s["grandTotalText"]?.interpolationText ?? "?") \(s["currency"]?.interpolationText ?? "")  (\(money(s["grandTotal"])) minor units)"
            )
            if let rolledBack = output["rolledBack"]?.stringValue { lines.append("rolled back       \(rolledBack)") }
        }
        return lines
    }

    private static func money(_ minor: JSON?) -> String { minor?.interpolationText ?? "?" }
}
