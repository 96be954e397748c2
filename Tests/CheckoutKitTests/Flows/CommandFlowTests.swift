import SandboxEmulator
import Testing

@testable import CheckoutKit

/// The flows the whole-checkout commands build from typed steps: with its defaults, each is step for step the built-in
/// flow `flow show` prints (with its variables' defaults), and every option lands on the argument it is for.
@Suite struct CommandFlowTests {
    static let registry: OperationRegistry = {
        var r = OperationRegistry(
            BahnOperations.all + CentraOperations.all + CashAppOperations.all + BraintreeOperations.all)
        r.register(
            ApplePayOperations.makeToken(
                keys: { (BahnRig.signer, BahnRig.recipient) },
                merchantIdentifier: TestCredentials.merchantIdentifier))
        return r
    }()

    static func arguments(_ flow: Flow, _ step: String) -> JSON? {
        guard case .operation(_, let arguments)? = flow.steps.first(where: { $0.name == step })?.action else {
            return nil
        }
        return arguments
    }

    // MARK: The same flows as the built-in files

    /// Reads a step's known arguments as its operation does and writes them back as a command's step writes them
    /// (defaults left out), templates as they are: two spellings of the same arguments come out alike.
    static func normalizer<Arguments: OperationArguments>(
        _: Arguments.Type
    ) -> @Sendable (JSON.Object) -> JSON.Object? {
        { with in
            let templates = with.filter { $0.value.stringValue?.contains("${") == true }
            let known = with.filter { $0.value.stringValue?.contains("${") != true }
            guard case .success(let read) = Arguments.read(known, templates: templates) else { return nil }
            var written = read.stepArguments
            for (key, template) in templates { written[key] = template }
            return written
        }
    }

    static let normalizers: [String: @Sendable (JSON.Object) -> JSON.Object?] = [
        CentraOperations.handleWidgetEvent.name: normalizer(CentraOperations.HandleWidgetEvent.self),
        CentraOperations.expressConfig.name: normalizer(CentraOperations.ExpressConfig.self),
        CentraOperations.addItem.name: normalizer(CentraOperations.AddItem.self),
        CentraOperations.shipping.name: normalizer(CentraOperations.Shipping.self),
        CentraOperations.setShippingMethod.name: normalizer(CentraOperations.SetShippingMethod.self),
        CentraOperations.paymentInstructions.name: normalizer(CentraOperations.PaymentInstructions.self),
        CentraOperations.order.name: normalizer(NoArguments.self),
        CentraOperations.rollback.name: normalizer(CentraOperations.Rollback.self),
        ApplePayOperations.makeTokenName: normalizer(ApplePayOperations.MakeToken.self),
        BraintreeOperations.config.name: normalizer(BraintreeOperations.Config.self),
        BraintreeOperations.tokenize.name: normalizer(BraintreeOperations.Tokenize.self),
        BraintreeOperations.charge.name: normalizer(BraintreeOperations.Transact.self),
        BraintreeOperations.authorize.name: normalizer(BraintreeOperations.Transact.self),
        CashAppOperations.checkout.name: normalizer(CashAppOperations.Checkout.self),
        CashAppOperations.button.name: normalizer(CashAppOperations.Button.self),
        CashAppOperations.sign.name: normalizer(CashAppOperations.Sign.self),
        CashAppOperations.request.name: normalizer(CashAppOperations.Request.self),
        CashAppApproval.poll.name: normalizer(CashAppApproval.Poll.self),
        CashAppOperations.validate.name: normalizer(NoArguments.self),
        CashAppPayments.capture.name: normalizer(CashAppPayments.Capture.self),
        CashAppPayments.auth.name: normalizer(CashAppPayments.Auth.self),
        CashAppCard.confirm.name: normalizer(CashAppCard.Confirm.self),
    ]

    /// A step as a flow file writes it, its `${vars.…}` of the flow's declared variables replaced by their defaults and
    /// its arguments normalized.
    static func canonical(_ step: Step, vars: JSON.Object) -> JSON {
        var written = FlowEncoder.step(step).objectValue!
        written["description"] = nil  // an include's words about the part it brings
        if case .operation(let name, let arguments) = step.action {
            let given = arguments.objectValue!.mapValues { value -> JSON in
                guard let text = value.stringValue, text.hasPrefix("${vars."), text.hasSuffix("}"),
                    let declared = vars[String(text.dropFirst(7).dropLast())]
                else { return value }
                return declared
            }
            let normalize = normalizers[name]
            #expect(normalize != nil, "no normalizer for \(name)")
            let normalized = normalize?(given)
            #expect(normalized != nil, "\(name) refuses \(JSON.object(given).serialized())")
            written["with"] = normalized.map(JSON.object)
        }
        return .object(written)
    }

    /// `built` is the built-in flow `name` step for step, but for the steps `leftOut` of the file.
    static func expectSame(_ built: Flow, as name: String, leftOut: Set<String> = []) throws {
        var file = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        file.steps.removeAll { leftOut.contains($0.name) }
        let mine = built.steps.map { canonical($0, vars: [:]) }
        let theirs = file.steps.map { canonical($0, vars: file.vars) }
        #expect(mine.map { $0.serialized() } == theirs.map { $0.serialized() }, "steps of \(name)")
        #expect(
            built.finally.map { canonical($0, vars: [:]).serialized() }
                == file.finally.map { canonical($0, vars: file.vars).serialized() }, "finally of \(name)")
        #expect(built.deadline == file.deadline, "deadline of \(name)")
        #expect(built.ownsState && file.ownsState, "\(name) runs in a state scope of its own, as a whole checkout")
    }

    @Test func eachCommandBuildsTheBuiltinFlowItsHelpNames() throws {
        try Self.expectSame(try CommandFlows.centraExpress(.init()), as: "centra-express")
        var pdp = CommandFlows.CentraExpress()
        pdp.item = "1002-M"
        try Self.expectSame(try CommandFlows.centraExpress(pdp), as: "centra-express-pdp")
        var ingrid = CommandFlows.CentraExpress()
        ingrid.ingrid = true
        try Self.expectSame(try CommandFlows.centraExpress(ingrid), as: "centra-express-ingrid")

        try Self.expectSame(CommandFlows.braintreeApplePay(.init(amount: 1000)), as: "braintree-apple-pay")
        var authorize = CommandFlows.BraintreeApplePay(amount: 1000)
        authorize.authorizeOnly = true
        // The capture is a later command (`braintree capture`).
        try Self.expectSame(
            CommandFlows.braintreeApplePay(authorize), as: "braintree-apple-pay-auth-capture", leftOut: ["capture"])

        try Self.expectSame(try CommandFlows.cashAppPay(.init(amount: 1000)), as: "cashapp-server")
        var auth = CommandFlows.CashAppPay(amount: 1000)
        auth.authorize = true
        try Self.expectSame(try CommandFlows.cashAppPay(auth), as: "cashapp-server-auth")
        var button = CommandFlows.CashAppPay(amount: 1000)
        button.button = true
        try Self.expectSame(try CommandFlows.cashAppPay(button), as: "cashapp-button")
    }

    /// What the comparison above rests on: a flow that differs from its file in one argument is told apart.
    @Test func aDifferentArgumentIsToldApart() throws {
        let file = try BuiltinFlows.load(BuiltinFlows.named("cashapp-server")!, registry: Self.registry)
        var other = CommandFlows.CashAppPay(amount: 1001)
        other.scope = .merchant
        let built = try CommandFlows.cashAppPay(other)
        for (index, step) in built.steps.enumerated() {
            let same =
                Self.canonical(step, vars: [:]).serialized()
                == Self.canonical(file.steps[index], vars: file.vars).serialized()
            #expect(same == !["checkout", "request"].contains(step.name), "\(step.name)")
        }
    }

    // MARK: Each option on its argument

    @Test func centraExpressTakesEveryOption() throws {
        var o = CommandFlows.CentraExpress()
        o.item = "1002-M"
        o.contact = ["country": "SE"]
        o.billing = ["country": "NO"]
        o.shippingMethod = 3
        o.tokenFile = "t.json"
        o.threeDSDetails = "d.json"
        o.open = true
        let flow = try CommandFlows.centraExpress(o)
        #expect(flow.name == "centra-express")
        #expect(Self.arguments(flow, "add-item")?["item"] == "1002-M")
        #expect(Self.arguments(flow, "shipping")?["address"] == ["country": "SE"])
        #expect(Self.arguments(flow, "shipping-method")?["id"] == 3)
        let payment = Self.arguments(flow, "payment")
        #expect(payment?["shippingAddress"] == ["country": "SE"] && payment?["billingAddress"] == ["country": "NO"])
        #expect(payment?["tokenFile"] == "t.json" && payment?["threeDSDetails"] == "d.json" && payment?["open"] == true)
        #expect(!flow.steps.contains { $0.name == "make-token" }, "a given token is not made")
        #expect(flow.finally.map(\.name) == ["rollback"], "a PDP item is rolled back")
        #expect(flow.variableNames.isEmpty, "no option goes through a variable")

        o.cancelAfter = .shipping
        let cancelled = try CommandFlows.centraExpress(o)
        #expect(cancelled.steps.map(\.name) == ["express-config", "add-item", "shipping"])
        #expect(cancelled.finally.map(\.name) == ["rollback"], "a cancelled PDP checkout rolls its item back")
        // The cart's checkout adds no item to stop after.
        var cart = CommandFlows.CentraExpress()
        cart.cancelAfter = .addItem
        #expect(diagnostic { () throws(Diagnostic) in try CommandFlows.centraExpress(cart) }?.code == .usage)
        // The Ingrid flow has no product step: an item with it would be silently left out.
        var ingrid = CommandFlows.CentraExpress()
        ingrid.ingrid = true
        ingrid.item = "1002-M"
        #expect(diagnostic { () throws(Diagnostic) in try CommandFlows.centraExpress(ingrid) }?.code == .usage)
    }

    @Test func braintreeApplePayTakesEveryOption() throws {
        var o = CommandFlows.BraintreeApplePay(amount: 1050)
        o.authorizeOnly = true
        o.currency = try Currency.parse("EUR")
        o.network = "MasterCard"
        o.clientToken = "ct"
        o.orderID = "o-1"
        o.tokenFile = "t.json"
        let flow = CommandFlows.braintreeApplePay(o)
        #expect(flow.steps.map(\.name) == ["config", "tokenize", "authorize"], "no token made, no capture yet")
        #expect(Self.arguments(flow, "config") == ["clientToken": "ct", "currency": "EUR", "network": "MasterCard"])
        let tokenize = Self.arguments(flow, "tokenize")
        #expect(tokenize?["tokenFile"] == "t.json" && tokenize?["clientToken"] == "ct")
        #expect(tokenize?["paymentNetwork"] == "MasterCard")
        #expect(tokenize?["clientApiUrl"] == "${steps.config.summary.clientApiUrl}")
        let authorize = Self.arguments(flow, "authorize")
        #expect(authorize?["amount"] == "10.50" && authorize?["currency"] == "EUR" && authorize?["orderId"] == "o-1")
        #expect(authorize?["nonce"] == "${steps.tokenize.nonce}")

        var n = CommandFlows.BraintreeApplePay(amount: 1000)
        n.nonce = "fake-apple-pay-visa-nonce"
        n.skipConfiguration = true
        let charged = CommandFlows.braintreeApplePay(n)
        #expect(charged.steps.map(\.name) == ["charge"])
        #expect(Self.arguments(charged, "charge")?["nonce"] == "fake-apple-pay-visa-nonce")
        n.skipConfiguration = false
        #expect(CommandFlows.braintreeApplePay(n).steps.map(\.name) == ["config", "charge"])
    }

    @Test func cashAppPayTakesEveryOption() throws {
        var o = CommandFlows.CashAppPay(amount: 1234)
        o.button = true
        o.email = "a@b.c"
        o.scope = .merchant
        o.approvalTimeout = 30
        o.pollInterval = 0.5
        o.cardOut = "card.json"
        let flow = try CommandFlows.cashAppPay(o)
        #expect(
            Self.arguments(flow, "button")?["amount"] == "12.34" && Self.arguments(flow, "button")?["email"] == "a@b.c")
        #expect(Self.arguments(flow, "request")?["scope"] == "merchant")
        #expect(
            Self.arguments(flow, "approval")?["timeout"] == 30 && Self.arguments(flow, "approval")?["interval"] == 0.5)
        #expect(Self.arguments(flow, "confirm")?["cardOut"] == "card.json")
        var server = CommandFlows.CashAppPay(amount: 100)
        server.authorize = true
        #expect(try CommandFlows.cashAppPay(server).steps.last?.name == "auth")
        server.cardOut = "card.json"
        #expect(
            diagnostic { () throws(Diagnostic) in try CommandFlows.cashAppPay(server) }?.code == .usage,
            "the server flow has no card to write")
    }

    /// A value known only as the flow runs is written where the operation reads the property it is bound to.
    @Test func aLaterArgumentIsWrittenUnderItsPropertysName() {
        let step = Step.Action.operation(
            BraintreeOperations.tokenize, BraintreeOperations.Tokenize(),
            later: [.bind(\.clientAPIURL, to: .output(step: "config", path: "summary.clientApiUrl"))])
        guard case .operation(_, let arguments) = step else {
            Issue.record("not an operation step")
            return
        }
        #expect(arguments["clientApiUrl"] == "${steps.config.summary.clientApiUrl}")
        #expect(arguments["tokenFile"] == "", "a required argument is written, its value a placeholder")
    }
}
