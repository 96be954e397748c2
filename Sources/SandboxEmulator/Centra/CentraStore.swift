import Foundation
import GraphQL
import Threads

/// The emulated store's state: shopper sessions (each with its selection, addresses, shipping method, a payment
/// waiting for 3DS, its orders), the tokens that name them, and the Apple Pay transactions already used. Bounded: the
/// longest idle sessions go first once there are `CentraRules.sessionCapacity`.
final class CentraStore: Sendable {
    struct Line: Sendable {
        var id: String
        var item: String
        var quantity: Int
    }

    /// An authorised payment waiting for its 3DS step (`paymentResult` completes it).
    struct PendingPayment: Sendable {
        var reference: String
        var scenario: CentraRules.PaymentScenario
        var amount: Int
        /// The value the 3DS step hands back (`redirectResult`, or `threeDSResult` for the native challenge).
        var result: String
        /// Adyen's `paymentData` for the native challenge.
        var paymentData: String
        var returnPage: String
        var failedPage: String
        var sessionID: String
        /// A `paymentResult` is placing the order now.
        var claimed = false
        /// The order it placed: a repeated `paymentResult` answers with it.
        var order: Order?
    }

    struct Order: Sendable {
        var id: String
        var number: Int
        var lines: [Line]
        var itemsTotal: Int
        var shipping: Int
        var shippingMethod: Int
        var shippingAddress: [(String, GraphQLValue)]
        var billingAddress: [(String, GraphQLValue)]?
        var createdAt: Date
    }

    struct Session: Sendable {
        var id: String
        var tokens: [String]
        var lastUsed: Date
        var selectionID: String
        var lines: [Line]
        var shippingMethod = 1
        var shippingAddress: [(String, GraphQLValue)] = [("country", .string(CentraRules.country.code))]
        var billingAddress: [(String, GraphQLValue)]?
        var ingridHandled = false
        var orders: [Order] = []

        var shippingCountry: String? { shippingAddress.first { $0.0 == "country" }?.1.stringValue }
    }

    private struct State {
        var sessions: [String: Session] = [:]
        var tokens: [String: String] = [:]
        var pending: [String: PendingPayment] = [:]
        var spentTransactions: Set<String> = []
        var nextOrderNumber = 1000
        var ingrid = false
    }

    /// Touched on every Centra request: a pthread lock (see `Locked`), not a Mutex.
    private let state = Locked(State())

    // MARK: Sessions

    enum Authorization {
        case session(String)
        case unauthorized
    }

    /// The session a bearer token names: the plugin token starts a new one; an unknown or expired token is refused.
    func authorize(_ bearer: String?, now: Date = Date()) -> Authorization {
        guard let bearer, !bearer.isEmpty else { return .unauthorized }
        return state.withLock { s in
            if bearer == CentraRules.pluginToken {
                let id = CentraRules.newID("sess_")
                let line = Line(id: CentraRules.newID("line_"), item: CentraRules.startingItem, quantity: 1)
                s.sessions[id] = Session(
                    id: id, tokens: [], lastUsed: now, selectionID: CentraRules.newID("sel_"), lines: [line])
                Self.trim(&s, now: now)
                return .session(id)
            }
            guard let id = s.tokens[bearer], var session = s.sessions[id],
                now.timeIntervalSince(session.lastUsed) <= CentraRules.sessionIdleLifetime
            else { return .unauthorized }
            session.lastUsed = now
            s.sessions[id] = session
            return .session(id)
        }
    }

    /// A new token for the session, handed out in the response; the one before it stays good, older ones end.
    func rotateToken(_ sessionID: String) -> String? {
        state.withLock { s in
            guard var session = s.sessions[sessionID] else { return nil }
            let token = CentraRules.newToken()
            session.tokens.append(token)
            while session.tokens.count > 2 { s.tokens[session.tokens.removeFirst()] = nil }
            s.tokens[token] = sessionID
            s.sessions[sessionID] = session
            return token
        }
    }

    /// Ends every session now (what an expired token looks like, for tests of the re-session path).
    func expireSessions() {
        state.withLock { s in
            s.sessions.removeAll()
            s.tokens.removeAll()
        }
    }

    /// Drops expired sessions, then the longest idle ones down to the capacity; in batches (a tenth over the
    /// capacity), so that a stream of new sessions does not sort the store on every request.
    private static func trim(_ s: inout State, now: Date) {
        guard s.sessions.count > CentraRules.sessionCapacity + CentraRules.sessionCapacity / 10 else { return }
        let expired = s.sessions.filter { now.timeIntervalSince($0.value.lastUsed) > CentraRules.sessionIdleLifetime }
            .map(\.key)
        var drop = Set(expired)
        if s.sessions.count - drop.count > CentraRules.sessionCapacity {
            let oldest = s.sessions.values.sorted { $0.lastUsed < $1.lastUsed }.prefix(
                s.sessions.count - CentraRules.sessionCapacity)
            drop.formUnion(oldest.map(\.id))
        }
        for id in drop {
            for t in s.sessions[id]?.tokens ?? [] { s.tokens[t] = nil }
            s.sessions[id] = nil
        }
    }

    func session(_ id: String) -> Session? { state.withLock { $0.sessions[id] } }

    /// Changes a session under the lock; the change may fail with a message (a userError).
    func update<T>(_ id: String, _ change: (inout Session) throws(CentraFailure) -> T) throws(CentraFailure) -> T {
        try state.withLock { (s: inout State) -> Result<T, CentraFailure> in
            guard var session = s.sessions[id] else { return .failure(.unauthorized) }
            do throws(CentraFailure) {
                let result = try change(&session)
                s.sessions[id] = session
                return .success(result)
            } catch { return .failure(error) }
        }.get()
    }

    // MARK: Store flags

    var ingrid: Bool {
        state.withLock { $0.ingrid }
    }

    func setIngrid(_ on: Bool) { state.withLock { $0.ingrid = on } }

    // MARK: Payments

    /// Marks an Apple Pay transaction used; false when it was used before (a token is single-use).
    func spend(transaction: String) -> Bool {
        state.withLock { s in
            guard !s.spentTransactions.contains(transaction) else { return false }
            if s.spentTransactions.count >= 100_000 { s.spentTransactions.removeAll() }
            s.spentTransactions.insert(transaction)
            return true
        }
    }

    func addPending(_ payment: PendingPayment) {
        state.withLock { s in
            if s.pending.count >= 10_000 { s.pending.removeAll() }
            s.pending[payment.reference] = payment
        }
    }

    func pending(_ reference: String) -> PendingPayment? { state.withLock { $0.pending[reference] } }

    func pendingPayment(matching test: (PendingPayment) -> Bool) -> PendingPayment? {
        state.withLock { s in s.pending.values.first(where: test) }
    }

    private enum Claim {
        case mine
        case done(Order)
        case busy, gone
    }

    /// Completes a waiting payment once: the first caller places the order (outside the lock); a later one gets
    /// that order back; one arriving while it is being placed is told to try again.
    func completePending(_ reference: String, place: () throws(CentraFailure) -> Order) throws(CentraFailure) -> Order {
        let claim: Claim = state.withLock { s in
            guard var p = s.pending[reference] else { return .gone }
            if let order = p.order { return .done(order) }
            if p.claimed { return .busy }
            p.claimed = true
            s.pending[reference] = p
            return .mine
        }
        switch claim {
        case .done(let order): return order
        case .busy:
            throw .userError(
                "This payment is being completed by another request; ask for the order", path: ["paymentMethodFields"])
        case .gone: throw .userError("No payment is waiting for that 3DS result", path: ["paymentMethodFields"])
        case .mine: break
        }
        do {
            let order = try place()
            state.withLock { $0.pending[reference]?.order = order }
            return order
        } catch {
            state.withLock { $0.pending[reference]?.claimed = false }
            throw error
        }
    }

    /// Places the session's selection as an order, if it still totals what was authorised (checked under the same
    /// lock, so two final calls cannot both place one cart, nor a cart changed during 3DS be placed for the old
    /// amount): the selection empties, the order is kept for `query order`.
    func placeOrder(_ sessionID: String, expectedTotal: Int, now: Date = Date()) throws(CentraFailure) -> Order {
        try state.withLock { (s: inout State) -> Result<Order, CentraFailure> in
            guard var session = s.sessions[sessionID] else { return .failure(.unauthorized) }
            let totals = CentraTotals(session)
            guard !session.lines.isEmpty, totals.grandTotal == expectedTotal else {
                return .failure(
                    .userError(
                        "The selection changed since the payment was authorised (it totals \(totals.grandTotal), the payment \(expectedTotal))",
                        path: ["selection"]))
            }
            s.nextOrderNumber += 1
            let order = Order(
                id: CentraRules.newID("ord_"), number: s.nextOrderNumber, lines: session.lines,
                itemsTotal: totals.items, shipping: totals.shipping ?? 0, shippingMethod: session.shippingMethod,
                shippingAddress: session.shippingAddress, billingAddress: session.billingAddress, createdAt: now)
            session.orders.append(order)
            if session.orders.count > CentraRules.orderCapacityPerSession { session.orders.removeFirst() }
            session.lines = []
            session.selectionID = CentraRules.newID("sel_")
            session.ingridHandled = false
            s.sessions[sessionID] = session
            return .success(order)
        }.get()
    }
}

/// A selection's sums in minor units: items, the chosen shipping method's price for the shipping country (nil when
/// that method does not ship there), and the grand total.
struct CentraTotals {
    var items: Int
    var shipping: Int?
    var grandTotal: Int { items + (shipping ?? 0) }

    init(_ session: CentraStore.Session) {
        items = session.lines.reduce(0) { $0 + (CentraRules.product($1.item)?.price ?? 0) * $1.quantity }
        let method = CentraRules.shippingMethods.first { $0.id == session.shippingMethod }
        shipping = session.lines.isEmpty ? 0 : method?.price(for: session.shippingCountry)
    }
}

/// Why a Centra call did not do what it was asked: a business failure is a `userError` beside the last valid
/// selection; `unauthorized` is the top-level `Unauthorized` error that makes a client start a new session.
enum CentraFailure: Error {
    case userError(String, path: [String])
    case unauthorized
}
