import Foundation

/// What a Braintree mutation whose answer was lost actually did, read back with queries (safe to repeat): a charge or
/// an authorization by its orderId (the driver always sets one), a capture or a void by the transaction id. The
/// commands that settle it when the read cannot tell.
enum BraintreeReadBack {
    static func byOrder(
        _ orderID: String, amount: String, action: String, prior: Set<String>?, asked: MoneyMovement,
        client: BraintreeClient
    ) -> ReadBack {
        ReadBack(
            provider: "braintree", action: action, effect: "the \(action)",
            resource: "the transactions of order \(orderID)",
            reference: "order \(orderID)", asked: asked, shown: { output in movement(asked, output) },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                finding(
                    try await search(orderID, client: client), orderID: orderID, amount: amount, action: action,
                    prior: prior)
            },
            settle: { _ in
                [
                    "look the order up before paying again (a nonce is single-use; a charge is never repeated): "
                        + command(["braintree", "transaction", "--order-id", orderID], client)
                ]
            })
    }

    static func byID(
        _ id: String, action: String, done: Set<String>, asked: MoneyMovement, client: BraintreeClient
    ) -> ReadBack {
        ReadBack(
            provider: "braintree", action: action, effect: "the \(action)", resource: "transaction \(id)",
            reference: "transaction \(id)",
            asked: asked, shown: { output in movement(asked, output) },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                finding(try await read(id, client: client), id: id, action: action, done: done)
            },
            settle: { _ in
                [
                    "read the transaction: " + command(["braintree", "transaction", id], client),
                    "then \(action) it again if it has not changed: " + command(["braintree", action, id], client),
                ]
            })
    }

    /// A transaction as the account shows it: its amount and currency, its status in words; a refusal a step expected
    /// (`expect: declined`) is the refusal it is.
    static func movement(_ asked: MoneyMovement, _ output: StepOutput) -> MoneyMovement {
        var shown = asked
        if let refused = output.document["refused"]?.stringValue {
            shown.outcome = .refused
            shown.status = "refused: " + refused
            return shown
        }
        let summary = output.document["summary"]
        shown.outcome = .done
        if let currency = summary?["currency"]?.stringValue { shown.currency = currency }
        if let value = summary?["amount"]?.stringValue, let money = try? Currency.parse(shown.currency ?? "USD") {
            shown.amount = money.minorUnits(ofDecimal: value) ?? shown.amount
        }
        if let id = summary?["id"]?.stringValue { shown.reference = "transaction \(id)" }
        shown.status =
            output.document["refund"] != nil
            ? "refunded (it was settled, so it could not be voided)"
            : MoneyMovement.words(summary?["status"]?.stringValue)
        return shown
    }

    /// What an order's transactions say of a lost charge or authorization. Only a transaction of this amount that was
    /// not there before the call (`prior`: the order's transaction ids then, when they could be read) can be this
    /// call's; two of them cannot tell which one this call made; a refused one means nothing moved; one in a status
    /// that holds no money (VOIDED, AUTHORIZATION_EXPIRED) settles nothing.
    static func finding(
        _ transactions: [JSON], orderID: String, amount: String, action: String, prior: Set<String>? = nil
    ) -> ReadBack.Finding {
        let found = transactions.filter {
            $0["amount"]?["value"]?.stringValue == amount && !(prior ?? []).contains($0["id"]?.stringValue ?? "")
        }
        guard found.count <= 1 else {
            return .notSeen(
                shows:
                    "order \(orderID) has \(found.count) transactions of \(amount), so which one this \(action) made cannot be told"
            )
        }
        guard let latest = found.first, let status = latest["status"]?.stringValue else {
            return .notSeen(shows: "no transaction of \(amount) has orderId \(orderID)")
        }
        if BraintreeProtocol.refusedStatuses.contains(status) {
            return .refused(BraintreeOperations.refusal(latest, action: action))
        }
        guard BraintreeProtocol.acceptedStatuses.contains(status) else {
            return .notSeen(shows: "transaction \(latest["id"]?.stringValue ?? "?") is \(status), which holds no money")
        }
        return .tookEffect(
            StepOutput(document: ["transaction": latest, "summary": BraintreeOperations.summary(latest)], status: 200),
            shows: "transaction \(latest["id"]?.stringValue ?? "?") is \(status)")
    }

    /// What a transaction's status says of a lost capture or void: only a status in `done` shows that it went through.
    static func finding(_ current: JSON, id: String, action: String, done: Set<String>) -> ReadBack.Finding {
        let status = current["status"]?.stringValue ?? "?"
        if done.contains(status) {
            return .tookEffect(
                StepOutput(
                    document: ["transaction": current, "summary": BraintreeOperations.summary(current)], status: 200),
                shows: "\(id) is \(status): the \(action) went through")
        }
        return .notSeen(shows: "\(id) is still \(status)")
    }

    static func read(_ id: String, client: BraintreeClient) async throws(Diagnostic) -> JSON {
        let response = try await client.graphQL(BraintreeDocuments.transactionByID, ["id": .string(id)])
        if response.errors.isEmpty && (response.data["node"] ?? .null) == .null {
            throw .failure(
                "Braintree has no transaction \(id)",
                hint: "check the id (`checkout-driver braintree transaction --order-id ID` finds an order's)")
        }
        return try BraintreeClient.payload(response, "node", what: "reading transaction \(id)")
    }

    /// The transactions with this orderId.
    static func search(_ orderID: String, client: BraintreeClient) async throws(Diagnostic) -> [JSON] {
        let response = try await client.graphQL(
            BraintreeDocuments.transactionsByOrder, ["input": ["orderId": ["is": .string(orderID)]]])
        let search = try BraintreeClient.payload(response, "search", what: "searching transactions of order \(orderID)")
        return (search["transactions"]?["edges"]?.arrayValue ?? []).compactMap { $0["node"] }.filter { $0 != .null }
    }

    private static func command(_ arguments: [String], _ client: BraintreeClient) -> String {
        "`" + ShellWords.join(["checkout-driver"] + arguments + client.context.services.settleOptions) + "`"
    }
}
