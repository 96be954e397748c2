import Foundation

/// The Braintree operations that move no money: whether the keys work (`ping`), a client token for the client side, a
/// transaction read by id or order id.
extension BraintreeOperations {
    public static let ping = FlowOperation(
        name: "braintree.ping", summary: "query { ping }: the API keys work.", arguments: NoArguments.self,
        requiredConfiguration: BraintreeClient.serverConfiguration,
        outputs: [.init("ping", "pong"), .init("requestId", "Braintree's request id")]
    ) { (_: NoArguments, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let response = try await BraintreeClient(context).graphQL(BraintreeDocuments.ping)
        let pong = try BraintreeClient.payload(response, "ping", what: "ping")
        return StepOutput(
            document: ["ping": pong, "requestId": response.extensions["requestId"] ?? .null], status: response.status)
    }

    /// `braintree.clientToken`'s arguments.
    public struct ClientToken: OperationArguments {
        public var merchantAccountID: String?
        public var customerID: String?

        public init() {}

        public static let arguments: [Argument<ClientToken>] = [
            .string("merchantAccountId", \.merchantAccountID), .string("customerId", \.customerID),
        ]
    }

    public static let clientToken = FlowOperation(
        name: "braintree.clientToken", summary: "Create a client token (createClientToken) for the client API.",
        arguments: ClientToken.self,
        requiredConfiguration: BraintreeClient.serverConfiguration,
        outputs: [.init("clientToken", "the client token (a secret: shown masked)")]
    ) { (args: ClientToken, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        var token: JSON.Object = [:]
        token["merchantAccountId"] = args.merchantAccountID.map(JSON.string)
        token["customerId"] = args.customerID.map(JSON.string)
        let response = try await BraintreeClient(context).graphQL(
            BraintreeDocuments.clientToken, ["input": ["clientToken": .object(token)]])
        let payload = try BraintreeClient.payload(response, "createClientToken", what: "createClientToken")
        // An authorization for the client API: masked in every output (`braintree client-token` prints it on purpose).
        if let token = payload["clientToken"]?.stringValue { context.redactor.register(token) }
        return StepOutput(document: ["clientToken": payload["clientToken"] ?? .null], status: response.status)
    }

    /// `braintree.transaction`'s arguments: a transaction id, else an order id (the step fails without either).
    public struct Transaction: OperationArguments {
        public var transaction: String?
        public var orderID: String?

        public init() {}

        public static let arguments: [Argument<Transaction>] = [
            .string("transaction", \.transaction), .string("orderId", \.orderID),
        ]
    }

    public static let transaction = FlowOperation(
        name: "braintree.transaction", summary: "Read a transaction by id, or find the transactions of an orderId.",
        arguments: Transaction.self,
        requiredConfiguration: BraintreeClient.serverConfiguration,
        outputs: transactionOutputs + [.init("all", "every transaction of the orderId", when: "by orderId")]
    ) { (args: Transaction, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = BraintreeClient(context)
        // A read that tells what a transaction or an order holds settles a charge, capture or void left open on it.
        if let id = args.transaction {
            let found = try await BraintreeReadBack.read(id, client: client)
            context.settledOpenOutcomes(
                provider: "braintree", reference: "transaction \(id)", "\(id) is \(found["status"]?.stringValue ?? "?")"
            )
            return StepOutput(document: ["transaction": found, "summary": summary(found)], status: 200)
        }
        guard let order = args.orderID else {
            throw .usage(
                "give a transaction id or an order id",
                hint: "`checkout-driver braintree transaction TXN` or `--order-id ID`")
        }
        let found = try await BraintreeReadBack.search(order, client: client)
        context.settledOpenOutcomes(
            provider: "braintree", reference: "order \(order)",
            found.isEmpty
                ? "no transaction has orderId \(order): nothing was charged (if the charge was sent moments ago, look again before paying)"
                : "order \(order) has \(found.count) transaction(s), the latest \(found.first?["status"]?.stringValue ?? "?")"
        )
        guard let latest = found.first else {
            throw .failure("no Braintree transaction has orderId \(order)", hint: "check the order id")
        }
        return StepOutput(
            document: ["transaction": latest, "summary": summary(latest), "all": .array(found)], status: 200)
    }
}
