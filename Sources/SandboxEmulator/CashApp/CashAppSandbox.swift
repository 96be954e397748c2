import Foundation
import LoopbackHTTP
import WireTypes

/// The sandbox customer's side of Cash App, and the emulator's controls (not Cash App's API, so no Client auth):
/// approve or decline a PENDING request as the customer would, the approve page a `mobile_url` opens, and the
/// settings of the auto-approval rule, the trigger lifetime and the grant lifetime.
struct CashAppSandbox: Sendable {
    let store: CashAppStore
    let baseURL: @Sendable () -> String

    static func approvePagePath(_ id: String) -> String { CashAppRules.cashAppPrefix + "/approve/" + id }
    static func decidePath(_ id: String, _ decision: String) -> String {
        CashAppRules.sandboxPrefix + "/requests/\(id)/\(decision)"
    }

    func routes() -> [Route] {
        let prefix = CashAppRules.sandboxPrefix
        return [
            Route("POST", prefix + "/requests/:id/approve") { decide($0) { $0.approveByHand(now: $1, settings: $2) } },
            Route("POST", prefix + "/requests/:id/decline") {
                decide($0) { request, now, _ in request.decline(now: now) }
            },
            // DECISION: a look at a request that is not a poll (it counts no GET, so it never decides the request).
            Route("GET", prefix + "/requests/:id") { http in
                let id = http.params["id"] ?? ""
                let now = Date()
                guard
                    let request = store.withLock({ s -> CustomerRequest? in
                        guard var request = s.requests[id] else { return nil }
                        request.advance(now: now, settings: s.settings)
                        s.save(request)
                        return request
                    })
                else { return CashAppFailure.notFound(id).reply }
                return EmulatorResponse.json(200, ["request": request.json(baseURL: baseURL(), now: now)])
            },
            Route("GET", prefix + "/settings") { _ in EmulatorResponse.json(200, store.withLock { $0.settings }.json) },
            Route("PUT", prefix + "/settings") { updateSettings($0) },
            Route("GET", Self.approvePagePath(":id")) { approvePage($0.params["id"] ?? "") },
        ]
    }

    /// Decides a PENDING request (409 INVALID_STATE_TRANSITION for any other).
    private func decide(
        _ http: EmulatorRequest,
        _ change: (inout CustomerRequest, Date, CashAppRules.Settings) -> Void
    ) -> HTTPReply {
        let id = http.params["id"] ?? ""
        let now = Date()
        do throws(CashAppFailure) {
            let request = try store.transact {
                (s: inout CashAppStore.State) throws(CashAppFailure) -> CustomerRequest in
                guard var request = s.requests[id] else { throw CashAppFailure.notFound(id) }
                request.advance(now: now, settings: s.settings)
                guard request.status == .pending else {
                    s.save(request)
                    throw CashAppFailure(
                        409, "INVALID_STATE_TRANSITION",
                        "Customer request \(id) is \(request.status.rawValue): only a PENDING request can be approved or declined."
                    )
                }
                change(&request, now, s.settings)
                s.save(request)
                return request
            }
            return EmulatorResponse.json(200, ["request": request.json(baseURL: baseURL(), now: now)])
        } catch {
            return error.reply
        }
    }

    /// Any subset of the settings; a key the emulator does not know is refused, so a typo cannot silently do nothing.
    private func updateSettings(_ http: EmulatorRequest) -> HTTPReply {
        func invalid(_ field: String, _ detail: String) -> HTTPReply {
            CashAppFailure(400, "INVALID_PARAMETER", detail, field: field).reply
        }
        guard let body = http.jsonObject else {
            return CashAppFailure(400, "INVALID_REQUEST_BODY", "The body must be a JSON object.").reply
        }
        let integers: [(String, WritableKeyPath<CashAppRules.Settings, Int>)] = [
            ("autoApproveAfterPolls", \.autoApproveAfterPolls), ("triggerLifetimeSeconds", \.triggerLifetimeSeconds),
            ("grantLifetimeSeconds", \.grantLifetimeSeconds),
        ]
        if let unknown = body.keys.sorted().first(where: { key in
            key != "approval" && !integers.contains { $0.0 == key }
        }) {
            return invalid(
                unknown,
                "Unknown setting \(unknown): use approval, autoApproveAfterPolls, triggerLifetimeSeconds, grantLifetimeSeconds."
            )
        }
        var approval: CashAppRules.Approval?
        if let value = body["approval"] {
            guard let text = value.stringValue, let parsed = CashAppRules.Approval(rawValue: text) else {
                return invalid("approval", "approval must be \"auto\" or \"manual\".")
            }
            approval = parsed
        }
        var numbers: [(WritableKeyPath<CashAppRules.Settings, Int>, Int)] = []
        for (name, path) in integers {
            guard let value = body[name] else { continue }
            guard let number = value.intValue, CashAppRules.settingsRange.contains(number) else {
                return invalid(
                    name,
                    "\(name) must be an integer from \(CashAppRules.settingsRange.lowerBound) to \(CashAppRules.settingsRange.upperBound)."
                )
            }
            numbers.append((path, number))
        }
        let settings = store.withLock { s -> CashAppRules.Settings in
            if let approval { s.settings.approval = approval }
            for (path, number) in numbers { s.settings[keyPath: path] = number }
            return s.settings
        }
        return EmulatorResponse.json(200, settings.json)
    }

    /// What the customer sees at `mobile_url`: the request, and Approve / Decline buttons posting to the routes above.
    private func approvePage(_ id: String) -> HTTPReply {
        guard let request = store.withLock({ $0.requests[id] }) else {
            return Self.html(404, "<p>No customer request \(id.markupEscaped).</p>")
        }
        let amount = request.actions.map { "$" + DecimalAmount.text($0.amount) + " " + $0.currency }.joined(
            separator: ", ")
        var body =
            "<h1>Cash App Pay (sandbox)</h1>\n<p>Request <code>\(id.markupEscaped)</code> for \(amount.markupEscaped): <strong>\(request.status.rawValue)</strong></p>\n"
        if request.status == .pending {
            body += """
                <form method="post" action="\(Self.decidePath(id, "approve").markupEscaped)"><button type="submit">Approve</button></form>
                <form method="post" action="\(Self.decidePath(id, "decline").markupEscaped)"><button type="submit">Decline</button></form>

                """
        }
        return Self.html(200, body)
    }

    private static func html(_ status: Int, _ body: String) -> HTTPReply {
        let page = "<!doctype html>\n<meta charset=utf-8>\n<title>Cash App Pay sandbox</title>\n" + body
        return .respond(
            HTTPResponse(status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: Data(page.utf8)))
    }
}
