import Foundation
import Threads
import WireTypes

/// A checkout as Afterpay holds it: a v2 server checkout or a v3 button, and what has happened to it since.
struct AfterpayCheckout {
    enum Kind { case server, button }

    /// The validate-payment (or confirm) that passed: what capture and auth need.
    struct Validation {
        var grantID: String
        var customerID: String
    }

    var token: String
    var kind: Kind
    /// Cents.
    var amount: Int
    var currency: String
    var redirectConfirmURL: String
    var redirectCancelURL: String
    var merchantReference: String?
    var createdAt: Date
    var expiresAt: Date
    var validation: Validation?
    /// v3 only: the token confirm must present, and confirm's first answer (the card), replayed to a repeat.
    var singleUseCardToken: String?
    var confirmation: Data?
}

/// An Afterpay order: made by an immediate capture or by an auth (then captured in parts).
struct AfterpayPayment {
    enum Flow { case capture, auth }

    struct Event {
        var id: String
        var created: Date
        var type: String
        var amount: Int
    }

    var id: String
    var token: String
    var flow: Flow
    var status: String
    var paymentState: String
    var amount: Int
    var openToCapture: Int
    var currency: String
    var merchantReference: String?
    var created: Date
    var events: [Event]
    /// Deferred captures by `requestId`: the Payment body as that capture left it, replayed to a repeat.
    var captureReplies: [String: Data] = [:]

    var json: JSON {
        var object: JSON.Object = [
            "id": .string(id), "token": .string(token), "status": .string(status),
            "paymentState": .string(paymentState),
            "created": .string(CashAppTime.nanoseconds(created)),
            "originalAmount": AfterpayMoney.json(amount, currency),
            "openToCaptureAmount": AfterpayMoney.json(openToCapture, currency),
            "refunds": [],
            "events": .array(
                events.map { event in
                    [
                        "id": .string(event.id), "created": .string(CashAppTime.nanoseconds(event.created)),
                        "type": .string(event.type),
                        "amount": AfterpayMoney.json(event.amount, currency),
                    ]
                }),
        ]
        if let merchantReference { object["merchantReference"] = .string(merchantReference) }
        return .object(object)
    }
}

/// A dictionary that keeps at most `capacity` entries, forgetting the oldest-inserted first, so the emulator stays
/// small however long it runs. Entries are only ever added or changed, never removed but by age.
struct BoundedMap<Value> {
    private var values: [String: Value] = [:]
    private var order: [String] = []
    /// Index of the oldest key still kept: dropping from the front stays O(1), compacted now and then.
    private var head = 0
    let capacity: Int

    init(capacity: Int = CashAppRules.capacity) { self.capacity = capacity }

    subscript(key: String) -> Value? {
        get { values[key] }
        set {
            guard let newValue else { return }
            if values.updateValue(newValue, forKey: key) == nil {
                order.append(key)
                while values.count > capacity, head < order.count {
                    values[order[head]] = nil
                    head += 1
                }
                if head > 1024 && head * 2 > order.count {
                    order.removeFirst(head)
                    head = 0
                }
            }
        }
    }

    var count: Int { values.count }
}

/// Everything the Afterpay and Cash App emulators hold, behind one lock: a validate-payment reads a customer request
/// and marks a checkout in one step, and a capture checks, records and writes the ledger in one step, so no two
/// concurrent calls can both charge.
final class CashAppStore: Sendable {
    struct State {
        var checkouts = BoundedMap<AfterpayCheckout>()
        /// Payments by order id, and the order id of each checkout token that has one.
        var payments = BoundedMap<AfterpayPayment>()
        var paymentByToken = BoundedMap<String>()
        var requests = BoundedMap<CustomerRequest>()
        /// Customer-request idempotency keys: the fingerprint of the first body and the request it made.
        var requestByIdempotencyKey = BoundedMap<(fingerprint: String, requestID: String)>()
        /// Grant id → the customer request holding it.
        var requestByGrant = BoundedMap<String>()
        /// Grant id → the checkout token it first validated: a one-time grant pays one checkout, not two.
        var tokenByGrant = BoundedMap<String>()
        var settings = CashAppRules.Settings()
        var nextOrderID = CashAppRules.firstOrderID
    }

    /// Touched on every request: a pthread lock (see `Locked`), not a Mutex.
    private let state = Locked(State())

    func withLock<R>(_ body: (inout State) -> R) -> R { state.withLock(body) }

    /// Runs `body` under the lock, rethrowing its typed failure outside it.
    func transact<R, F: Error>(_ body: (inout State) throws(F) -> R) throws(F) -> R {
        try state.withLock { (s: inout State) -> Result<R, F> in
            do throws(F) { return .success(try body(&s)) } catch { return .failure(error) }
        }.get()
    }
}
