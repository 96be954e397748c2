/// The flow `braintree apple-pay` runs, built from its typed options (see `CommandFlows`).
extension CommandFlows {
    public struct BraintreeApplePay: Sendable {
        /// Minor units.
        public var amount: Int
        public var authorizeOnly = false
        public var currency: Currency?
        public var network: String?
        public var tokenFile: String?
        /// A nonce to charge instead of tokenizing a token.
        public var nonce: String?
        /// With a nonce and no client-side authorization: the gateway's configuration cannot be read.
        public var skipConfiguration = false
        public var clientToken: String?
        public var orderID: String?

        public init(amount: Int) { self.amount = amount }
    }

    public static func braintreeApplePay(
        _ options: BraintreeApplePay, registry: OperationRegistry
    ) throws(Diagnostic) -> Flow {
        let name = options.authorizeOnly ? "braintree-apple-pay-auth-capture" : "braintree-apple-pay"
        var flow = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        flow.name = "braintree-apple-pay"
        if let currency = options.currency { flow.vars["currency"] = .string(currency.code) }
        flow.vars["amount"] = .string((options.currency ?? .usd).decimal(options.amount))
        if let network = options.network { flow.vars["network"] = .string(network) }
        // Authorize only: the capture is a later command.
        if options.authorizeOnly { try flow.remove(.capture) }
        let payment: BuiltinStep = options.authorizeOnly ? .authorize : .charge
        if let nonce = options.nonce {
            try flow.remove(.makeToken, .tokenize)
            if options.skipConfiguration { try flow.remove(.config) }
            flow.vars["nonce"] = .string(nonce)
            try flow.setArguments(of: payment) { $0["nonce"] = "${vars.nonce}" }
        } else if let path = options.tokenFile {
            try flow.remove(.makeToken)
            flow.vars["token_file"] = .string(path)
        }
        if let clientToken = options.clientToken {
            for step in [BuiltinStep.config, .tokenize] where flow.steps.contains(where: { $0.name == step.rawValue }) {
                try flow.setArguments(of: step) { $0["clientToken"] = .string(clientToken) }
            }
        }
        if let orderID = options.orderID { try flow.setArguments(of: payment) { $0["orderId"] = .string(orderID) } }
        return flow
    }
}
