import Foundation

/// What a Bahn call whose answer was lost actually did, read back from its intent, and the commands that settle it
/// when the intent cannot tell. The engine's `reconciling` runs these; the decisions about what each status means
/// for each call are here, in one place.
enum BahnReadBack {
    /// What an open confirm may have done, as its open outcome names it.
    static let confirmEffect = "the charge"

    static func confirm(
        intent: String, orderID: String?, token: PaymentTokenFile, key: String, captureMethod: String?,
        prior: BahnState.PriorCharge, client: BahnClient, state: BahnState
    ) -> ReadBack {
        ReadBack(
            provider: "bahn", action: "confirm", effect: confirmEffect, resource: "the intent \(intent)",
            reference: "intent \(intent)",
            replay: BahnState.replay(intent: intent, key: key),
            asked: state.asked(captureMethod == "manual" ? .authorization : .charge, intent: intent), shown: movement,
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let (document, current, status) = try await read(intent, client)
                // A confirm that reached Bahn leaves a charge on the intent; one that did not leaves the one before.
                // With no record of the one before, a decline on the intent may be an earlier attempt's: it settles
                // nothing.
                let charge = current["latest_charge_id"]?.stringValue
                let reached =
                    if case .known(let previous) = prior { charge != nil && charge != previous } else { false }
                switch status {
                case "succeeded", "requires_capture", "processing":
                    // Only a confirm gets an intent here: the money moved (or is moving), whichever attempt moved it.
                    if reached { try state.markSpent(token.transactionId, intent: intent, key: key) }
                    let output = try await BahnOperations.confirmedOutput(
                        document, intent: current, orderID: orderID, key: key,
                        status: 200, client: client, state: state)
                    let meaning =
                        switch status {
                        case "succeeded": "the charge went through"
                        case "requires_capture":
                            "the payment is authorised; capture it with `checkout-driver bahn capture \(intent)`"
                        default: "the charge is in flight; reconcile from the webhook"
                        }
                    return .tookEffect(output, shows: "\(intent) is \(status): \(meaning)")
                case "requires_payment_method" where reached && current["last_payment_error"]?.objectValue != nil:
                    try state.markSpent(token.transactionId, intent: intent, key: key)
                    try state.record(intent: current, orderID: orderID)
                    let error = current["last_payment_error"]
                    let codes = [error?["code"]?.stringValue, error?["decline_code"]?.stringValue].compactMap { $0 }
                        .joined(separator: ", ")
                    return .refused(
                        .failure(
                            "confirm was declined: \(intent) is requires_payment_method (\(codes)): \(error?["message"]?.stringValue ?? "")",
                            hint: BahnProtocol.hint(forCode: "card_declined", type: "card_error")))
                default:
                    return .notSeen(
                        shows:
                            "\(intent) is \(status) with no new charge; the confirm has not taken effect so far, but an attempt still in flight may yet complete it"
                    )
                }
            },
            settle: { keeping in
                let read = "read the intent's status: \(command(["bahn", "intent", intent], client))"
                // A token the run made is in its memory only, until an outcome left open keeps it: a call in flight
                // offers the read, which settles it alone (a crash takes the token along).
                guard keeping || !madeByRun(token, context: client.context) else { return [read] }
                let kept = keeping ? keep(token, context: client.context) : token.path
                var resend = ["bahn", "confirm", "--intent", intent, "--token-file", kept, "--idempotency-key", key]
                if let captureMethod { resend += ["--capture", captureMethod] }
                return [
                    "re-send it under the same idempotency key, which Bahn answers with the original response and never charges twice: \(command(resend, client))",
                    read,
                ]
            })
    }

    static func capture(_ intent: String, _ client: BahnClient) -> ReadBack {
        intentAction(
            "capture", intent, client, done: "succeeded", key: BahnProtocol.captureIdempotencyKey(intent: intent),
            ruledOut: ["canceled": "nothing was captured"], kind: .capture)
    }

    static func cancel(_ intent: String, _ client: BahnClient) -> ReadBack {
        intentAction(
            "cancel", intent, client, done: "canceled", key: BahnProtocol.cancelIdempotencyKey(intent: intent),
            ruledOut: ["succeeded": "the payment was taken"], kind: .void)
    }

    /// Capture and cancel: the intent in status `done` means the call went through; a status in `ruledOut` means it
    /// cannot have, and says why; any other leaves it open.
    private static func intentAction(
        _ action: String, _ intent: String, _ client: BahnClient, done: String, key: String,
        ruledOut: [String: String], kind: MoneyMovement.Kind
    ) -> ReadBack {
        ReadBack(
            provider: "bahn", action: action, effect: "the \(action)", resource: "the intent \(intent)",
            reference: "intent \(intent)",
            replay: BahnState.replay(intent: intent, key: key, action: action),
            asked: BahnState(store: client.context.state).asked(kind, intent: intent),
            shown: { output in
                let current = output.document["payment_intent"]
                return MoneyMovement(
                    provider: "bahn", kind: kind, amount: current?["amount"]?.intValue,
                    currency: current?["currency"]?.stringValue,
                    reference: intent, status: MoneyMovement.words(current?["status"]?.stringValue))
            },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                let (document, current, status) = try await read(intent, client)
                try BahnState(store: client.context.state).record(intent: current, orderID: nil)
                if status == done {
                    return .tookEffect(
                        StepOutput(document: document, status: 200),
                        shows: "\(intent) is \(status): the \(action) went through")
                }
                if let why = ruledOut[status] {
                    return .refused(
                        .failure(
                            "\(action) did not happen: \(intent) is \(status), so \(why)",
                            hint: "see the intent with `checkout-driver bahn intent \(intent)`"))
                }
                return .notSeen(
                    shows:
                        "\(intent) is still \(status); the \(action) has not taken effect so far, but an attempt still in flight may yet complete it"
                )
            },
            settle: { _ in
                [
                    "re-send it (its idempotency key is \(key), so Bahn answers a repeat with the original response): \(command(["bahn", action, intent], client))",
                    "read the intent's status: \(command(["bahn", "intent", intent], client))",
                ]
            })
    }

    /// A confirmed intent as the account shows it: charged, authorised (awaiting its capture) or in flight.
    static func movement(_ output: StepOutput) -> MoneyMovement? {
        guard let summary = output.document["summary"], let status = summary["status"]?.stringValue else { return nil }
        let authorised = status == BahnProtocol.authorisedStatus
        return MoneyMovement(
            provider: "bahn", kind: authorised ? .authorization : .charge, amount: summary["amount"]?.intValue,
            currency: summary["currency"]?.stringValue,
            reference: summary["charge"]?.stringValue ?? summary["intent"]?.stringValue,
            status: authorised ? "authorised, awaiting capture" : MoneyMovement.words(status))
    }

    // MARK: -

    /// The intent, read with a GET (safe to repeat), through the step's own context: bounded by its deadline.
    private static func read(_ intent: String, _ client: BahnClient) async throws(Diagnostic) -> (JSON, JSON, String) {
        let response = try await client.get(BahnProtocol.intentPath(intent))
        let document = try response.requireSuccess("intent \(intent)")
        guard let current = response.intent, let status = current["status"]?.stringValue else {
            throw .unavailable(
                "Bahn's answer for \(intent) has no payment_intent.status",
                hint: "check BAHN_API_URL points at Bahn's API (see it with -v)")
        }
        return (document, current, status)
    }

    private static func command(_ arguments: [String], _ client: BahnClient) -> String {
        "`" + ShellWords.join(["checkout-driver"] + arguments + client.context.services.settleOptions) + "`"
    }

    /// Whether the run made the token itself (under its scratch directory's name, held in memory).
    private static func madeByRun(_ token: PaymentTokenFile, context: OperationContext) -> Bool {
        context.services.scratchDirectory.map { token.path.hasPrefix($0 + "/") } ?? false
    }

    /// A token the run made for itself lives in its memory (`MadeFiles`), which goes when the run ends; the re-send
    /// needs it, so it is written to a 0600 file of its own, kept until the user settles the outcome.
    /// Not when the emulator ends with the run: nothing is left to settle, and test tokens would only pile up.
    private static func keep(_ token: PaymentTokenFile, context: OperationContext) -> String {
        guard madeByRun(token, context: context), !context.services.emulatorEndsWithRun else { return token.path }
        let directory = context.services.keepDirectory ?? (NSTemporaryDirectory() + "checkout-driver-kept")
        let kept = directory + "/token-\(token.transactionId.prefix(16)).json"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            try FileIO.write(token.bytes, to: kept)
        } catch {
            context.note(
                "warning: could not keep the token for the re-send (\(error)); it is at \(token.path) until this run ends"
            )
            return token.path
        }
        context.note("the token is kept at \(kept) (mode 0600) for the re-send; delete it once the outcome is settled")
        return kept
    }
}
