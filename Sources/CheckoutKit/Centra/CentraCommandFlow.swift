/// The flow `centra express` runs, built from its typed options (see `CommandFlows`): the steps of the built-in flows
/// `centra-express`, `centra-express-pdp` and `centra-express-ingrid`.
extension CommandFlows {
    public struct CentraExpress: Sendable {
        /// The steps a shopper can dismiss the sheet after.
        public enum Stop: String, CaseIterable, Sendable {
            case expressConfig = "express-config"
            case addItem = "add-item"
            case shipping
            case shippingMethod = "shipping-method"
        }

        /// PDP express: the product added first, rolled back unless the order is placed.
        public var item: String?
        /// The shipping contact the Apple Pay sheet reveals.
        public var contact = testShopper
        public var billing: JSON.Object?
        /// The shipping method; nil: the first offered.
        public var shippingMethod: Int?
        /// A token to pay with; nil: one is made for the selection's grand total.
        public var tokenFile: String?
        public var threeDSDetails: String?
        public var open = false
        /// Ingrid's `handleWidgetEvent(expressCheckout: true)` first.
        public var ingrid = false
        /// Stop after this step, as a shopper dismissing the sheet.
        public var cancelAfter: Stop?

        public init() {}

        /// The shopper of the emulator's test store (the built-in flows' `contact`).
        public static let testShopper: JSON.Object = [
            "name": ["givenName": "Ada", "familyName": "Lovelace"],
            "postalAddress": [
                "street": "Storgatan 1", "city": "Stockholm", "state": "", "postalCode": "11122",
                "isoCountryCode": "se",
            ],
            "emailAddress": "ada@example.com", "phoneNumber": "+46701234567",
        ]
    }

    public static func centraExpress(_ options: CentraExpress) throws(Diagnostic) -> Flow {
        if options.ingrid, options.item != nil {
            throw .usage(
                "--ingrid checks out the cart as it is; it has no product step for --item",
                hint: "leave one of them out")
        }
        var steps: [Step] = []
        if options.ingrid {
            var event = CentraOperations.HandleWidgetEvent()
            event.payload = ["expressCheckout": true]
            steps.append(Step(name: "widget-event", action: .operation(CentraOperations.handleWidgetEvent, event)))
        }
        steps.append(
            Step(
                name: CentraExpress.Stop.expressConfig.rawValue,
                action: .operation(CentraOperations.expressConfig, CentraOperations.ExpressConfig()),
                expect: expecting(equals: ["summary", "applePay"], true)))
        if let item = options.item {
            var add = CentraOperations.AddItem()
            add.item = item
            steps.append(
                Step(name: CentraExpress.Stop.addItem.rawValue, action: .operation(CentraOperations.addItem, add)))
        }
        var shipping = CentraOperations.Shipping()
        shipping.address = options.contact
        steps.append(
            Step(name: CentraExpress.Stop.shipping.rawValue, action: .operation(CentraOperations.shipping, shipping)))
        var method = CentraOperations.SetShippingMethod()
        method.id = options.shippingMethod
        steps.append(
            Step(
                name: CentraExpress.Stop.shippingMethod.rawValue,
                action: .operation(CentraOperations.setShippingMethod, method)))
        var payment = CentraOperations.PaymentInstructions()
        payment.shippingAddress = options.contact
        payment.billingAddress = options.billing
        payment.open = options.open
        payment.threeDSDetails = options.threeDSDetails
        if let path = options.tokenFile {
            payment.tokenFile = path
            steps.append(Step(name: "payment", action: .operation(CentraOperations.paymentInstructions, payment)))
        } else {
            let total = { (path: String) in
                RunValue.output(step: CentraExpress.Stop.shippingMethod.rawValue, path: path)
            }
            steps.append(
                madeToken(
                    ApplePayOperations.MakeToken(),
                    later: [
                        .bind(\.amount, to: total("summary.grandTotal")),
                        .bind(\.currency, to: total("summary.currency")),
                    ]))
            steps.append(
                Step(
                    name: "payment",
                    action: .operation(
                        CentraOperations.paymentInstructions, payment,
                        later: [.bind(\.tokenFile, to: .captured(madeTokenFile))])))
        }
        steps.append(
            Step(
                name: "order", action: .operation(CentraOperations.order, NoArguments()),
                expect: expecting(exist: ["order", "id"], ["order", "status"])))
        if let stop = options.cancelAfter {
            guard let index = steps.firstIndex(where: { $0.name == stop.rawValue }) else {
                throw .usage(
                    "--cancel-after \(stop.rawValue): this checkout adds no item (its steps: \(steps.map(\.name).joined(separator: ", ")))",
                    hint: "give --item ITEM, or stop after another step")
            }
            steps = Array(steps[...index])
        }
        // An added item is rolled back unless the order is placed: on a cancel, a failure, an interruption.
        let rollback = Step(
            name: "rollback", action: .operation(CentraOperations.rollback, CentraOperations.Rollback()))
        return checkout("centra-express", steps, finally: options.item == nil ? [] : [rollback], deadline: 120)
    }
}
