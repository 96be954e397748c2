import Foundation

/// Pay Kit's polling state, from a shell: the customer request is read every second until the customer decides,
/// under a timeout the integrator sets (Pay Kit has none; the integration guide says to set one, see
/// docs/protocols/cashapp-afterpay.md). A rotated approval link (`refreshes_at` passed) is shown again. APPROVED
/// without a grant counts as declined, as in Pay Kit.
public enum CashAppApproval {
    public enum Expectation: String, CaseIterable, Sendable { case approved, declined }

    /// `cashapp.poll`'s arguments.
    public struct Poll: OperationArguments {
        public var request: String?
        public var timeout: Double?  // seconds
        public var interval: Double?  // seconds
        public var expect = Expectation.approved

        public init() {}

        public static let arguments: [Argument<Poll>] = [
            .string("request", \.request, default: "the state file's", help: "the customer request id"),
            .duration("timeout", \.timeout, default: "120s", help: "seconds or a duration (\"2m\")"),
            .duration("interval", \.interval, default: "1s, as Pay Kit", help: "between reads"),
            .choice(
                "expect", \.expect, default: "approved",
                help: "approved, or declined: the step passes when the customer declines"),
        ]
    }

    public static let poll = FlowOperation(
        name: "cashapp.poll", summary: "Wait for the customer's decision on the customer request (GET every second).",
        arguments: Poll.self, requiredConfiguration: CashAppClient.requiredConfiguration,
        stateCheck: CashAppState.check,
        outputs: CashAppOperations.requestOutputs + [
            .init("summary.polls", "how many reads it took"),
            .init("summary.grantId", "the grant the approval gave (GRG_…)", when: "approved"),
            .init("summary.customerId", "the customer (CST_…)", when: "approved"),
            .init("summary.cashtag", "the customer's $cashtag", when: "approved"),
        ]
    ) { (args: Poll, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = try CashAppClient(context)
        let state = CashAppState(store: context.state)
        let kept = try state.read().requestID
        guard let id = args.request ?? kept else {
            throw .usage(
                "no customer request to wait for", hint: "run `checkout-driver cashapp request` first, or give its id")
        }
        let timeout = args.timeout ?? CashAppProtocol.approvalTimeout
        let interval = args.interval ?? CashAppProtocol.pollInterval
        let expectation = args.expect
        // Another terminal's `cashapp approve` finds the request this run waits on in the state file: on disk before
        // the wait.
        try context.state?.commit()
        let started = ContinuousClock.now
        var shownLink: String?
        var recordedStatus: String?
        var polls = 0
        while true {
            let current = try await client.retrieve(id)
            polls += 1
            // Written when it changes, not on every poll (each update rewrites the state file under its lock).
            if current.state != recordedStatus {
                try state.update { section in
                    if section.requestID == id { section.requestStatus = current.state }
                }
                recordedStatus = current.state
            }
            if let link = current.mobileURL, link != shownLink {
                context.offer(shownLink == nil ? "approve in Cash App" : "the approval link was refreshed", url: link)
                shownLink = link
            }
            let status = current.state ?? "?"
            switch status {
            case "APPROVED":
                return try approved(current, id: id, polls: polls, expectation: expectation, state: state)
            case "DECLINED":
                // The customer's refusal is the payment's: the account lists it, whether this step expected it or not.
                var refused = CashAppPayments.asked(
                    .authorization, try state.read(), reference: "customer request \(id)")
                refused.outcome = .refused
                refused.status = "declined by the customer in Cash App"
                context.account(refused)
                guard expectation == .declined else {
                    throw .failure(
                        "the customer declined the payment in Cash App (customer request \(id))",
                        hint: "start again with `checkout-driver cashapp pay`, or offer another payment method")
                }
                return StepOutput(
                    document: ["request": current.json, "summary": summary(current, id: id, polls: polls)],
                    status: current.status)
            default:
                let waited = (ContinuousClock.now - started).seconds
                // The last read is at the limit, not one interval before it: the timeout is the time the customer gets.
                if waited >= timeout {
                    throw .failure(
                        "no decision from the customer within \(FlowRunner.format(timeout))s: customer request \(id) is still \(status)",
                        hint:
                            "approve it in Cash App (scan the code or open the link) and run `checkout-driver cashapp poll` again, or raise --approval-timeout"
                    )
                }
                context.polled(polls, "customer request is \(status)")
                var wait = interval
                if let refresh = current.refreshesAt.flatMap(Timestamp.parse) {
                    wait = min(
                        interval,
                        max(CashAppProtocol.refreshFloor, refresh.timeIntervalSince(context.services.now()) + 0.1))
                }
                wait = min(wait, timeout - waited)
                try await context.deadline.sleep(wait, during: context.step)
            }
        }
    }

    private static func approved(
        _ request: CustomerRequest, id: String, polls: Int, expectation: Expectation,
        state: CashAppState
    ) throws(Diagnostic) -> StepOutput {
        guard let grant = request.grant, let grantID = grant["id"]?.stringValue else {
            // Pay Kit counts an approval without a grant as a decline.
            if expectation == .declined {
                return StepOutput(
                    document: ["request": request.json, "summary": summary(request, id: id, polls: polls)],
                    status: request.status)
            }
            throw .failure(
                "Cash App approved customer request \(id) without a grant, so there is nothing to pay with (Pay Kit treats this as declined)",
                hint: "start again with `checkout-driver cashapp pay`")
        }
        guard expectation == .approved else {
            throw .failure(
                "the customer approved customer request \(id), but this step expected a decline",
                hint:
                    "against the emulator, the amount 13.13 declines; or decline it with `checkout-driver cashapp decline`"
            )
        }
        // validate-payment takes the profile's id for v2; the v3 confirm takes the grant's customer_id.
        let profile = request.customerID
        let grantCustomer = grant["customer_id"]?.stringValue
        try state.update { section in
            guard section.requestID == id else { return }
            section.customerID = section.flow == .button ? grantCustomer ?? profile : profile ?? grantCustomer
            section.grantID = grantID
        }
        return StepOutput(
            document: ["request": request.json, "summary": summary(request, id: id, polls: polls)],
            status: request.status)
    }

    static func summary(_ request: CustomerRequest, id: String, polls: Int) -> JSON {
        [
            "id": .string(id), "status": .string(request.state ?? ""), "polls": .number(JSON.Number(polls)),
            "customerId": request.customerID.map(JSON.string) ?? .null,
            "cashtag": request.json["customer_profile"]?["cashtag"] ?? .null,
            "grantId": request.grant?["id"] ?? .null, "grantExpiresAt": request.grant?["expires_at"] ?? .null,
        ]
    }
}
