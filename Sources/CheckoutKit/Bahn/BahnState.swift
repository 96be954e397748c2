import Foundation

/// What Bahn commands keep in the state file so that separate invocations chain: intents and their orders, and every
/// token sent — to which intent, under which idempotency key, whether Bahn has used it up — so that a retry in a later
/// invocation replays instead of charging again, and a single-use token is never sent twice under different keys.
///
/// Layout (`BahnSection`, decoded by one typed decoder, used by every reader):
/// `{"bahn": {"intents": {"pi_…": {"orderId", "amount", "currency", "status", "latest_charge_id",
/// "confirmTransaction"}},
///            "orders": {"1234": "pi_…"}, "lastIntent": "pi_…",
///            "tokens": {"<transaction id>": {"intent": "pi_…", "idempotencyKey": "…", "spent": true}}}}`
struct BahnState: Sendable {
    let store: StateStore?

    private static let root = JSONPath(components: [.key("bahn")])
    /// The section as last decoded or written, by its very value (`DecodedSections`).
    private static let sections = DecodedSections<BahnSection>()

    /// The operations' state check: the section decodes, or the run stops before its first request.
    static let check: FlowOperation.StateCheck = { (document: JSON, file: String) throws(Diagnostic) in
        _ = try sections.decode(document["bahn"], at: root, in: file)
    }

    private func read() throws(Diagnostic) -> BahnSection {
        guard let store else { return BahnSection() }
        return try Self.sections.decode(try store.read()["bahn"], at: Self.root, in: store.path)
    }

    private func update(_ change: (inout BahnSection) throws(Diagnostic) -> Void) throws(Diagnostic) {
        guard let store else { return }
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            var section = try Self.sections.decode(doc["bahn"], at: Self.root, in: store.path)
            try change(&section)
            doc = Self.sections.encode(section, at: Self.root, in: doc)
        }
    }

    func record(intent: JSON, orderID: String?) throws(Diagnostic) {
        guard let id = intent["id"]?.stringValue else { return }
        try update { bahn in
            var entry = bahn.intents[id] ?? BahnSection.Intent()
            if let orderID { entry.orderId = orderID }
            if let amount = intent["amount"]?.intValue { entry.amount = amount }
            if let currency = intent["currency"]?.stringValue { entry.currency = currency }
            if let status = intent["status"]?.stringValue { entry.status = status }
            if let charge = intent["latest_charge_id"] { entry.latestCharge = charge.stringValue }
            bahn.intents[id] = entry
            if let orderID { bahn.orders[orderID] = id }
            bahn.lastIntent = id
        }
    }

    func intentID(forOrder orderID: String) throws(Diagnostic) -> String? { try read().orders[orderID] }

    /// The intent a command names, or else the last one this state file saw (as the Cash App commands default to the
    /// last request); none is a usage error saying how to give one.
    func intent(_ given: String?, for command: String) throws(Diagnostic) -> String {
        if let given { return given }
        guard let last = try read().lastIntent else {
            throw .usage(
                "no intent given and none in the state file",
                hint:
                    "give its id: `checkout-driver bahn \(command) pi_…`, or create one first with `checkout-driver bahn create-intent`"
            )
        }
        return last
    }

    func orderID(forIntent id: String) throws(Diagnostic) -> String? { try read().intents[id]?.orderId }

    /// What a call on the intent would move, as far as this state file knows it: the account's entry for a refusal or
    /// an open outcome.
    func asked(_ kind: MoneyMovement.Kind, intent id: String) -> MoneyMovement {
        let known = (try? read())?.intents[id]
        return MoneyMovement(
            provider: "bahn", kind: kind, outcome: .unknown, amount: known?.amount, currency: known?.currency,
            reference: id)
    }

    /// What this state file knows of the intent's latest charge: `.known(nil)` for an intent seen without one,
    /// `.unknown` for an intent it has never seen. A read-back that finds another charge knows a confirm reached Bahn.
    func priorCharge(intent id: String) throws(Diagnostic) -> PriorCharge {
        guard let entry = try read().intents[id], entry.isKnown else { return .unknown }
        return .known(entry.latestCharge)
    }

    enum PriorCharge: Sendable, Equatable {
        case known(String?)
        case unknown
    }

    /// Refuses, before anything is sent (an intent created for it, say), a token this state file has sent before to
    /// another intent than `intent` (nil: an intent still to be created).
    func checkUnusedElsewhere(_ token: PaymentTokenFile, intent: String?) throws(Diagnostic) {
        if let used = try read().tokens[token.transactionId], used.intent != intent {
            throw Self.usedElsewhere(token, used)
        }
    }

    /// The confirm key for `intent` and this token. A retry of the same token must reuse the key it was first sent
    /// under (so Bahn replays instead of charging again); a different token on the same intent — after a decline, say —
    /// is a new attempt and gets a key of its own, since Bahn refuses one key with two bodies. The key is recorded
    /// before the request goes out, so even a crash mid-request leaves it for the retry.
    ///
    /// A token Bahn has used up is single-use: sending it again under the key it went out with is a replay (Bahn
    /// answers with the original response) and is allowed; under any other key it would be a second charge attempt with
    /// a spent token, and to another intent a second payment: both are refused here, before anything is sent.
    func confirmKey(
        intent id: String, proposed: String, explicit: Bool, token: PaymentTokenFile
    ) throws(Diagnostic) -> (key: String, isNewAttempt: Bool) {
        var chosen = proposed
        var newAttempt = false
        try update { (bahn: inout BahnSection) throws(Diagnostic) in
            let txid = token.transactionId
            let sent = bahn.tokens[txid]
            if let sent, sent.intent != id { throw Self.usedElsewhere(token, sent) }
            var entry = bahn.intents[id] ?? BahnSection.Intent()
            if !explicit, let sent {
                chosen = sent.idempotencyKey
            } else if !explicit, let previous = entry.confirmTransaction, previous != txid, bahn.tokens[previous] != nil
            {
                chosen = "\(proposed)-\(txid.prefix(8))"
                newAttempt = true
            }
            if let sent, sent.spent, sent.idempotencyKey != chosen {
                throw .data(
                    "token file \(token.path): transaction \(txid) was already confirmed under idempotency key \(sent.idempotencyKey); an Apple Pay token is single-use",
                    hint:
                        "to get the original answer again, re-send it under the same key (--idempotency-key \(sent.idempotencyKey)): Bahn replays it and charges nothing; for a new payment make a fresh token with `checkout-driver applepay token`"
                )
            }
            entry.confirmTransaction = txid
            bahn.intents[id] = entry
            // The first key a token went out under is the one that may have charged: it stays the token's key.
            bahn.tokens[txid] = sent ?? BahnSection.Token(intent: id, idempotencyKey: chosen, spent: false)
        }
        return (chosen, newAttempt)
    }

    private static func usedElsewhere(_ token: PaymentTokenFile, _ used: BahnSection.Token) -> Diagnostic {
        .data(
            "token file \(token.path): transaction \(token.transactionId) was already sent to \(used.intent) under idempotency key \(used.idempotencyKey)\(used.spent ? " and used up" : ""); an Apple Pay token pays one intent once",
            hint: used.spent
                ? "make a fresh token with `checkout-driver applepay token`"
                : "settle that payment first (`checkout-driver bahn intent \(used.intent)`), then make a fresh token for another one"
        )
    }

    func spentTransactions() throws(Diagnostic) -> Set<String> {
        Set(try read().tokens.filter { $0.value.spent }.keys)
    }

    /// Bahn used the token up: kept here (for the confirm key) and in the file-wide record every provider checks.
    func markSpent(_ transactionID: String, intent: String, key: String) throws(Diagnostic) {
        try update { bahn in bahn.tokens[transactionID]?.spent = true }
        guard let store else { return }
        try SpentCredentials.mark(
            transactionID, kind: "Apple Pay token", by: "Bahn's confirm of \(intent)",
            replay: Self.replay(intent: intent, key: key), in: store)
    }

    static let freshTokenHint = "make a fresh token with `checkout-driver applepay token`"

    /// The one re-send a spent token may still go out in: the same confirm under the same key.
    static func replay(intent: String, key: String, action: String = "confirm") -> String {
        "Bahn \(action) of \(intent) under idempotency key \(key)"
    }
}

/// The `bahn` section of the state file, typed. Unknown members (from a newer version) are kept as they are.
struct BahnSection: StateSection {
    struct Intent: Sendable {
        var orderId: String?
        var amount: Int?
        var currency: String?
        var status: String?
        var latestCharge: String?
        /// The transaction id of the token most recently sent to this intent.
        var confirmTransaction: String?
        var unknown: JSON.Object = [:]

        /// Whether the intent itself was seen (its status recorded), not only named by a confirm.
        var isKnown: Bool { status != nil }
    }

    struct Token: Sendable, Equatable {
        var intent: String
        var idempotencyKey: String
        /// Bahn answered about the token itself (a confirm or a decline): it is used up.
        var spent: Bool
    }

    var intents: [String: Intent] = [:]
    var orders: [String: String] = [:]
    var lastIntent: String?
    var tokens: [String: Token] = [:]
    var unknown: JSON.Object = [:]

    init() {}

    init(_ field: StateField) throws(Diagnostic) {
        for (id, f) in try field["intents"].members() {
            _ = try f.members()  // an object
            intents[id] = Intent(
                orderId: try f["orderId"].string(), amount: try f["amount"].int(),
                currency: try f["currency"].string(), status: try f["status"].string(),
                latestCharge: try f["latest_charge_id"].string(),
                confirmTransaction: try f["confirmTransaction"].string(),
                unknown: f.unknownMembers(besides: Intent.keys))
        }
        for (order, f) in try field["orders"].members() {
            guard let intent = try f.string() else { throw f.wrong("an intent id") }
            orders[order] = intent
        }
        lastIntent = try field["lastIntent"].string()
        for (txid, f) in try field["tokens"].members() {
            _ = try f.members()  // a token entry is an object
            guard let intent = try f["intent"].string() else { throw f["intent"].wrong("an intent id") }
            guard let key = try f["idempotencyKey"].string() else {
                throw f["idempotencyKey"].wrong("an idempotency key")
            }
            tokens[txid] = Token(intent: intent, idempotencyKey: key, spent: try f["spent"].bool() ?? false)
        }
        _ = try field.members()  // the section itself is an object
        unknown = field.unknownMembers(besides: ["intents", "orders", "lastIntent", "tokens"])
    }

    var json: JSON {
        var o = unknown
        o["intents"] = .object(
            JSON.Object(
                intents.mapValues { intent -> JSON in
                    var e = intent.unknown
                    e["orderId"] = intent.orderId.map(JSON.string)
                    e["amount"] = intent.amount.map { .number(JSON.Number($0)) }
                    e["currency"] = intent.currency.map(JSON.string)
                    e["status"] = intent.status.map(JSON.string)
                    e["latest_charge_id"] = intent.latestCharge.map(JSON.string)
                    e["confirmTransaction"] = intent.confirmTransaction.map(JSON.string)
                    return .object(e)
                }))
        o["orders"] = .object(JSON.Object(orders.mapValues(JSON.string)))
        o["lastIntent"] = lastIntent.map(JSON.string)
        o["tokens"] = .object(
            JSON.Object(
                tokens.mapValues {
                    [
                        "intent": .string($0.intent), "idempotencyKey": .string($0.idempotencyKey),
                        "spent": .bool($0.spent),
                    ] as JSON
                }))
        return .object(o)
    }
}

extension BahnSection.Intent {
    static let keys = ["orderId", "amount", "currency", "status", "latest_charge_id", "confirmTransaction"]
}
