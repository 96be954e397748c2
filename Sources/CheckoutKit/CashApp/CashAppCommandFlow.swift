/// The flow `cashapp pay` runs, built from its typed options (see `CommandFlows`): the steps of the built-in flows
/// `cashapp-server`, `cashapp-server-auth` and `cashapp-button`.
extension CommandFlows {
    public struct CashAppPay: Sendable {
        /// Minor units of US dollars, Cash App Pay's one currency.
        public var amount: Int
        /// The Afterpay Button's flow, which ends with a virtual card, instead of the server checkout.
        public var button = false
        /// The server checkout authorised for a later capture.
        public var authorize = false
        public var email = CashAppProtocol.defaultEmail
        public var scope = CashAppProtocol.Scope.brand
        /// Seconds.
        public var approvalTimeout: Double = 120
        public var pollInterval = CashAppProtocol.pollInterval
        /// The button flow's virtual card, written in full to this new file.
        public var cardOut: String?

        public init(amount: Int) { self.amount = amount }
    }

    public static func cashAppPay(_ options: CashAppPay) throws(Diagnostic) -> Flow {
        if options.cardOut != nil && !options.button {
            throw .usage("--card-out is for the button flow (the server flow has no card)", hint: "add --flow button")
        }
        var steps: [Step] = []
        if options.button {
            var button = CashAppOperations.Button()
            button.amount = options.amount
            button.email = options.email
            steps.append(Step(name: "button", action: .operation(CashAppOperations.button, button)))
        } else {
            var checkout = CashAppOperations.Checkout()
            checkout.amount = options.amount
            checkout.email = options.email
            steps.append(Step(name: "checkout", action: .operation(CashAppOperations.checkout, checkout)))
        }
        steps.append(Step(name: "sign", action: .operation(CashAppOperations.sign, CashAppOperations.Sign())))
        var request = CashAppOperations.Request()
        request.scope = options.scope
        steps.append(Step(name: "request", action: .operation(CashAppOperations.request, request)))
        var poll = CashAppApproval.Poll()
        poll.timeout = options.approvalTimeout
        poll.interval = options.pollInterval
        steps.append(Step(name: "approval", action: .operation(CashAppApproval.poll, poll)))
        if options.button {
            var confirm = CashAppCard.Confirm()
            confirm.cardOut = options.cardOut
            steps.append(
                Step(
                    name: "confirm", action: .operation(CashAppCard.confirm, confirm),
                    expect: expecting(exist: ["card", "type"], ["card", "validUntil"])))
            return checkout("cashapp-button", steps)
        }
        steps.append(Step(name: "validate", action: .operation(CashAppOperations.validate, NoArguments())))
        if options.authorize {
            steps.append(
                Step(
                    name: "auth", action: .operation(CashAppPayments.auth, CashAppPayments.Auth()),
                    expect: expecting(equals: ["payment", "paymentState"], "AUTH_APPROVED")))
            return checkout("cashapp-server-auth", steps)
        }
        steps.append(
            Step(
                name: "capture", action: .operation(CashAppPayments.capture, CashAppPayments.Capture()),
                expect: expecting(equals: ["payment", "status"], "APPROVED")))
        return checkout("cashapp-server", steps)
    }
}
