/// The flow `cashapp pay` runs, built from its typed options (see `CommandFlows`).
extension CommandFlows {
    public struct CashAppPay: Sendable {
        /// A decimal string, e.g. "10.00".
        public var amount: String
        public var button = false
        public var authorize = false
        public var email: String?
        public var scope = "brand"
        /// Seconds, as decimal strings.
        public var approvalTimeout = "120"
        public var pollInterval = "1"
        /// The button flow's virtual card, written in full to this new file.
        public var cardOut: String?

        public init(amount: String) { self.amount = amount }
    }

    public static func cashAppPay(_ options: CashAppPay, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        let name = options.button ? "cashapp-button" : options.authorize ? "cashapp-server-auth" : "cashapp-server"
        var flow = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        flow.vars["amount"] = .string(options.amount)
        if let email = options.email { flow.vars["email"] = .string(email) }
        flow.vars["scope"] = .string(options.scope)
        flow.vars["approval_timeout"] = .string(options.approvalTimeout)
        flow.vars["poll_interval"] = .string(options.pollInterval)
        if let cardOut = options.cardOut { try flow.setArguments(of: .confirm) { $0["cardOut"] = .string(cardOut) } }
        return flow
    }
}
