import Foundation

/// Talks to a Centra Storefront API plugin for one step: every call is a named GraphQL document with its variables,
/// sent through the step's context (retries, deadline, trace, HAR). Sessions follow docs/protocols/centra.md: the first
/// call carries the plugin token (`CENTRA_TOKEN`), every response's `extensions.token` is stored in the state file and
/// used next, and an `Unauthorized` answer starts one fresh session and tries once more. `X-Shared-Secret` goes on
/// `expressCheckoutWidgets` only.
struct CentraClient: Sendable {
    let context: OperationContext
    let endpoint: String
    let pluginToken: String
    let state: CentraState

    static let requiredConfiguration = ["CENTRA_API_URL", "CENTRA_TOKEN"]
    static let sharedSecretHeader = "X-Shared-Secret"

    init(_ context: OperationContext) throws(Diagnostic) {
        let config = context.configuration
        try config.require(Self.requiredConfiguration, for: "Centra requests")
        self.context = context
        endpoint = config.value("CENTRA_API_URL")!
        pluginToken = try config.headerValue("CENTRA_TOKEN")!
        state = CentraState(store: context.state)
    }

    /// Sends `document`; answers with the response whatever its errors (the caller reads them). A call that may
    /// take part in a payment (the payment mutations, the read-back of their outcome) never starts a new session:
    /// the payment belongs to the session it began in.
    func call(
        _ document: CentraDocuments.Document, _ variables: JSON.Object = [:],
        newSessionOnUnauthorized: Bool = true
    ) async throws(Diagnostic) -> GraphQLResponse {
        var sharedSecret: String?
        if document.name == CentraDocuments.expressCheckoutWidgets.name {
            try context.configuration.require(["CENTRA_SHARED_SECRET"], for: "expressCheckoutWidgets")
            sharedSecret = try context.configuration.headerValue("CENTRA_SHARED_SECRET")
        }
        let stored = try state.read().session
        if let stored { context.redactor.register(stored) }
        var token = stored ?? pluginToken
        for _ in 0..<2 {
            let response = try await send(document.request(variables), token: token, sharedSecret: sharedSecret)
            // Every response's token is the session's from now on (it rotates).
            if let next = response.extensions["token"]?.stringValue, !next.isEmpty {
                context.redactor.register(next)
                try state.update { $0.session = next }
            }
            guard response.errors.contains(where: { $0.message == "Unauthorized" }) else { return response }
            guard token != pluginToken else {
                throw .configuration(
                    "Centra refused the plugin token (Unauthorized)",
                    hint: "check CENTRA_TOKEN is the Storefront API plugin's Session-mode token")
            }
            // The session an open payment belongs to is never replaced: its order can only be read through it.
            let open = try context.openOutcomes(provider: "centra")
            if let payment = open.first, !context.services.force {
                throw Diagnostic(
                    .outcomeUnknown,
                    "Centra no longer accepts the session of \(payment.effect) left open at \(payment.since) (Unauthorized): its order cannot be read, so the outcome stays open",
                    hint:
                        "look the order up in Centra's admin; once settled, pass --force to start a new session (the state file keeps this one until then)"
                )
            }
            guard newSessionOnUnauthorized else {
                // Refused, so this call did nothing; only a payment sent earlier in the session can be pending.
                let paymentSent = try state.read().paymentStarted
                var ended = Diagnostic.failure(
                    "Centra refused the session token (Unauthorized) during \(document.name): the session has ended, so \(document.name) was not done",
                    hint: paymentSent
                        ? "a payment sent earlier in that session may be pending; check the order in the store before paying again"
                        : "nothing was paid; start the checkout again (`checkout-driver centra express`): the ended session's cart is gone"
                )
                ended.outcomeUncertain = paymentSent
                throw ended
            }
            // The session expired: start a fresh one (its selection is a new, empty cart) and try once more.
            context.note(
                "Centra refused the session token (Unauthorized): starting a new session with the plugin token")
            try state.update {
                $0.session = nil
                $0.addedLine = nil
            }
            token = pluginToken
        }
        throw .failure("Centra answered Unauthorized to a fresh session", hint: "check CENTRA_TOKEN and CENTRA_API_URL")
    }

    private func send(
        _ request: GraphQLRequest, token: String, sharedSecret: String?
    ) async throws(Diagnostic) -> GraphQLResponse {
        let body = request.body
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            var headers: HTTPHeaders = [:]
            headers["Content-Type"] = "application/json"
            headers["Accept"] = "application/json"
            headers["Authorization"] = "Bearer " + token
            if let sharedSecret { headers[Self.sharedSecretHeader] = sharedSecret }
            return HTTPClientRequest(
                method: "POST", url: endpoint, headers: headers, body: body, timeout: context.requestTimeout,
                readOnly: !request.isMutation)
        }
        return try GraphQLResponse(
            response, service: "Centra", mutation: request.isMutation,
            hint: context.garbledHint(
                endpoint: "check CENTRA_API_URL points at a Storefront API plugin (see it with -v)"))
    }

    /// The payload at `field` of `data`, or a failure naming the top-level errors and the payload's userErrors (with
    /// their paths). The selection is still in the answer when a userError comes back.
    static func payload(
        _ response: GraphQLResponse, _ field: String, what: String, movesMoney: Bool = false
    ) throws(Diagnostic) -> JSON {
        // A field error in an executed payment mutation comes after its resolver ran: the payment may have been made.
        if movesMoney && response.settlesNothing {
            throw .uncertain(
                "\(what) got no answer that settles it (HTTP \(response.status))",
                hint: "the payment may have been made; read the order back before paying again")
        }
        if movesMoney && response.executed && !response.errors.isEmpty {
            throw .uncertain(
                "\(what) answered with errors: \(response.errors.map(\.text).joined(separator: "; "))",
                hint: "the payment may have been made; read the order back before paying again")
        }
        if !response.errors.isEmpty {
            throw .failure(
                "\(what) failed: Centra answered with errors: \(response.errors.map(\.text).joined(separator: "; "))",
                hint:
                    "a top-level error means the operation itself did not run; check the store's plugin and CENTRA_API_URL"
            )
        }
        guard let payload = response.data[field], payload != .null else {
            throw .failure(
                "\(what) failed: Centra's answer has no \(field)",
                hint: "check CENTRA_API_URL points at a Storefront API plugin")
        }
        let userErrors = GraphQLResponse.userErrors(in: payload)
        if !userErrors.isEmpty {
            throw .failure(
                "\(what) failed: \(userErrors.map(\.text).joined(separator: "; "))",
                hint: "the store refused it (a userError); the selection is unchanged")
        }
        return payload
    }
}
