/// The flow `centra express` runs, built from its typed options (see `CommandFlows`).
extension CommandFlows {
    public struct CentraExpress: Sendable {
        public var item: String?
        public var contact: JSON.Object?
        public var billing: JSON.Object?
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
        if options.ingrid, options.item != nil {
            throw .usage(
                "--ingrid checks out the cart as it is; it has no product step for --item",
                hint: "leave one of them out")
        }
        let name =
            options.ingrid ? "centra-express-ingrid" : options.item == nil ? "centra-express" : "centra-express-pdp"
        var flow = try BuiltinFlows.load(BuiltinFlows.named(name)!, registry: registry)
        flow.name = "centra-express"
        if let item = options.item { flow.vars["item"] = .string(item) }
        if let contact = options.contact { flow.vars["contact"] = .object(contact) }
        if options.open { flow.vars["open"] = true }
        if let method = options.shippingMethod {
            try flow.setArguments(of: .shippingMethod) { $0["id"] = .number(JSON.Number(method)) }
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
                throw .usage(
                    "--cancel-after \(stop): this checkout has no step \(stop) (its steps: \(flow.steps.map(\.name).joined(separator: ", ")))"
                )
            }
            flow.steps = Array(flow.steps[...index])
        }
        return flow
    }
}
