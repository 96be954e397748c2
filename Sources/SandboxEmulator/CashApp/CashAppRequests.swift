import Crypto
import Foundation
import LoopbackHTTP
import WireTypes

/// Cash App's Customer Request API as Pay Kit calls it (under `/cashapp`): create, retrieve (the poll), update.
/// Every call needs `Authorization: Client <the Pay Kit client id>`; errors are `{"errors": [...]}`.
struct CashAppRequests: Sendable {
    let store: CashAppStore
    let baseURL: @Sendable () -> String

    static let basePath = CashAppRules.cashAppPrefix + "/customer-request/v1/requests"

    func routes() -> [Route] {
        [
            Route("POST", Self.basePath) { request in authorized(request, create) },
            Route("GET", Self.basePath + "/:id") { request in authorized(request, retrieve) },
            Route("PATCH", Self.basePath + "/:id") { request in authorized(request, update) },
        ]
    }

    private func authorized(
        _ request: EmulatorRequest,
        _ body: (EmulatorRequest) throws(CashAppFailure) -> HTTPReply
    ) -> HTTPReply {
        do throws(CashAppFailure) {
            let header = request.headers["Authorization"]
            guard header == "Client " + TestCredentials.cashAppClientID else {
                throw CashAppFailure(
                    401, category: "AUTHENTICATION_ERROR", "UNAUTHORIZED",
                    header == nil
                        ? "No Authorization header: send Authorization: Client <client id>."
                        : "The client id in the Authorization header is not valid.")
            }
            return try body(request)
        } catch {
            return error.reply
        }
    }

    private func ok(_ status: Int, _ request: CustomerRequest, now: Date) -> HTTPReply {
        EmulatorResponse.json(status, ["request": request.json(baseURL: baseURL(), now: now)])
    }

    // MARK: Create

    /// The body is checked first (a refused body is never stored), then its key: the same key and body give the same
    /// request back (200); the same key with another body is IDEMPOTENCY_KEY_REUSED.
    private func create(_ http: EmulatorRequest) throws(CashAppFailure) -> HTTPReply {
        let body = try Self.object(http)
        guard let key = body.string("idempotency_key"), !key.isEmpty else {
            throw CashAppFailure(
                400, "MISSING_REQUIRED_PARAMETER", "idempotency_key is required (a new UUID per new request).",
                field: "idempotency_key")
        }
        guard let input = body.object("request") else {
            throw CashAppFailure(400, "MISSING_REQUIRED_PARAMETER", "request is required.", field: "request")
        }
        let actions = try Self.actions(input["actions"])
        var channel = "IN_APP"
        if let value = input["channel"] {
            guard let text = value.stringValue, CashAppRules.channels.contains(text) else {
                throw CashAppFailure(
                    400, "INVALID_PARAMETER",
                    "channel must be one of \(CashAppRules.channels.sorted().joined(separator: ", ")).",
                    field: "request.channel")
            }
            channel = text
        }
        guard let redirect = input.string("redirect_url"), !redirect.isEmpty else {
            throw CashAppFailure(
                400, "MISSING_REQUIRED_PARAMETER", "redirect_url is required.", field: "request.redirect_url")
        }
        guard redirect.isAbsoluteURL else {
            throw CashAppFailure(
                400, "INVALID_PARAMETER", "redirect_url must be an absolute URL.", field: "request.redirect_url")
        }
        let referenceID = try Self.referenceID(input)
        let metadata = try Self.metadata(input)
        let fingerprint = Digest.sha256(EmulatorResponse.encode(.object(input))).hexString
        let now = Date()
        return try store.transact { (s: inout CashAppStore.State) throws(CashAppFailure) -> HTTPReply in
            if let used = s.requestByIdempotencyKey[key] {
                guard used.fingerprint == fingerprint else {
                    throw CashAppFailure(
                        400, "IDEMPOTENCY_KEY_REUSED",
                        "idempotency_key \(key) was already used with a different request; use a new key for a new request.",
                        field: "idempotency_key")
                }
                guard var existing = s.requests[used.requestID] else { throw CashAppFailure.notFound(used.requestID) }
                existing.advance(now: now, settings: s.settings)
                s.save(existing)
                return ok(200, existing, now: now)
            }
            let request = CustomerRequest(
                actions: actions, channel: channel, redirectURL: redirect, referenceID: referenceID,
                metadata: metadata, now: now, settings: s.settings)
            s.save(request)
            s.requestByIdempotencyKey[key] = (fingerprint, request.id)
            return ok(201, request, now: now)
        }
    }

    // MARK: Retrieve and update

    /// The poll: each GET counts, and may rotate the triggers or decide the request.
    private func retrieve(_ http: EmulatorRequest) throws(CashAppFailure) -> HTTPReply {
        let id = http.params["id"] ?? ""
        let now = Date()
        return try store.transact { (s: inout CashAppStore.State) throws(CashAppFailure) -> HTTPReply in
            guard var request = s.requests[id] else { throw CashAppFailure.notFound(id) }
            request.poll(now: now, settings: s.settings)
            s.save(request)
            return ok(200, request, now: now)
        }
    }

    /// Changes actions, reference_id or metadata while the request is PENDING (the emulator never reports PROCESSING).
    /// DECISION: an update's idempotency_key is taken and not checked: an update sets fields, so a repeat is harmless.
    private func update(_ http: EmulatorRequest) throws(CashAppFailure) -> HTTPReply {
        let id = http.params["id"] ?? ""
        let now = Date()
        let body = try Self.object(http)
        guard let input = body.object("request") else {
            throw CashAppFailure(400, "MISSING_REQUIRED_PARAMETER", "request is required.", field: "request")
        }
        var actions: [CustomerRequest.Action]?
        if input["actions"] != nil { actions = try Self.actions(input["actions"]) }
        let referenceID = try Self.referenceID(input)
        let metadata = try Self.metadata(input)
        return try store.transact { (s: inout CashAppStore.State) throws(CashAppFailure) -> HTTPReply in
            guard var request = s.requests[id] else { throw CashAppFailure.notFound(id) }
            request.advance(now: now, settings: s.settings)
            guard request.status == .pending else {
                s.save(request)
                throw CashAppFailure(
                    400, "INVALID_STATE_TRANSITION",
                    "Customer request \(id) is \(request.status.rawValue): only a PENDING or PROCESSING request can be updated."
                )
            }
            if let actions { request.actions = actions }
            if let referenceID { request.referenceID = referenceID }
            if let metadata { request.metadata = metadata }
            request.updatedAt = now
            s.save(request)
            return ok(200, request, now: now)
        }
    }

    // MARK: Input

    private static func object(_ http: EmulatorRequest) throws(CashAppFailure) -> JSON.Object {
        guard let body = http.jsonObject else {
            throw CashAppFailure(400, "INVALID_REQUEST_BODY", "The body must be a JSON object.")
        }
        return body
    }

    /// One or more ONE_TIME_PAYMENT actions for one of the merchant's scopes, in whole cents.
    static func actions(_ value: JSON?) throws(CashAppFailure) -> [CustomerRequest.Action] {
        guard let list = value?.arrayValue, !list.isEmpty else {
            throw CashAppFailure(
                400, "MISSING_REQUIRED_PARAMETER", "actions must list at least one action.", field: "request.actions")
        }
        var actions: [CustomerRequest.Action] = []
        for (i, item) in list.enumerated() {
            let field = "request.actions[\(i)]"
            guard let action = item.objectValue else {
                throw CashAppFailure(400, "INVALID_PARAMETER", "Each action must be an object.", field: field)
            }
            guard action.string("type") == "ONE_TIME_PAYMENT" else {
                throw CashAppFailure(
                    400, "INVALID_PARAMETER", "The emulator takes ONE_TIME_PAYMENT actions only.",
                    field: field + ".type")
            }
            guard let scope = action.string("scope_id"), CashAppRules.scopeIDs.contains(scope) else {
                throw CashAppFailure(
                    400, "INVALID_SCOPE_ID",
                    "scope_id must be the merchant's brand or merchant id (externalBrandId or externalMerchantId from sign-payment).",
                    field: field + ".scope_id")
            }
            guard let amount = action.integer("amount"), amount > 0 else {
                throw CashAppFailure(
                    400, "INVALID_AMOUNT", "amount must be a positive integer in cents.", field: field + ".amount")
            }
            guard action.string("currency") == CashAppRules.currency else {
                throw CashAppFailure(
                    400, "INVALID_PARAMETER", "currency must be \(CashAppRules.currency).", field: field + ".currency")
            }
            actions.append(
                .init(type: "ONE_TIME_PAYMENT", scopeID: scope, amount: amount, currency: CashAppRules.currency))
        }
        return actions
    }

    private static func referenceID(_ input: JSON.Object) throws(CashAppFailure) -> String? {
        guard let value = input["reference_id"], !value.isNull else { return nil }
        guard let text = value.stringValue else {
            throw CashAppFailure(
                400, "INVALID_PARAMETER", "reference_id must be a string.", field: "request.reference_id")
        }
        return text
    }

    private static func metadata(_ input: JSON.Object) throws(CashAppFailure) -> JSON.Object? {
        guard let value = input["metadata"], !value.isNull else { return nil }
        guard let object = value.objectValue else {
            throw CashAppFailure(400, "INVALID_PARAMETER", "metadata must be an object.", field: "request.metadata")
        }
        return object
    }
}
