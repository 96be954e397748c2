/// The built-in flows the whole-checkout commands run (`centra express`, `braintree apple-pay`, `cashapp pay`), built
/// from typed options. Each step a command adjusts is named once, in `BuiltinStep`, and adjusting a step the flow does
/// not have is an internal error — so a step renamed in a template and not here fails `CommandFlowTests` (and the
/// command, loudly) instead of turning an option into a silent no-op. The options' values are checked by the
/// operations' parameter declarations before the first request, as a flow file's are (`FlowRunner.preflight`).
public enum CommandFlows {
    public struct CentraExpress: Sendable {
        public var item: String?
        public var contact: [String: JSON]?
        public var billing: [String: JSON]?
        public var shippingMethod: Int?
        public var tokenFile: String?
        public var threeDSDetails: String?
        public var open = false
        public var ingrid = false
        /// Stop after this step, as a shopper dismissing the sheet.
        public var cancelAfter: String?

        public init() {}
    }

    public static func centraExpress(_ options: CentraExpress, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        let name = options.ingrid ? "centra-express-ingrid" : options.item == nil ? "centra-express" : "centra-express-pdp"
        var flow = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        flow.name = "centra-express"
        if let item = options.item { flow.vars["item"] = .string(item) }
        if let contact = options.contact { flow.vars["contact"] = .object(contact) }
        if options.open { flow.vars["open"] = true }
        if let method = options.shippingMethod {
            try flow.setArguments(of: .shippingMethod) { $0["id"] = .number(Double(method)) }
        }
        if let path = options.tokenFile {
            try flow.remove(.makeToken)
            flow.vars["token_file"] = .string(path)
        }
        if options.billing != nil || options.threeDSDetails != nil {
            try flow.setArguments(of: .payment) { arguments in
                if let billing = options.billing { arguments["billingAddress"] = .object(billing) }
                if let details = options.threeDSDetails { arguments["threeDSDetails"] = .string(details) }
            }
        }
        if let stop = options.cancelAfter {
            guard let index = flow.steps.firstIndex(where: { $0.name == stop }) else {
                throw .usage("--cancel-after \(stop): this checkout has no step \(stop) (its steps: \(flow.steps.map(\.name).joined(separator: ", ")))")
            }
            flow.steps = Array(flow.steps[...index])
        }
        return flow
    }

    public struct BraintreeApplePay: Sendable {
        /// Minor units.
        public var amount: Int
        public var authorizeOnly = false
        public var currency: String?
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

    public static func braintreeApplePay(_ options: BraintreeApplePay, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        let name = options.authorizeOnly ? "braintree-apple-pay-auth-capture" : "braintree-apple-pay"
        var flow = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        flow.name = "braintree-apple-pay"
        flow.vars["amount"] = .string(DecimalAmount.text(options.amount))
        flow.vars["amount_minor"] = .number(Double(options.amount))
        if let currency = options.currency { flow.vars["currency"] = .string(currency.uppercased()) }
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

/// The steps of the built-in flows that commands adjust, by the names the templates give them.
public enum BuiltinStep: String, CaseIterable, Sendable {
    case makeToken = "make-token"
    case shippingMethod = "shipping-method"
    case payment
    case config
    case tokenize
    case charge
    case authorize
    case capture
    case confirm
}

extension Flow {
    /// Changes the arguments of one of its operation steps; a step the flow does not have is an internal error.
    mutating func setArguments(of step: BuiltinStep, _ change: (inout [String: JSON]) -> Void) throws(Diagnostic) {
        guard let index = steps.firstIndex(where: { $0.name == step.rawValue }),
              case .operation(let operation, let arguments) = steps[index].action else {
            throw .internalError("built-in flow \(name) has no operation step '\(step.rawValue)' to adjust")
        }
        var adjusted = arguments.objectValue ?? [:]
        change(&adjusted)
        steps[index].action = .operation(name: operation, arguments: .object(adjusted))
    }

    /// Leaves out steps it has; a step it does not have is an internal error.
    mutating func remove(_ names: BuiltinStep...) throws(Diagnostic) {
        for step in names {
            guard steps.contains(where: { $0.name == step.rawValue }) else {
                throw .internalError("built-in flow \(name) has no step '\(step.rawValue)' to leave out")
            }
            steps.removeAll { $0.name == step.rawValue }
        }
    }
}
