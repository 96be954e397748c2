import Foundation
import WireTypes

/// A Cash App customer request and its state machine: PENDING until the customer (the auto rule, the approve page
/// or a sandbox route) decides it APPROVED or DECLINED; its auth-flow triggers rotate while it waits; its grants
/// expire. Time only moves it forward when it is read, so nothing runs in the background.
struct CustomerRequest {
    enum Status: String {
        case pending = "PENDING"
        case approved = "APPROVED"
        case declined = "DECLINED"
    }

    struct Action {
        var type: String
        var scopeID: String
        /// Cents.
        var amount: Int
        var currency: String

        var json: JSON {
            [
                "type": .string(type), "scope_id": .string(scopeID), "amount": JSON(amount),
                "currency": .string(currency),
            ]
        }
    }

    struct Grant {
        var id: String
        var customerID: String
        var action: Action
        var channel: String
        var createdAt: Date
        var expiresAt: Date

        func status(at now: Date) -> String { now < expiresAt ? "ACTIVE" : "EXPIRED" }

        func json(now: Date) -> JSON {
            [
                "id": .string(id), "customer_id": .string(customerID), "action": action.json,
                "status": .string(status(at: now)),
                "type": "ONE_TIME", "channel": .string(channel),
                "created_at": .string(CashAppTime.milliseconds(createdAt)),
                "updated_at": .string(CashAppTime.milliseconds(createdAt)),
                "expires_at": .string(CashAppTime.milliseconds(expiresAt)),
            ]
        }
    }

    var id: String
    var status = Status.pending
    var actions: [Action]
    var channel: String
    var redirectURL: String
    var referenceID: String?
    var metadata: JSON.Object?
    var createdAt: Date
    var updatedAt: Date
    var expiresAt: Date
    /// GETs so far (the poll count the auto rule decides on).
    var polls = 0
    /// The `v` in the trigger URLs: a rotation makes new ones.
    var triggerVersion = 1
    var refreshesAt: Date
    var grants: [Grant] = []
    var customerID: String?

    init(
        actions: [Action], channel: String, redirectURL: String, referenceID: String?, metadata: JSON.Object?,
        now: Date, settings: CashAppRules.Settings
    ) {
        id = CashAppRules.newCashAppID("GRR_")
        self.actions = actions
        self.channel = channel
        self.redirectURL = redirectURL
        self.referenceID = referenceID
        self.metadata = metadata
        createdAt = now
        updatedAt = now
        expiresAt = now.addingTimeInterval(CashAppRules.requestLifetime)
        refreshesAt = now.addingTimeInterval(TimeInterval(settings.triggerLifetimeSeconds))
    }

    /// The scenario amount: the first action's.
    var amount: Int { actions.first?.amount ?? 0 }

    /// Time passing while PENDING: the triggers rotate once `refreshes_at` is reached, and the request is DECLINED once
    /// it expires. Decided requests keep their last triggers.
    mutating func advance(now: Date, settings: CashAppRules.Settings) {
        guard status == .pending else { return }
        if now >= expiresAt {
            decline(now: now)
        } else if now >= refreshesAt {
            triggerVersion += 1
            refreshesAt = now.addingTimeInterval(TimeInterval(settings.triggerLifetimeSeconds))
            updatedAt = now
        }
    }

    /// One GET by Pay Kit: counted; with approval "auto" the request decides on the `autoApproveAfterPolls`-th.
    mutating func poll(now: Date, settings: CashAppRules.Settings) {
        advance(now: now, settings: settings)
        polls += 1
        guard status == .pending, settings.approval == .auto, polls >= settings.autoApproveAfterPolls else { return }
        switch CashAppRules.customerChoice(forAmount: amount) {
        case .approve: approve(withGrants: true, now: now, settings: settings)
        case .approveWithoutGrants: approve(withGrants: false, now: now, settings: settings)
        case .decline: decline(now: now)
        case .never: break
        }
    }

    /// The customer pressed Approve: the scenario amounts still decide what that means, except that a customer who
    /// "never decides" (15.15) has now decided.
    mutating func approveByHand(now: Date, settings: CashAppRules.Settings) {
        switch CashAppRules.customerChoice(forAmount: amount) {
        case .decline: decline(now: now)
        case .approveWithoutGrants: approve(withGrants: false, now: now, settings: settings)
        case .approve, .never: approve(withGrants: true, now: now, settings: settings)
        }
    }

    /// APPROVED by a new customer, with one ONE_TIME grant per action (none for the grantless scenario).
    mutating func approve(withGrants: Bool, now: Date, settings: CashAppRules.Settings) {
        let customer = CashAppRules.newCashAppID("CST_")
        status = .approved
        customerID = customer
        updatedAt = now
        guard withGrants else { return }
        let expires = now.addingTimeInterval(TimeInterval(settings.grantLifetimeSeconds))
        grants = actions.map {
            Grant(
                id: CashAppRules.newCashAppID("GRG_"), customerID: customer, action: $0, channel: channel,
                createdAt: now, expiresAt: expires)
        }
    }

    mutating func decline(now: Date) {
        status = .declined
        updatedAt = now
    }

    func json(baseURL: String, now: Date) -> JSON {
        let page = baseURL + CashAppSandbox.approvePagePath(id)
        let v = "v=\(triggerVersion)"
        var object: JSON.Object = [
            "id": .string(id), "status": .string(status.rawValue), "actions": .array(actions.map(\.json)),
            "channel": .string(channel),
            "redirect_url": .string(redirectURL), "created_at": .string(CashAppTime.milliseconds(createdAt)),
            "updated_at": .string(CashAppTime.milliseconds(updatedAt)),
            "expires_at": .string(CashAppTime.milliseconds(expiresAt)),
            "grants": .array(grants.map { $0.json(now: now) }),
            // DECISION: the desktop link is the same approve page; the QR image URLs are named but not served (the
            // emulator draws no QR codes: the page at mobile_url is how a sandbox customer answers).
            "auth_flow_triggers": [
                "mobile_url": .string("\(page)?\(v)"), "desktop_url": .string("\(page)?\(v)&desktop=1"),
                "qr_code_image_url": .string("\(page)/qr.png?\(v)"), "qr_code_svg_url": .string("\(page)/qr.svg?\(v)"),
                "refreshes_at": .string(CashAppTime.milliseconds(refreshesAt)),
            ],
        ]
        if let customerID {
            object["customer_profile"] = ["id": .string(customerID), "cashtag": .string(CashAppRules.cashtag)]
        }
        if let referenceID { object["reference_id"] = .string(referenceID) }
        if let metadata { object["metadata"] = .object(metadata) }
        return .object(object)
    }
}

extension CashAppStore.State {
    /// Stores a request and indexes its grants (validate-payment finds a request by its grant).
    mutating func save(_ request: CustomerRequest) {
        requests[request.id] = request
        for grant in request.grants where requestByGrant[grant.id] == nil { requestByGrant[grant.id] = request.id }
    }
}
