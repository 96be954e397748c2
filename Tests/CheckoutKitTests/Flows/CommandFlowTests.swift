import SandboxEmulator
import Testing

@testable import CheckoutKit

/// The flows the whole-checkout commands build from their options: every option lands on the step it is for, and a
/// step a command adjusts that the template does not have fails here (a renamed step is never a silent no-op).
@Suite struct CommandFlowTests {
    static let registry: OperationRegistry = {
        var r = OperationRegistry(
            BahnOperations.all + CentraOperations.all + CashAppOperations.all + BraintreeOperations.all)
        r.register(
            ApplePayOperations.makeToken(
                signer: BahnRig.signer, recipient: BahnRig.recipient,
                merchantIdentifier: TestCredentials.merchantIdentifier))
        return r
    }()

    static func arguments(_ flow: Flow, _ step: String) -> JSON? {
        guard case .operation(_, let arguments)? = flow.steps.first(where: { $0.name == step })?.action else {
            return nil
        }
        return arguments
    }

    @Test func everyStepACommandAdjustsIsInABuiltinFlow() throws {
        let names = Set(
            try BuiltinFlows.all.flatMap { try BuiltinFlows.load($0, registry: Self.registry).steps.map(\.name) })
        for step in BuiltinStep.allCases { #expect(names.contains(step.rawValue), "\(step.rawValue)") }
    }

    @Test func centraExpressTakesEveryOption() throws {
        var o = CommandFlows.CentraExpress()
        o.item = "1002-M"
        o.contact = ["country": "SE"]
        o.billing = ["country": "NO"]
        o.shippingMethod = 3
        o.tokenFile = "t.json"
        o.threeDSDetails = "d.json"
        o.open = true
        let flow = try CommandFlows.centraExpress(o, registry: Self.registry)
        #expect(flow.name == "centra-express")
        #expect(flow.vars["item"] == "1002-M" && flow.vars["token_file"] == "t.json" && flow.vars["open"] == true)
        #expect(flow.vars["contact"] == ["country": "SE"])
        #expect(Self.arguments(flow, "shipping-method")?["id"] == 3)
        #expect(Self.arguments(flow, "payment")?["billingAddress"] == ["country": "NO"])
        #expect(Self.arguments(flow, "payment")?["threeDSDetails"] == "d.json")
        #expect(!flow.steps.contains { $0.name == "make-token" }, "a given token is not made")
        #expect(flow.finally.map(\.name) == ["rollback"], "a PDP item is rolled back")
        o.cancelAfter = "shipping"
        #expect(try CommandFlows.centraExpress(o, registry: Self.registry).steps.last?.name == "shipping")
        o.cancelAfter = "nope"
        #expect(throws: Diagnostic.self) { try CommandFlows.centraExpress(o, registry: Self.registry) }
        // The Ingrid flow has no product step: an item with it would be silently left out.
        var ingrid = CommandFlows.CentraExpress()
        ingrid.ingrid = true
        #expect(try CommandFlows.centraExpress(ingrid, registry: Self.registry).steps.first?.name == "widget-event")
        ingrid.item = "1002-M"
        #expect(
            diagnostic { () throws(Diagnostic) in try CommandFlows.centraExpress(ingrid, registry: Self.registry) }?
                .code == .usage)
    }

    @Test func braintreeApplePayTakesEveryOption() throws {
        var o = CommandFlows.BraintreeApplePay(amount: 1050)
        o.authorizeOnly = true
        o.currency = .usd
        o.clientToken = "ct"
        o.orderID = "o-1"
        o.tokenFile = "t.json"
        let flow = try CommandFlows.braintreeApplePay(o, registry: Self.registry)
        #expect(flow.vars["amount"] == "10.50" && flow.vars["amount_minor"] == nil && flow.vars["currency"] == "USD")
        #expect(flow.steps.map(\.name) == ["config", "tokenize", "authorize"], "no token made, no capture yet")
        #expect(
            Self.arguments(flow, "config")?["clientToken"] == "ct"
                && Self.arguments(flow, "tokenize")?["clientToken"] == "ct")
        #expect(Self.arguments(flow, "authorize")?["orderId"] == "o-1")

        var n = CommandFlows.BraintreeApplePay(amount: 1000)
        n.nonce = "fake-apple-pay-visa-nonce"
        n.skipConfiguration = true
        let charged = try CommandFlows.braintreeApplePay(n, registry: Self.registry)
        #expect(charged.steps.map(\.name) == ["charge"])
        #expect(
            Self.arguments(charged, "charge")?["nonce"] == "${vars.nonce}"
                && charged.vars["nonce"] == "fake-apple-pay-visa-nonce")
    }

    @Test func cashAppPayTakesEveryOption() throws {
        var o = CommandFlows.CashAppPay(amount: "12.34")
        o.button = true
        o.email = "a@b.c"
        o.scope = "merchant"
        o.approvalTimeout = "30"
        o.pollInterval = "0.5"
        o.cardOut = "card.json"
        let flow = try CommandFlows.cashAppPay(o, registry: Self.registry)
        #expect(flow.vars["amount"] == "12.34" && flow.vars["email"] == "a@b.c" && flow.vars["scope"] == "merchant")
        #expect(flow.vars["approval_timeout"] == "30" && flow.vars["poll_interval"] == "0.5")
        #expect(Self.arguments(flow, "confirm")?["cardOut"] == "card.json")
        var server = CommandFlows.CashAppPay(amount: "1.00")
        server.authorize = true
        #expect(try CommandFlows.cashAppPay(server, registry: Self.registry).steps.last?.name == "auth")
        server.cardOut = "card.json"
        #expect(throws: Diagnostic.self, "the server flow has no confirm step to take a card file") {
            try CommandFlows.cashAppPay(server, registry: Self.registry)
        }
    }

    /// Adjusting or leaving out a step the flow does not have is an internal error, never a silent no-op.
    @Test func aStepTheFlowDoesNotHaveIsAnInternalError() throws {
        var flow = try BuiltinFlows.load(BuiltinFlows.named("braintree-apple-pay")!, registry: Self.registry)
        #expect(diagnostic { () throws(Diagnostic) in try flow.remove(.capture) }?.code == .internalError)
        #expect(
            diagnostic { () throws(Diagnostic) in try flow.setArguments(of: .confirm) { _ in } }?.code == .internalError
        )
        try flow.remove(.makeToken)
        #expect(!flow.steps.contains { $0.name == "make-token" })
    }
}
