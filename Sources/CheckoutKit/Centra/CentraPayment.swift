import Foundation
import Spawn

/// The final `paymentInstructions` and what follows it: the action Centra returns is handled as the integration guide
/// says (docs/protocols/centra.md, "Bodies that matter") — a success is the order; a redirect or a form is opened in a
/// browser and its return, caught by a loopback listener serving `paymentReturnPage` and `paymentFailedPage`, goes to
/// `paymentResult` unchanged; a native 3DS2 challenge is completed with its details. Both calls can place an order and
/// move money, and Centra has no idempotency keys: a lost answer is read back from the session's latest order, never
/// re-sent.
enum CentraPayment {
    static func instruct(
        _ args: CentraOperations.PaymentInstructions, _ context: OperationContext
    ) async throws(Diagnostic) -> StepOutput {
        let client = try CentraClient(context)
        let shipping = try CentraAddress.address(.object(args.shippingAddress), source: "argument 'shippingAddress'")
        var billing: JSON.Object?
        if let given = args.billingAddress {
            billing = try CentraAddress.address(.object(given), source: "argument 'billingAddress'")
        }
        let fields: JSON
        var token: PaymentTokenFile?
        if let path = args.tokenFile {
            // Checked first, as `bahn confirm` does: a bad file exits 65, and a token this state file saw pay is
            // refused; nothing is sent.
            let file = try PaymentTokenFile.read(
                path: path, redactor: context.redactor, files: context.services.madeFiles)
            try context.refuseIfSpent(file.transactionId, kind: "Apple Pay token", fix: CentraPayment.freshTokenHint)
            token = file
            fields = CentraProtocol.applePayFields(file)
        } else if let given = args.paymentFields.map(JSON.object) {
            // The wallet data inside is as secret as a token file's: masked in every output.
            func register(_ value: JSON) {
                switch value {
                case .string(let s) where s.count >= 12: context.redactor.register(s)
                case .array(let a): a.forEach(register)
                case .object(let o): o.values.forEach(register)
                default: break
                }
            }
            register(given)
            fields = given
        } else {
            throw .usage(
                "the final payment needs the wallet's payment data",
                hint: "pass --token-file FILE (PKPaymentToken.paymentData) or --payment-fields FILE")
        }
        if args.open { _ = try browserCommand(kind: context.configuration.kind) }
        let listener = try ReturnListener(context)
        defer { listener.stop() }
        var input: JSON.Object = [
            "shippingAddress": .object(shipping), "termsAndConditions": true, "express": true,
            "paymentReturnPage": .string(listener.returnURL), "paymentFailedPage": .string(listener.failedURL),
            "paymentMethodSpecificFields": fields,
        ]
        if let billing { input["separateBillingAddress"] = .object(billing) }
        // The order before this payment, so that a read-back can tell this payment's order from an earlier one, and the
        // total the payment is for.
        let (prior, total) = try await beforePayment(client)
        var readBack = orderReadBack("paymentInstructions", prior: prior, total: total, client: client)
        readBack.spends = token.map { [SpentCredentials.key("Apple Pay token", $0.transactionId)] } ?? []
        let payload = try await settled(client) { () async throws(Diagnostic) -> StepOutput in
            try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                // Once past the guard, until its outcome is known, the cart stays as it is (a PDP rollback waits); the
                // order before it tells a later `centra order` whether it placed one.
                try client.state.update {
                    $0.paymentStarted = true
                    $0.lastOrder = prior
                }
                let response = try await client.call(
                    CentraDocuments.paymentInstructions, ["input": .object(input)], newSessionOnUnauthorized: false)
                let payload = try CentraClient.payload(
                    response, "paymentInstructions", what: "paymentInstructions", movesMoney: true)
                return StepOutput(document: payload, status: response.status)
            }
        }
        // Centra took the payment data: the token has paid (or is paying) for this order.
        if let token {
            try context.markSpent(token.transactionId, kind: "Apple Pay token", by: "Centra paymentInstructions")
        }
        // A read-back that found the order answers with it.
        if payload.document["order"] != nil && payload.document["action"] == nil { return payload }
        return try await handle(
            payload.document["action"] ?? .null, args: args, listener: listener, prior: prior, client: client)
    }

    private static func handle(
        _ action: JSON, args: CentraOperations.PaymentInstructions, listener: ReturnListener, prior: String?,
        client: CentraClient
    ) async throws(Diagnostic) -> StepOutput {
        let context = client.context
        switch action["__typename"]?.stringValue {
        case "SuccessPaymentAction"?:
            return try placed(action["order"] ?? .null, client: client, via: "SUCCESS")
        case "RedirectPaymentAction"?, "FormPaymentAction"?:
            listener.start()
            let url: String
            if let redirect = action["url"]?.stringValue {
                url = redirect
            } else {
                url = listener.serveForm(action["html"]?.stringValue ?? "")
            }
            if args.open {
                context.note("3DS: open \(url) to complete the payment; waiting for the return to \(listener.baseURL)")
                try open(url, context)
            } else if context.configuration.kind == .local {
                // The emulator's challenge passes at once: answer it as the shopper's browser would, so that a flow
                // runs unattended (--open shows it in a real browser instead).
                context.note("3DS: answering the emulator's challenge at \(url) (pass --open to use a browser)")
                try await answerChallenge(action, url: url, listener: listener, context: context)
            } else {
                context.note("3DS: open \(url) to complete the payment; waiting for the return to \(listener.baseURL)")
            }
            let budget = context.deadline.remaining.map { max(0, $0 - 1) } ?? CentraProtocol.redirectWait
            guard let returned = await listener.waitForReturn(seconds: budget) else {
                let waited =
                    context.deadline.seconds.map { "before the flow's deadline of \(FlowRunner.format($0))s" }
                    ?? "within \(FlowRunner.format(budget))s"
                throw .unavailable(
                    "no 3DS return came back \(waited)",
                    hint:
                        "open the URL above in a browser (or pass --open)\(context.deadline.seconds == nil ? "" : ", or raise --deadline")"
                )
            }
            if returned.failed {
                context.note("the shopper came back to paymentFailedPage; Centra decides with paymentResult")
            }
            return try await result(.object(returned.parameters), client: client, prior: .known(prior))
        case "JavascriptPaymentAction"?:
            // formFields is the Adyen action itself (docs/protocols/centra.md); some plugins wrap it as {"action": …}.
            let fields = action["formFields"] ?? .null
            let adyen = fields["action"]?.objectValue != nil ? fields["action"]! : fields
            guard adyen["type"] != nil else {
                throw .failure(
                    "the JavascriptPaymentAction's formFields is not an Adyen action (no type)",
                    hint: "see the action with --format json")
            }
            context.note(
                "3DS: native challenge (Adyen action \(adyen["type"]?.stringValue ?? "?") \(adyen["subtype"]?.stringValue ?? ""))"
            )
            let details = try await challengeDetails(adyen, args: args, context: context)
            // paymentData goes back when the action carried it (newer Adyen actions may not).
            var resultFields: JSON.Object = ["details": details]
            if let paymentData = adyen["paymentData"]?.stringValue {
                resultFields["paymentData"] = .string(paymentData)
            }
            return try await result(.object(resultFields), client: client, prior: .known(prior))
        case let other?:
            throw .failure(
                "Centra answered with a \(other) this driver does not handle", hint: "see the action with --format json"
            )
        case nil:
            throw .failure(
                "paymentInstructions answered with no action",
                hint: "the final call needs paymentInitiateOnly false; see the answer with --format json")
        }
    }

    /// The native challenge's result: from `--3ds-details FILE`, or — against the emulator — from its challenge
    /// endpoint (the `acsURL` inside the action's token), as a shopper passing the challenge would.
    private static func challengeDetails(
        _ adyen: JSON, args: CentraOperations.PaymentInstructions,
        context: OperationContext
    ) async throws(Diagnostic) -> JSON {
        if let path = args.threeDSDetails {
            let object = try FileIO.readJSONObject(
                path, what: "3DS details file", example: "the 3DS2 result as JSON, e.g. {\"threeDSResult\": \"…\"}")
            return object["details"] ?? .object(object)
        }
        guard context.configuration.kind == .local,
            let token = adyen["token"]?.stringValue.flatMap({ Data(base64Encoded: $0) }).flatMap({ try? JSON.parse($0) }
            ),
            let acs = token["acsURL"]?.stringValue
        else {
            throw .usage(
                "a native 3DS2 challenge needs its result",
                hint: "complete the challenge in the app and pass its result with --3ds-details FILE")
        }
        let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(
                method: "POST", url: acs, headers: ["Accept": "application/json"], timeout: context.requestTimeout)
        }
        guard response.status == 200, let details = response.json, details["threeDSResult"] != nil else {
            throw .unavailable(
                "the emulator's 3DS challenge answered \(response.status)",
                hint: "check that the emulator is the one that issued the challenge")
        }
        return details
    }

    static let freshTokenHint =
        "make a fresh one for the selection's total: `checkout-driver applepay token --amount <minor units> --currency <code> --out token.json`"

    /// The reference a Centra payment is kept open under: its session (the only thing Centra's API reads an order by),
    /// the chain's or a run's.
    static func openReference(_ context: OperationContext) -> String {
        context.state?.run.map { "session of run \($0)" } ?? "session"
    }

    /// What is known of the session's latest order before a payment call.
    enum PriorOrder {
        case known(String?)
        case unknown
    }

    /// `paymentResult` with the fields the 3DS step returned, unchanged.
    static func result(
        _ fields: JSON, client: CentraClient, prior: PriorOrder = .unknown
    ) async throws(Diagnostic) -> StepOutput {
        let known: String?
        var total: CentraMoney.Summary?
        switch prior {
        case .known(let id): known = id
        case .unknown: (known, total) = try await beforePayment(client)
        }
        let readBack = orderReadBack("paymentResult", prior: known, total: total, client: client)
        return try await settled(client) { () async throws(Diagnostic) -> StepOutput in
            try await client.context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.call(
                    CentraDocuments.paymentResult, ["fields": fields], newSessionOnUnauthorized: false)
                let payload = try CentraClient.payload(
                    response, "paymentResult", what: "paymentResult", movesMoney: true)
                guard payload["type"]?.stringValue == "SUCCESS", let order = payload["order"], order != .null else {
                    throw .failure(
                        "the payment failed: paymentResult answered \(payload["type"]?.stringValue ?? "without a type")",
                        hint: "the shopper may try again with another payment; the selection is unchanged")
                }
                return try placed(order, client: client, via: "paymentResult")
            }
        }
    }

    /// Runs a payment call; a known failure (a refusal, not a lost or interrupted answer) ends the payment, so the
    /// cart may change again.
    private static func settled(
        _ client: CentraClient, _ call: () async throws(Diagnostic) -> StepOutput
    ) async throws(Diagnostic) -> StepOutput {
        do { return try await call() } catch {
            if !error.outcomeUncertain && error.code != .outcomeUnknown && error.code != .interrupted {
                try? client.state.update { $0.paymentStarted = false }
            }
            throw error
        }
    }

    private static func placed(_ order: JSON, client: CentraClient, via: String) throws(Diagnostic) -> StepOutput {
        try client.state.update {
            $0.lastOrder = order["id"]?.stringValue
            $0.addedLine = nil
            $0.paymentStarted = false
        }
        return StepOutput(
            document: ["order": order, "summary": CentraOperations.orderSummary(order), "via": .string(via)],
            status: 200)
    }

    /// The session's latest order id (nil: none yet) and the selection's total, in one read. A failed read throws: "no
    /// order" must never be a guess, or a read-back could take an older order for this payment's.
    static func beforePayment(
        _ client: CentraClient
    ) async throws(Diagnostic) -> (order: String?, total: CentraMoney.Summary?) {
        let response = try await client.call(CentraDocuments.beforePayment, newSessionOnUnauthorized: false)
        guard response.errors.isEmpty, response.executed else {
            throw .unavailable(
                "reading the session's latest order failed: \(response.errors.map(\.text).joined(separator: "; "))",
                hint: "check CENTRA_API_URL and try again; nothing was paid")
        }
        return (
            response.data["order"]?["id"]?.stringValue,
            response.data["selection"].flatMap { try? CentraMoney.summary($0) }
        )
    }

    /// A lost answer is read back from the session's latest order: a new one means the payment went through.
    /// The id of the session's latest order when it is a new one: Centra reads only "the latest order", so an order
    /// that was already the latest before the payment (`prior`) is not this payment's.
    static func newOrder(_ order: JSON, prior: String?) -> String? {
        guard order != .null, let id = order["id"]?.stringValue, id != prior else { return nil }
        return id
    }

    private static func orderReadBack(
        _ action: String, prior: String?, total: CentraMoney.Summary?, client: CentraClient
    ) -> ReadBack {
        // Adyen authorises the Apple Pay payment and Centra places the order: one movement, the order's.
        let asked = MoneyMovement(
            provider: "centra", kind: .authorization, outcome: .unknown, amount: total?.grandTotal,
            currency: total?.currency, reference: openReference(client.context))
        return ReadBack(
            provider: "centra", action: action, effect: "the payment", resource: "the session's latest order",
            reference: openReference(client.context), asked: asked,
            shown: { output in
                // The order placed (as the answer's success action or a read-back shows it); a 3DS step still to come
                // shows none.
                let action = output.document["action"]
                let summary =
                    action?["__typename"]?.stringValue == "SuccessPaymentAction"
                    ? action?["order"].map(CentraOperations.orderSummary) : output.document["summary"]
                guard let summary, let id = summary["id"]?.stringValue else { return nil }
                return MoneyMovement(
                    provider: "centra", kind: .authorization, amount: summary["grandTotal"]?.intValue ?? asked.amount,
                    currency: summary["currency"]?.stringValue ?? asked.currency, reference: "order \(id)",
                    status: "order placed"
                        + (summary["status"]?.stringValue.map { " (\(MoneyMovement.words($0)))" } ?? ""))
            },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let response = try await client.call(CentraDocuments.orderQuery, newSessionOnUnauthorized: false)
                guard response.errors.isEmpty else {
                    throw .unavailable(
                        "the order read answered with errors: \(response.errors.map(\.text).joined(separator: "; "))",
                        hint: "try `centra order` later")
                }
                guard let order = response.data["order"], let id = newOrder(order, prior: prior) else {
                    return .notSeen(shows: "no new order so far; a request still in flight may yet place it")
                }
                return .tookEffect(
                    try placed(order, client: client, via: "read-back"),
                    shows: "order \(id) was placed: the payment went through")
            },
            settle: { _ in
                let command =
                    "`"
                    + ShellWords.join(["checkout-driver", "centra", "order"] + client.context.services.settleOptions)
                    + "`"
                return [
                    "read the session's latest order: \(command) (Centra has no idempotency keys: do not send the payment again until it shows no new order)"
                ]
            })
    }

    /// Plays the shopper's browser on the emulator's challenge: follows a redirect to the return page, or posts a
    /// form's fields to it, as the page's script would. Every request goes through the step's context (trace, HAR).
    private static func answerChallenge(
        _ action: JSON, url: String, listener: ReturnListener, context: OperationContext
    ) async throws(Diagnostic) {
        let timeout = context.requestTimeout
        if action["__typename"]?.stringValue == "FormPaymentAction" {
            let fields = (action["formFields"]?.objectValue ?? [:]).sorted { $0.key < $1.key }
            let body = fields.map { FormEncoding.pair($0.key, $0.value.interpolationText) }.joined(separator: "&")
            _ = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
                HTTPClientRequest(
                    method: "POST", url: listener.returnURL,
                    headers: ["Content-Type": "application/x-www-form-urlencoded"],
                    body: Data(body.utf8), timeout: timeout)
            }
            return
        }
        let page = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(method: "GET", url: url, headers: ["Accept": "text/html"], timeout: timeout)
        }
        guard (300..<400).contains(page.status), let location = page.headers["Location"] else {
            throw .unavailable(
                "the emulator's 3DS page answered \(page.status) without a redirect",
                hint: "pass --open to complete it in a browser")
        }
        _ = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
            HTTPClientRequest(method: "GET", url: location, headers: ["Accept": "text/html"], timeout: timeout)
        }
    }

    /// The browser `--open` starts: `$BROWSER`, else `xdg-open`, found on PATH — checked before the payment is sent.
    static func browserCommand(kind: Configuration.Kind) throws(Diagnostic) -> (name: String, path: String) {
        let environment = ProcessInfo.processInfo.environment
        let browser = environment["BROWSER"].flatMap { $0.isEmpty ? nil : $0 } ?? "xdg-open"
        guard let executable = FileIO.executable(browser, path: environment["PATH"] ?? "") else {
            throw .usage(
                "--open found no browser: $BROWSER is not set and \(browser) is not on PATH",
                hint:
                    "set BROWSER to a browser command, or leave --open out\(kind == .local ? " (the emulator's challenge is then answered without one)" : " and open the URL yourself")"
            )
        }
        return (browser, executable)
    }

    /// `--open`: the URL in `$BROWSER` or `xdg-open`. With neither on this machine, it says so at once instead of
    /// waiting out the deadline for a return that cannot come. The browser starts clean (`ChildProcess`): it does not
    /// inherit the driver's ignored SIGINT/SIGTERM/SIGPIPE nor its state file's lock, and a thread reaps it.
    private static func open(_ url: String, _ context: OperationContext) throws(Diagnostic) {
        let (browser, executable) = try browserCommand(kind: context.configuration.kind)
        do {
            let child = try ChildProcess.start(executable, [url], standardOutput: .null)
            Thread { _ = child.wait() }.start()
        } catch {
            throw .usage(
                "--open could not start \(browser): \(error.reason)",
                hint: "set BROWSER to a browser command, or open the URL above yourself")
        }
    }
}
