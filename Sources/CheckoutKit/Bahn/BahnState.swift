import Foundation

/// What Bahn commands keep in the state file so that separate invocations chain: intents and their orders,
/// the idempotency key of each confirm (so a retry in a later invocation reuses it), and the transaction ids
/// of tokens already confirmed (they are single-use).
///
/// Layout: `{"bahn": {"intents": {"pi_…": {"orderId", "amount", "currency", "status", "latest_charge_id", "confirmKey",
///                                        "confirmTransaction"}},
///                   "orders": {"1234": "pi_…"}, "lastIntent": "pi_…", "spentTransactions": ["…"],
///                   "transactionKeys": {"<transaction id>": "<the idempotency key it was sent under>"}}}`
struct BahnState: Sendable {
    let store: StateStore?

    private static let root = JSONPath(components: [.key("bahn")])

    private func read() throws(Diagnostic) -> JSON { try store?.read()["bahn"] ?? .object([:]) }

    private func update(_ change: (inout [String: JSON]) throws(Diagnostic) -> Void) throws(Diagnostic) {
        try store?.update { (doc: inout JSON) throws(Diagnostic) in
            var bahn = doc["bahn"]?.objectValue ?? [:]
            try change(&bahn)
            doc = Self.root.setting(.object(bahn), in: doc)
        }
    }

    func record(intent: JSON, orderID: String?) throws(Diagnostic) {
        guard let id = intent["id"]?.stringValue else { return }
        try update { bahn in
            var intents = bahn["intents"]?.objectValue ?? [:]
            var entry = intents[id]?.objectValue ?? [:]
            if let orderID { entry["orderId"] = .string(orderID) }
            for key in ["amount", "currency", "status", "latest_charge_id"] { if let v = intent[key] { entry[key] = v } }
            intents[id] = .object(entry)
            bahn["intents"] = .object(intents)
            if let orderID {
                var orders = bahn["orders"]?.objectValue ?? [:]
                orders[orderID] = .string(id)
                bahn["orders"] = .object(orders)
            }
            bahn["lastIntent"] = .string(id)
        }
    }

    func intentID(forOrder orderID: String) throws(Diagnostic) -> String? {
        try read()["orders"]?[orderID]?.stringValue
    }

    func orderID(forIntent id: String) throws(Diagnostic) -> String? {
        try read()["intents"]?[id]?["orderId"]?.stringValue
    }

    /// The intent's latest charge as last seen: a read-back that finds another one knows a confirm reached Bahn.
    func latestCharge(intent id: String) throws(Diagnostic) -> String? {
        try read()["intents"]?[id]?["latest_charge_id"]?.stringValue
    }

    /// The confirm key for `intent` and this token. A retry of the same token must reuse the key it was first
    /// sent under (so Bahn replays instead of charging again); a different token on the same intent — after a
    /// decline, say — is a new attempt and gets a key of its own, since Bahn refuses one key with two bodies.
    /// The key is recorded before the request goes out, so even a crash mid-request leaves it for the retry.
    ///
    /// A token this state file has seen confirmed is single-use: sending it again under the key it went out with is a
    /// replay (Bahn answers with the original response) and is allowed; under any other key it would be a second
    /// charge attempt with a spent token, so it is refused here, before anything is sent.
    func confirmKey(intent id: String, proposed: String, explicit: Bool, transactionID: String,
                    tokenPath: String) throws(Diagnostic) -> (key: String, isNewAttempt: Bool) {
        var chosen = proposed
        var newAttempt = false
        try update { (bahn: inout [String: JSON]) throws(Diagnostic) in
            var intents = bahn["intents"]?.objectValue ?? [:]
            var entry = intents[id]?.objectValue ?? [:]
            var transactionKeys = bahn["transactionKeys"]?.objectValue ?? [:]
            let sentUnder = transactionKeys[transactionID]?.stringValue
            if !explicit, let sentUnder {
                chosen = sentUnder
            } else if !explicit, let existing = entry["confirmKey"]?.stringValue {
                if entry["confirmTransaction"]?.stringValue == transactionID {
                    chosen = existing
                } else {
                    chosen = "\(proposed)-\(transactionID.prefix(8))"
                    newAttempt = true
                }
            }
            let spent = (bahn["spentTransactions"]?.arrayValue ?? []).contains { $0.stringValue?.lowercased() == transactionID.lowercased() }
            if spent, sentUnder != chosen {
                throw .data("token file \(tokenPath): transaction \(transactionID) was already confirmed\(sentUnder.map { " under idempotency key \($0)" } ?? ""); an Apple Pay token is single-use",
                            hint: sentUnder.map { "to get the original answer again, re-send it under the same key (--idempotency-key \($0)): Bahn replays it and charges nothing; for a new payment make a fresh token with `checkout-driver applepay token`" }
                                ?? "make a fresh token with `checkout-driver applepay token`")
            }
            entry["confirmKey"] = .string(chosen)
            entry["confirmTransaction"] = .string(transactionID)
            intents[id] = .object(entry)
            bahn["intents"] = .object(intents)
            transactionKeys[transactionID] = .string(chosen)
            bahn["transactionKeys"] = .object(transactionKeys)
        }
        return (chosen, newAttempt)
    }

    func spentTransactions() throws(Diagnostic) -> Set<String> {
        Set(try read()["spentTransactions"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    func markSpent(_ transactionID: String) throws(Diagnostic) {
        try update { bahn in
            var spent = bahn["spentTransactions"]?.arrayValue ?? []
            if !spent.contains(.string(transactionID)) { spent.append(.string(transactionID)) }
            bahn["spentTransactions"] = .array(spent)
        }
    }
}
