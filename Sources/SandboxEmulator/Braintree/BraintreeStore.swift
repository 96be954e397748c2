import Foundation
import Threads

/// The emulated gateway's state: the Apple Pay settings the configuration advertises, client-token fingerprints,
/// tokenized nonces, the Apple Pay tokens already tokenized, and the transactions (with an index by orderId). Every
/// collection is bounded (`BraintreeRules.capacity`, the oldest first out), so the emulator stays small however it
/// is driven. Changes that must not interleave (consume a nonce and create its transaction; capture once) run in one
/// `transact` under one lock.
final class BraintreeStore: Sendable {
    /// A nonce from tokenization: the card, and the Apple Pay amount and currency it was made for.
    struct Nonce: Sendable {
        var card: BraintreeRules.Card
        /// Minor units and ISO 4217 numeric code, from the decrypted token.
        var amount: Int
        var currencyCode: String
        var expiresAt: Date
        var used = false
    }

    struct Event: Sendable {
        var status: String
        var at: Date
        var amount: Int
    }

    struct Transaction: Sendable {
        var legacyID: String
        /// Creation order, for "newest first" when two share a millisecond.
        var sequence: Int
        var status: String
        /// Cents: the authorized amount, then the captured one.
        var amount: Int
        var orderID: String?
        var merchantAccountID: String
        var createdAt: Date
        var card: BraintreeRules.Card
        /// Oldest first.
        var history: [Event]
        /// The processor's answer: "1000" "Approved", or the decline's code and text.
        var processorResponseCode: String
        var processorResponseText: String
        var gatewayRejectionReason: String?

        var id: String { BraintreeRules.graphQLID(type: "transaction", legacyID: legacyID) }
    }

    struct State {
        var applePay = BraintreeRules.ApplePaySettings()
        var fingerprints = BoundedMap<Date>(capacity: BraintreeRules.capacity)
        var nonces = BoundedMap<Nonce>(capacity: BraintreeRules.capacity)
        /// Apple Pay `header.transactionId`s already tokenized (a token is single-use).
        var spentTokens = BoundedMap<Bool>(capacity: BraintreeRules.capacity)
        var transactions = BoundedMap<Transaction>(capacity: BraintreeRules.capacity)
        /// orderId → legacy ids, oldest first. Bounded like the rest; the ids of transactions aged out are pruned
        /// whenever the orderId is used again, so no list outgrows the transactions it names.
        var byOrderID = BoundedMap<[String]>(capacity: BraintreeRules.capacity)
        var nextSequence = 1

        /// A transaction by its GraphQL id or its legacy id (Braintree takes either).
        func transaction(_ id: String) -> Transaction? {
            transactions[id]
                ?? BraintreeRules.legacyID(fromGraphQLID: id, type: "transaction").flatMap { transactions[$0] }
        }

        /// The transactions with this orderId, oldest first.
        func transactions(orderID: String) -> [Transaction] {
            (byOrderID[orderID] ?? []).compactMap { transactions[$0] }
        }

        mutating func add(_ transaction: Transaction) {
            transactions[transaction.legacyID] = transaction
            guard let order = transaction.orderID else { return }
            byOrderID[order] = (byOrderID[order] ?? []).filter { transactions[$0] != nil } + [transaction.legacyID]
        }

        mutating func update(_ transaction: Transaction) { transactions[transaction.legacyID] = transaction }

        /// A legacy id no transaction has.
        func newLegacyID() -> String {
            while true {
                let id = BraintreeRules.newLegacyID()
                if transactions[id] == nil { return id }
            }
        }
    }

    /// Touched on every Braintree request: a pthread lock (see `Locked`), not a Mutex.
    private let state = Locked(State())

    func withLock<T>(_ body: (inout State) -> T) -> T { state.withLock(body) }

    /// Runs `change` under the lock; a failure leaves nothing half done as long as `change` throws before it writes.
    func transact<T>(_ change: (inout State) throws(BraintreeFailure) -> T) throws(BraintreeFailure) -> T {
        try state.withLock { (s: inout State) -> Result<T, BraintreeFailure> in
            do throws(BraintreeFailure) { return .success(try change(&s)) } catch { return .failure(error) }
        }.get()
    }

    // MARK: Client tokens

    func issueFingerprint(now: Date = Date()) -> String {
        let fingerprint = BraintreeRules.newFingerprint(createdAt: now)
        state.withLock { $0.fingerprints[fingerprint] = now.addingTimeInterval(BraintreeRules.fingerprintLifetime) }
        return fingerprint
    }

    func fingerprintIsValid(_ fingerprint: String, now: Date = Date()) -> Bool {
        state.withLock { $0.fingerprints[fingerprint].map { now < $0 } ?? false }
    }
}
