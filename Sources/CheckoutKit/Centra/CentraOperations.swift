import Foundation

/// The Centra operations a flow step can `use`: one per Apple Pay sheet callback of the integration guide
/// (docs/protocols/centra.md: express config, the cart, shipping contact, shipping method, the final payment, its 3DS
/// result, the order, the PDP rollback). Each is one GraphQL call (the final payment also handles the action it gets
/// back); the engine supplies the rest.
public enum CentraOperations {
    public static var all: [FlowOperation] {
        [
            expressConfig, selection, order, addItem, rollback, shipping, setShippingMethod, handleWidgetEvent,
            paymentInstructions,
            paymentResult,
        ]
    }

    private static func operation<Arguments: OperationArguments>(
        _ name: String, _ summary: String, arguments: Arguments.Type,
        outputs: [FlowOperation.Output] = selectionOutputs,
        needs: [String] = CentraClient.requiredConfiguration,
        argumentCheck: FlowOperation.ArgumentCheck<Arguments>? = nil,
        _ body:
            @escaping @Sendable (_ arguments: Arguments, _ context: OperationContext) async throws(Diagnostic) ->
            StepOutput
    ) -> FlowOperation {
        FlowOperation(
            name: name, summary: summary, arguments: arguments, requiredConfiguration: needs,
            stateCheck: CentraState.check,
            argumentCheck: argumentCheck, outputs: outputs, body: body)
    }

    /// What a step outputs that answers with the selection (`output(selection:)`): most of them.
    static let selectionOutputs: [FlowOperation.Output] = [
        .init("selection", "the selection (cart) as Centra returned it"), .init("selection.id", "its id"),
        .init("summary.grandTotal", "minor units"), .init("summary.grandTotalText", "a decimal string"),
        .init("summary.currency", "ISO 4217 code"), .init("summary.currencyNumeric", "ISO 4217 numeric code"),
        .init("summary.shippingMethods", "[{id, name, price (minor units), priceText, selected}]"),
    ]

    /// What a step outputs that answers with an order (`orderSummary`).
    static let orderOutputs: [FlowOperation.Output] = [
        .init("order", "the order as Centra returned it"), .init("summary.id", "the order id"),
        .init("summary.number", "the order number"),
        .init("summary.status", "the order status"), .init("summary.grandTotal", "minor units"),
        .init("summary.grandTotalText", "a decimal string"), .init("summary.currency", "ISO 4217 code"),
    ]

    // MARK: Reads

    public static let selection = operation(
        "centra.selection", "Read the session's selection (the cart, totals, shipping).",
        arguments: NoArguments.self
    ) { _, context throws(Diagnostic) in
        let client = try CentraClient(context)
        let response = try await client.call(CentraDocuments.selectionQuery)
        return output(selection: try CentraClient.payload(response, "selection", what: "selection"), response)
    }

    public static let order = operation(
        "centra.order", "Read the session's latest order.", arguments: NoArguments.self,
        outputs: orderOutputs
    ) { _, context throws(Diagnostic) in
        let client = try CentraClient(context)
        // --force starts a new session if the open payment's has ended: its order can then tell nothing of that
        // payment.
        if context.services.force {
            context.setAside(provider: "centra") { $0.reference == CentraPayment.openReference(context) }
        }
        let before = try client.state.read()
        let response = try await client.call(CentraDocuments.orderQuery)
        guard response.errors.isEmpty else {
            _ = try CentraClient.payload(response, "order", what: "order")
            return StepOutput(document: .null)
        }
        // The read of the session's latest order is what settles a payment left open in it: the order before the
        // payment was kept, so a new one is that payment's and none means it did not go through.
        let latest = response.data["order"].flatMap { $0 == .null ? nil : $0 }
        let placedNow = latest?["id"]?.stringValue.map { $0 != before.lastOrder } ?? false
        if !(try context.openOutcomes(provider: "centra")).isEmpty {
            context.settledOpenOutcomes(
                provider: "centra", reference: CentraPayment.openReference(context),
                placedNow
                    ? "order \(latest?["id"]?.stringValue ?? "?") was placed: the payment went through"
                    : "the session shows no new order: the payment has not gone through (if it was sent moments ago, read the order again before paying)"
            )
            try client.state.update {
                $0.paymentStarted = false
                if placedNow { $0.addedLine = nil }
            }
        }
        guard let order = latest else {
            throw .failure(
                "the session has no order yet", hint: "complete a payment first (`checkout-driver centra express`)")
        }
        try client.state.update { $0.lastOrder = order["id"]?.stringValue }
        return StepOutput(document: ["order": order, "summary": orderSummary(order)], status: response.status)
    }

    /// `centra.expressConfig`'s arguments.
    public struct ExpressConfig: OperationArguments {
        public var amount: PendingAmount?
        public var lineItems: [JSON]?
        public var returnUrl = CentraProtocol.defaultReturnURL

        public init() {}

        public static let arguments: [Argument<ExpressConfig>] = [
            // Adyen takes minor units; a decimal is read in the selection's currency, which the operation reads as it
            // runs.
            .amount(
                "amount", \.amount, .minorUnits, default: "the selection's grand total",
                help: "digits are minor units (79900), a decimal the selection currency's major units (799.00)"),
            .array("lineItems", \.lineItems, default: "the selection's lines", help: "[{name, price}]"),
            .string("returnUrl", \.returnUrl, default: "a loopback URL", help: "where Adyen returns"),
        ]
    }

    public static let expressConfig = operation(
        "centra.expressConfig", "Fetch the Adyen express checkout config (expressCheckoutWidgets).",
        arguments: ExpressConfig.self,
        outputs: [
            .init("config", "the widgets' configuration as Centra returned it"),
            .init("summary.applePay", "whether Apple Pay is offered"),
            .init("summary.amount", "minor units"), .init("summary.currency", "ISO 4217 code"),
            .init("summary.clientKey", "Adyen's client key"), .init("summary.country", "the store's country"),
            .init("summary.shippingMethods", "the shipping methods offered"),
        ],
        needs: CentraClient.requiredConfiguration + ["CENTRA_SHARED_SECRET"]
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        // Minor units need no currency; a decimal is read in the selection's.
        var amount = try args.amount?.minorUnitsInAnyCurrency()
        var lineItems = args.lineItems
        if amount == nil || lineItems == nil {
            // What the sheet would show: the selection's total and lines (prices as decimal strings).
            let selection = try CentraClient.payload(
                try await client.call(CentraDocuments.selectionQuery), "selection", what: "selection")
            let summary = try CentraMoney.summary(selection)
            if amount == nil { amount = try args.amount?.minorUnits(in: summary.money) ?? summary.grandTotal }
            if lineItems == nil {
                var items: [JSON] = []
                for line in selection["lines"]?.arrayValue ?? [] {
                    let value = line["lineValue"] ?? .null
                    items.append([
                        "name": line["name"] ?? "",
                        "price": .string(CentraMoney.decimal(try CentraMoney.minor(value), of: value)),
                    ])
                }
                lineItems = items
            }
        }
        let plugin: JSON = [
            "type": "express_checkout_adyen",
            "additionalData": [
                "amount": .number(amount!), "lineItems": .array(lineItems ?? []),
                "returnUrl": .string(args.returnUrl),
            ],
        ]
        let response = try await client.call(CentraDocuments.expressCheckoutWidgets, ["plugins": [plugin]])
        let payload = try CentraClient.payload(response, "expressCheckoutWidgets", what: "expressCheckoutWidgets")
        let widgets = (payload["list"]?.arrayValue ?? []).flatMap { $0["widgets"]?.arrayValue ?? [] }
        guard let widget = widgets.first(where: { $0["name"]?.stringValue == "express_checkout_adyen" }) else {
            throw .failure(
                "the store has no express_checkout_adyen widget",
                hint: "enable the Adyen express checkout plugin in Centra")
        }
        if let error = widget["error"]?.stringValue {
            throw .failure("the Adyen widget reports an error: \(error)", hint: "check the plugin's settings in Centra")
        }
        guard let text = widget["contents"]?.stringValue, let config = try? JSON.parse(text), config.objectValue != nil
        else {
            throw .failure(
                "the Adyen widget's contents is not a JSON object",
                hint: "check the Adyen plugin's configuration in Centra")
        }
        return StepOutput(
            document: ["config": config, "summary": CentraProtocol.adyenSummary(config)], status: response.status)
    }

    // MARK: The cart

    /// `centra.addItem`'s arguments.
    public struct AddItem: OperationArguments {
        public var item = ""  // required: read before the body runs
        public var quantity: Int?

        public init() {}

        public static let arguments: [Argument<AddItem>] = [
            .string("item", \.item), .integer("quantity", \.quantity, range: 1...999, default: "1"),
        ]
    }

    public static let addItem = operation(
        "centra.addItem", "Add an item to the selection (PDP express); the line is remembered for rollback.",
        arguments: AddItem.self,
        outputs: selectionOutputs + [.init("line.id", "the line added (rolled back by centra.rollback)")]
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        let item = args.item
        let quantity = args.quantity ?? 1
        let response = try await client.call(
            CentraDocuments.addItem, ["item": .string(item), "quantity": .number(JSON.Number(quantity))])
        let payload = try CentraClient.payload(response, "addItem", what: "addItem \(item)")
        guard let line = payload["line"]?["id"]?.stringValue else {
            throw .failure(
                "addItem \(item) returned no line", hint: "check the item id (an item, not a product or display item)")
        }
        try client.state.update { $0.addedLine = line }
        context.note("added line \(line); `checkout-driver centra rollback` removes it")
        return output(selection: payload["selection"] ?? .null, response, extra: ["line": ["id": .string(line)]])
    }

    /// `centra.rollback`'s arguments.
    public struct Rollback: OperationArguments {
        public var evenIfPaymentStarted = false

        public init() {}

        public static let arguments: [Argument<Rollback>] = [
            .boolean(
                "evenIfPaymentStarted", \.evenIfPaymentStarted,
                help: "roll back although a payment's outcome is not known yet")
        ]
    }

    public static let rollback = operation(
        "centra.rollback", "Remove the line a PDP express checkout added (updateLine quantity 0).",
        arguments: Rollback.self,
        outputs: [
            .init("rolledBack", "the line removed; null when there was none to remove"),
            .init("kept", "the line kept, because a payment placed the order or may have", when: "a payment started"),
        ]
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        let section = try client.state.read()
        guard let line = section.addedLine else {
            context.note(
                "nothing to roll back: no added line is waiting to be removed (an order keeps the line it paid for)")
            return StepOutput(document: ["rolledBack": nil])
        }
        // A payment that may yet complete (a lost answer, a 3DS step still open) pays for this cart: leave it.
        if section.paymentStarted && !args.evenIfPaymentStarted {
            context.note(
                "not rolling back line \(line): a payment in this session may still complete; check `checkout-driver centra order`, then `checkout-driver centra rollback`"
            )
            return StepOutput(document: ["rolledBack": nil, "kept": .string(line)])
        }
        let response = try await client.call(CentraDocuments.updateLine, ["lineId": .string(line), "quantity": 0])
        let payload = try CentraClient.payload(response, "updateLine", what: "rollback of line \(line)")
        try client.state.update { $0.addedLine = nil }
        return output(selection: payload["selection"] ?? .null, response, extra: ["rolledBack": .string(line)])
    }

    // MARK: Sheet callbacks

    /// `centra.shipping`'s arguments.
    public struct Shipping: OperationArguments {
        public var address: JSON.Object = [:]  // required: read before the body runs

        public init() {}

        public static let arguments: [Argument<Shipping>] = [
            .object("address", \.address, help: "an AddressInput; only country, city, state and zipCode are sent")
        ]
    }

    public static let shipping = operation(
        "centra.shipping",
        "The shipping-contact callback: paymentInstructions (initiate only) with what the sheet reveals.",
        arguments: Shipping.self
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        let address = try CentraAddress.address(.object(args.address), source: "argument 'address'")
        let input: JSON = .object([
            "shippingAddress": .object(CentraAddress.partial(address)), "paymentInitiateOnly": true, "express": true,
            "termsAndConditions": false, "paymentReturnPage": .string(CentraProtocol.defaultReturnURL),
            "paymentFailedPage": .string(CentraProtocol.defaultFailedURL),
        ])
        let response = try await client.call(CentraDocuments.paymentInstructions, ["input": input])
        let payload = try CentraClient.payload(response, "paymentInstructions", what: "shipping contact")
        return output(selection: payload["selection"] ?? .null, response)
    }

    /// `centra.setShippingMethod`'s arguments.
    public struct SetShippingMethod: OperationArguments {
        public var id: Int?

        public init() {}

        public static let arguments: [Argument<SetShippingMethod>] = [
            .integer("id", \.id, range: 0...Int(Int32.max), default: "the first method offered")
        ]
    }

    public static let setShippingMethod = operation(
        "centra.setShippingMethod",
        "The shipping-method callback: setShippingMethod (default: the first method offered).",
        arguments: SetShippingMethod.self
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        var chosen = args.id
        if chosen == nil {
            let selection = try CentraClient.payload(
                try await client.call(CentraDocuments.selectionQuery), "selection", what: "selection")
            guard let first = selection["checkout"]?["shippingMethods"]?.arrayValue?.first?["id"]?.intValue else {
                throw .failure(
                    "no shipping method is offered for the selection's address",
                    hint: "send the shipping contact first (`centra shipping`)")
            }
            context.note("shipping method \(first) (the first offered)")
            chosen = first
        }
        let id = chosen ?? 0
        let response = try await client.call(CentraDocuments.setShippingMethod, ["id": .number(JSON.Number(id))])
        let payload = try CentraClient.payload(response, "setShippingMethod", what: "setShippingMethod \(id)")
        return output(selection: payload["selection"] ?? .null, response)
    }

    /// `centra.handleWidgetEvent`'s arguments.
    public struct HandleWidgetEvent: OperationArguments {
        public var payload: JSON.Object?

        public init() {}

        public static let arguments: [Argument<HandleWidgetEvent>] = [.object("payload", \.payload)]
    }

    public static let handleWidgetEvent = operation(
        "centra.handleWidgetEvent", "Ingrid workaround: handleWidgetEvent(payload: {expressCheckout: true}).",
        arguments: HandleWidgetEvent.self
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        let response = try await client.call(
            CentraDocuments.handleWidgetEvent, ["payload": args.payload.map(JSON.object) ?? ["expressCheckout": true]])
        let payload = try CentraClient.payload(response, "handleWidgetEvent", what: "handleWidgetEvent")
        return output(selection: payload["selection"] ?? .null, response)
    }

    // MARK: Payment

    /// `centra.paymentInstructions`'s arguments.
    public struct PaymentInstructions: OperationArguments {
        public var shippingAddress: JSON.Object = [:]  // required: read before the body runs
        public var billingAddress: JSON.Object?
        public var tokenFile: String?
        public var paymentFields: JSON.Object?
        public var open = false
        public var threeDSDetails: String?

        public init() {}

        public static let arguments: [Argument<PaymentInstructions>] = [
            .object("shippingAddress", \.shippingAddress), .object("billingAddress", \.billingAddress),
            .string(
                "tokenFile", \.tokenFile, input: .paymentToken,
                help: "PKPaymentToken.paymentData, exactly as PassKit produced it"),
            .object(
                "paymentFields", \.paymentFields,
                help: "paymentMethodSpecificFields as they are, instead of a token file"),
            .boolean("open", \.open, help: "open a redirect with $BROWSER (else xdg-open)"),
            .string(
                "threeDSDetails", \.threeDSDetails, input: .jsonObject(what: "3DS details file"),
                help: "a file with the native 3DS2 result (details)"),
        ]
    }

    public static let paymentInstructions = operation(
        "centra.paymentInstructions",
        "The final submission: addresses and the Apple Pay token as Adyen state data; then the action.",
        arguments: PaymentInstructions.self,
        outputs: orderOutputs + [
            .init("via", "how the payment ended: SUCCESS, or the 3DS step it went through", when: "the answer arrived")
        ],
        // `open` on a machine with no browser is said before the first request of the checkout, not at the payment.
        argumentCheck: { known, configuration throws(Diagnostic) in
            if known.open { _ = try CentraPayment.browserCommand(kind: configuration.kind) }
        }
    ) { args, context throws(Diagnostic) in
        try await CentraPayment.instruct(args, context)
    }

    /// `centra.paymentResult`'s arguments.
    public struct PaymentResult: OperationArguments {
        public var fields: JSON.Object = [:]  // required: read before the body runs

        public init() {}

        public static let arguments: [Argument<PaymentResult>] = [.object("fields", \.fields)]
    }

    public static let paymentResult = operation(
        "centra.paymentResult", "paymentResult with the fields a 3DS step returned.",
        arguments: PaymentResult.self, outputs: orderOutputs
    ) { args, context throws(Diagnostic) in
        let client = try CentraClient(context)
        return try await CentraPayment.result(.object(args.fields), client: client)
    }

    // MARK: Output

    static func output(selection: JSON, _ response: GraphQLResponse, extra: JSON.Object = [:]) -> StepOutput {
        var document = extra
        document["selection"] = selection
        document["summary"] = (try? CentraMoney.summary(selection).json) ?? .null
        return StepOutput(document: .object(document), status: response.status)
    }

    static func orderSummary(_ order: JSON) -> JSON {
        let total = (order["totals"]?.arrayValue ?? []).first { $0["type"]?.stringValue == "GRAND_TOTAL" }?["price"]
        let minor = total.flatMap { try? CentraMoney.minor($0) }
        return [
            "id": order["id"] ?? .null, "number": order["number"] ?? .null, "status": order["status"] ?? .null,
            "grandTotal": minor.map { .number(JSON.Number($0)) } ?? .null,
            "grandTotalText": minor.map { .string(CentraMoney.decimal($0, of: total!)) } ?? .null,
            "currency": total?["currency"]?["code"] ?? .null,
        ]
    }
}
