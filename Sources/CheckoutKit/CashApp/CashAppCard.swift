import Foundation

/// The Afterpay Button's last step: `button/confirm` with the approval's grant yields a one-time virtual card, which
/// the merchant must authorise before `cardValidUntil`. Its number and CVC are secrets: output shows the type, last 4
/// and expiry; `cardOut` writes the whole card to a new 0600 file instead (never over an existing one).
public enum CashAppCard {
    /// `cashapp.confirm`'s arguments.
    public struct Confirm: OperationArguments {
        public var cardOut: String?

        public init() {}

        public static let arguments: [Argument<Confirm>] = [
            .string("cardOut", \.cardOut, help: "write the full card (number, CVC) to this new file, mode 0600")
        ]
    }

    public static let confirm = FlowOperation(
        name: "cashapp.confirm",
        summary: "Confirm the Afterpay Button checkout with the Cash App grant; get the virtual card.",
        arguments: Confirm.self, requiredConfiguration: AfterpayClient.plusConfiguration,
        stateCheck: CashAppState.check,
        outputs: [
            .init("card.type", "the card network (VISA)"), .init("card.last4", "the card's last 4"),
            .init("card.number", "masked"),
            .init("card.expiry", "YYYY-MM"), .init("card.validUntil", "authorise before this time"),
            .init("card.secondsLeft", "seconds until then"),
        ]
    ) { (args: Confirm, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let section = try CashAppState(store: context.state).read()
        guard section.flow == .button, let token = section.token, let card = section.singleUseCardToken else {
            throw .usage(
                "no Afterpay Button checkout to confirm", hint: "run `checkout-driver cashapp pay --flow button`")
        }
        guard let jwt = section.jwt, let grant = section.grantID, let customer = section.customerID else {
            throw .usage(
                "the button checkout has no approved customer request yet",
                hint: "sign it, request it and poll until approved first")
        }
        let cardOut = args.cardOut
        // Checked before anything is sent: a card that cannot be written must not be issued.
        if let cardOut, FileManager.default.fileExists(atPath: cardOut) {
            throw .usage(
                "--card-out \(cardOut) already exists; the card is only ever written to a new file",
                hint: "give a path that does not exist yet")
        }
        // Afterpay takes a confirm only before the button's confirmMustBeCalledBefore: a late one is refused here,
        // before anything is sent, with the way to start again.
        if let text = section.confirmBefore, let before = Timestamp.parse(text), before <= context.services.now() {
            throw .failure(
                "the Afterpay Button checkout can no longer be confirmed: its confirmMustBeCalledBefore, \(text), has passed",
                hint: "start a new one with `checkout-driver cashapp pay --flow button`")
        }
        let body: JSON = [
            "token": .string(token), "singleUseCardToken": .string(card),
            "cashAppPspInfo": [
                "externalCustomerId": .string(customer), "externalGrantId": .string(grant), "jwt": .string(jwt),
            ],
        ]
        // The confirm issues the card the merchant then charges: a lost answer is an open outcome. Afterpay documents
        // no read of a confirmed button checkout, so it is settled by repeating the confirm (see `repeatedConfirm`).
        let readBack = ReadBack(
            provider: "cashapp", action: "button confirm", effect: "the confirm that issues the virtual card",
            resource: "the button checkout",
            reference: "checkout \(OpenOutcome.fingerprint(token))",
            replay: "button confirm of checkout \(OpenOutcome.fingerprint(token))",
            // The card the merchant then charges holds the checkout's amount: its issue is the authorisation.
            asked: CashAppPayments.asked(.authorization, section, reference: "button checkout"),
            shown: { _ in
                var issued = CashAppPayments.asked(.authorization, section, reference: "button checkout")
                issued.outcome = .done
                issued.status = "virtual card issued"
                return issued
            },
            read: { (_: OperationContext) async throws(Diagnostic) -> ReadBack.Finding in
                .notSeen(shows: "Afterpay has no read of a confirmed button checkout")
            },
            settle: { _ in
                let command =
                    "`"
                    + ShellWords.join(
                        ["checkout-driver", "cashapp", "confirm", "--card-out", "NEW_FILE"]
                            + context.services.settleOptions) + "`"
                return ["repeat the confirm to get the card (\(CashAppProtocol.repeatedConfirm)): \(command)"]
            })
        let answer = try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
            let response = try await AfterpayClient(context).plus(
                CashAppProtocol.buttonConfirmPath, body: body, sdkHeader: true)
            if response.outcomeOpen {
                throw .uncertain(
                    "button confirm got no answer that settles it (HTTP \(response.status))", hint: "repeat the confirm"
                )
            }
            return StepOutput(document: try response.requireSuccess("button confirm"), status: response.status)
        }
        let document = answer.document
        let details = document["paymentDetails"] ?? .null
        for secret in [
            details["virtualCard"]?["cardNumber"], details["virtualCard"]?["cvc"],
            details["virtualCardToken"]?["cardToken"],
        ] {
            if let value = secret?.stringValue { context.redactor.register(value) }
        }
        guard
            let shown = shownCard(
                details, validUntil: document["cardValidUntil"]?.stringValue, now: context.services.now())
        else {
            throw .unavailable(
                "Afterpay's confirm answer has neither paymentDetails.virtualCard nor virtualCardToken",
                hint: "see the answer with -v")
        }
        var summary = shown
        if let cardOut {
            let whole: JSON = ["paymentDetails": details, "cardValidUntil": document["cardValidUntil"] ?? .null]
            try writeNew(Data((whole.serialized(pretty: true) + "\n").utf8), to: cardOut)
            summary["writtenTo"] = .string(cardOut)
        }
        return StepOutput(document: ["card": .object(summary)], status: answer.status)
    }

    /// What may be shown of the card: its type, last 4, expiry, and how long it stays valid.
    static func shownCard(_ details: JSON, validUntil: String?, now: Date = Date()) -> JSON.Object? {
        var shown: JSON.Object
        if let card = details["virtualCard"], card != .null {
            let number = card["cardNumber"]?.stringValue ?? ""
            shown = [
                "kind": "virtualCard", "type": card["cardType"] ?? .null,
                "last4": number.count >= 4 ? .string(String(number.suffix(4))) : .null,
                "number": number.count >= 4 ? .string("•••• " + number.suffix(4)) : .null,
                "expiry": card["expiry"] ?? .null,
            ]
        } else if let token = details["virtualCardToken"], token != .null {
            shown = [
                "kind": "virtualCardToken", "gateway": token["paymentGateway"] ?? .null,
                "expiry": token["expiry"] ?? .null,
            ]
        } else {
            return nil
        }
        shown["validUntil"] = validUntil.map(JSON.string) ?? .null
        if let until = validUntil.flatMap(Timestamp.parse) {
            shown["secondsLeft"] = .number(max(0, until.timeIntervalSince(now).rounded(.down)))
        }
        return shown
    }

    /// Creates `path` (mode 0600) and writes `bytes`; an existing file — or one made in the meantime — is refused.
    static func writeNew(_ bytes: Data, to path: String) throws(Diagnostic) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .ioError(
                "cannot create --card-out \(path): \(reason); the card was issued but not written",
                hint: "run `checkout-driver cashapp confirm --card-out NEW_FILE` (\(CashAppProtocol.repeatedConfirm))")
        }
        defer { close(fd) }
        guard FileIO.writeAll(fd, bytes) else {
            let reason = String(cString: strerror(errno))
            unlink(path)
            throw .ioError(
                "cannot write --card-out \(path): \(reason)",
                hint: "run `checkout-driver cashapp confirm --card-out NEW_FILE` on a disk with room")
        }
    }
}
