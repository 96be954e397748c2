/// The flow `braintree apple-pay` runs, built from its typed options (see `CommandFlows`): the steps of the built-in
/// flows `braintree-apple-pay` and (up to its authorisation) `braintree-apple-pay-auth-capture`.
extension CommandFlows {
    public struct BraintreeApplePay: Sendable {
        /// Minor units.
        public var amount: Int
        /// Authorize only: the capture is a later command.
        public var authorizeOnly = false
        public var currency = Currency.usd
        /// The card network of the Apple Pay payment.
        public var network = "Visa"
        /// A token to tokenize; nil: one is made for the amount.
        public var tokenFile: String?
        /// A nonce to charge instead of tokenizing a token.
        public var nonce: String?
        /// With a nonce and no client-side authorization: the gateway's configuration cannot be read.
        public var skipConfiguration = false
        public var clientToken: String?
        public var orderID: String?

        public init(amount: Int) { self.amount = amount }
    }

    public static func braintreeApplePay(_ options: BraintreeApplePay) -> Flow {
        var steps: [Step] = []
        if options.nonce == nil && options.tokenFile == nil {
            var token = ApplePayOperations.MakeToken()
            token.total = options.amount
            token.currency = options.currency
            steps.append(madeToken(token))
        }
        if options.nonce == nil || !options.skipConfiguration {
            var config = BraintreeOperations.Config()
            config.clientToken = options.clientToken
            config.currency = options.currency.code
            config.network = options.network
            steps.append(Step(name: "config", action: .operation(BraintreeOperations.config, config)))
        }
        var payment = BraintreeOperations.Transact()
        payment.amount = options.amount
        payment.currency = options.currency.code
        payment.orderID = options.orderID
        var paymentLater: [LaterArgument<BraintreeOperations.Transact>] = []
        if let nonce = options.nonce {
            payment.nonce = nonce
        } else {
            var tokenize = BraintreeOperations.Tokenize()
            tokenize.clientToken = options.clientToken
            tokenize.paymentNetwork = options.network
            var later: [LaterArgument<BraintreeOperations.Tokenize>] = [
                .bind(\.clientAPIURL, to: .output(step: "config", path: "summary.clientApiUrl"))
            ]
            if let path = options.tokenFile {
                tokenize.tokenFile = path
            } else {
                later.append(.bind(\.tokenFile, to: .captured(madeTokenFile)))
            }
            steps.append(
                Step(name: "tokenize", action: .operation(BraintreeOperations.tokenize, tokenize, later: later)))
            paymentLater.append(.bind(\.nonce, to: .output(step: "tokenize", path: "nonce")))
        }
        let (step, operation, status) =
            options.authorizeOnly
            ? ("authorize", BraintreeOperations.authorize, "AUTHORIZED")
            : ("charge", BraintreeOperations.charge, "SUBMITTED_FOR_SETTLEMENT")
        steps.append(
            Step(
                name: step, action: .operation(operation, payment, later: paymentLater),
                expect: expecting(equals: ["transaction", "status"], .string(status))))
        return checkout("braintree-apple-pay", steps, deadline: 60)
    }
}
