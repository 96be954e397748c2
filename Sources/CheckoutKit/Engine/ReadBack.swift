import Foundation
import Synchronization

/// How an operation that can move money finds out what its request did when no trustworthy answer came back
/// (docs/outcomes.md). The operation declares it; `reconciling` uses it.
public struct ReadBack: Sendable {
    public enum Finding: Sendable {
        /// The resource shows that the operation took effect: the step passes with this output.
        case tookEffect(StepOutput, shows: String)
        /// The resource shows that the service refused it (a decline): a known outcome, this failure.
        case refused(Diagnostic)
        /// The resource does not show it (yet). A request still in flight may complete it, so this settles nothing.
        case notSeen(shows: String)
    }

    /// Whose money it moves ("bahn"): an open outcome blocks that provider's next money call in the state file.
    public var provider: String
    /// What the operation does, for messages: "confirm".
    public var action: String
    /// What would have moved: "the charge".
    public var effect: String
    /// What is read back: "the intent pi_…".
    public var resource: String
    /// The identity of what is read back ("intent pi_…"), under which an open outcome is kept in the state file.
    public var reference: String
    /// What makes a re-send of this call a replay that cannot move money twice (its idempotency key); nil when the
    /// provider has nothing of the kind, so nothing may be sent while the outcome is open.
    public var replay: String?
    /// The safe read (its requests go through `send`, within what is left of the deadline).
    public var read: @Sendable (OperationContext) async throws(Diagnostic) -> Finding
    /// The ways to settle the outcome, each a sentence with its command: the re-send that replays, the read of the
    /// status. `keeping`: the outcome is left open as the run ends, so what a safe re-send needs is first moved out of
    /// the run's scratch directory (a made token); not for a call in flight, whose run's files are there while it runs
    /// and after its process is killed.
    public var settle: @Sendable (_ keeping: Bool) -> [String]
    /// The single-use values the call uses up, by their keys in the record of spent values (`SpentCredentials.key`):
    /// while the call is in flight — and after a crash that left it so — they count as used.
    public var spends: [String] = []
    /// What the call asks to move (its kind, amount and currency when known before sending, what it acts on): the
    /// account's entry when it is refused or its outcome stays unknown.
    public var asked: MoneyMovement?
    /// The movement a passing answer (or a read-back that found it) shows; nil when it shows none yet (a 3DS step to
    /// come).
    public var shown: (@Sendable (StepOutput) -> MoneyMovement?)?

    public init(
        provider: String, action: String, effect: String, resource: String, reference: String, replay: String? = nil,
        asked: MoneyMovement? = nil, shown: (@Sendable (StepOutput) -> MoneyMovement?)? = nil,
        read: @escaping @Sendable (OperationContext) async throws(Diagnostic) -> Finding,
        settle: @escaping @Sendable (_ keeping: Bool) -> [String]
    ) {
        self.asked = asked
        self.shown = shown
        self.provider = provider
        self.action = action
        self.effect = effect
        self.resource = resource
        self.reference = reference
        self.replay = replay
        self.read = read
        self.settle = settle
    }
}

extension OperationContext {
    /// Runs the request of an operation that can move money. When it ends without a trustworthy answer, the
    /// resource is read back and what actually happened becomes the step's outcome; when the read cannot settle
    /// it either, the outcome is unknown (exit 75), the message says how to settle it safely, and the state file keeps
    /// it open: the provider's next money call on that file is refused before sending until it is settled.
    ///
    /// In a whole flow's run the call is first recorded as in flight, and that record reaches the disk, with the run's
    /// pending changes, just before the call's first request is sent (`MoneyCall`): a run killed while the call may
    /// have moved money leaves it open in the state file. Whatever answer settles it takes the record away again.
    public func reconciling(
        _ readBack: ReadBack,
        _ operation: () async throws(Diagnostic) -> StepOutput
    ) async throws(Diagnostic) -> StepOutput {
        try guardOpenOutcomes(readBack)
        let inFlight = try recordInFlight(readBack)
        do {
            let output = try await MoneyCall.making { () async throws(Diagnostic) -> StepOutput in
                try await reconcile(readBack, operation)
            }
            clearReplayed(readBack)
            settle(inFlight)
            if let movement = readBack.shown?(output) { account(movement) }
            return output
        } catch {
            // An open outcome replaced the record (`keepOpen`, under the same key); any other ending settles the call.
            if !error.outcomeUncertain { settle(inFlight) }
            // Only the service's own refusal answers a replay (a decline replayed under the key); a connection refused,
            // a rate limit, a deadline or an interruption before sending say nothing of the call left open.
            if error.code == .failure && !error.outcomeUncertain && !error.rateLimited {
                clearReplayed(readBack)
                if var refused = readBack.asked {
                    refused.outcome = .refused
                    refused.status = "refused: " + redactor.text(error.message)
                    account(refused)
                }
            }
            throw error
        }
    }

    /// Records the call as in flight in this process, in a run's journal (a single step writes its state as it goes and
    /// records nothing); nil when nothing was recorded.
    private func recordInFlight(_ readBack: ReadBack) throws(Diagnostic) -> OpenOutcome? {
        guard let state, state.journal != nil, !services.emulatorEndsWithRun else { return nil }
        var ways = readBack.settle(false)
        if let caveat = services.settleCaveat { ways.append(caveat) }
        var outcome = OpenOutcome(
            provider: readBack.provider, reference: readBack.reference, replay: readBack.replay,
            effect: readBack.effect, settle: ways, since: Timestamp.iso8601(Date()), run: state.run,
            inFlight: .current)
        outcome.spends = readBack.spends
        try OpenOutcomes.record(outcome, in: state)
        return outcome
    }

    /// Takes the in-flight record of a call whose outcome is known away.
    private func settle(_ inFlight: OpenOutcome?) {
        guard let inFlight, let state else { return }
        do {
            try OpenOutcomes.clear(
                provider: inFlight.provider, in: state, where: { $0.key == inFlight.key && $0.inFlight != nil })
        } catch {
            note(
                "warning: could not settle \(inFlight.effect) of \(inFlight.reference) in the state file: \(error.message)"
            )
        }
    }

    /// A known answer to a replay settles the outcome it replayed.
    private func clearReplayed(_ readBack: ReadBack) {
        guard let state, let replay = readBack.replay else { return }
        _ = try? OpenOutcomes.clear(provider: readBack.provider, in: state, where: { $0.replay == replay })
    }

    private func keepOpen(_ readBack: ReadBack, settle ways: [String]) {
        guard let state, !services.emulatorEndsWithRun else { return }
        let outcome = OpenOutcome(
            provider: readBack.provider, reference: readBack.reference, replay: readBack.replay,
            effect: readBack.effect, settle: ways, since: Timestamp.iso8601(Date()), run: state.run)
        do { try OpenOutcomes.record(outcome, in: state) } catch {
            note("warning: could not keep the open outcome in the state file: \(error.message)")
        }
    }

    private func reconcile(
        _ readBack: ReadBack,
        _ operation: () async throws(Diagnostic) -> StepOutput
    ) async throws(Diagnostic) -> StepOutput {
        let lost: Diagnostic
        do { return try await operation() } catch {
            guard error.outcomeUncertain else { throw error }
            lost = error
        }
        if lost.code == .interrupted {
            throw unknown(
                readBack, because: "\(lost.message) while \(readBack.action) was on its way", code: .interrupted)
        }
        let lostAnswer = "\(readBack.action) got no trustworthy answer (\(lost.message))"
        if deadline.isSpent {
            throw unknown(readBack, because: "\(lostAnswer), and no time is left to read \(readBack.resource) back")
        }
        let finding: ReadBack.Finding
        do { finding = try await readBack.read(self) } catch {
            throw unknown(
                readBack, because: "\(lostAnswer), and reading \(readBack.resource) back failed too (\(error.message))",
                code: error.code == .interrupted ? .interrupted : .outcomeUnknown)
        }
        switch finding {
        case .tookEffect(let output, let shows):
            note("\(lostAnswer); reading \(readBack.resource) back: \(shows)")
            return output
        case .refused(let failure):
            note("\(lostAnswer); reading \(readBack.resource) back: \(failure.message)")
            throw failure
        case .notSeen(let shows):
            throw unknown(readBack, because: "\(lostAnswer), and reading \(readBack.resource) back: \(shows)")
        }
    }

    private func unknown(_ readBack: ReadBack, because reason: String, code: ExitCode = .outcomeUnknown) -> Diagnostic {
        var ways = readBack.settle(true)
        if let caveat = services.settleCaveat { ways.append(caveat) }
        keepOpen(readBack, settle: ways)
        if services.emulatorEndsWithRun {
            ways.append(
                "note that this command's embedded emulator ends with it, so nothing is left to settle; run `checkout-driver sandbox serve` to keep intents between commands"
            )
        }
        if var open = readBack.asked {
            open.outcome = .unknown
            open.status = "unknown: \(readBack.effect) may have gone through"
            open.settle = ways.map(redactor.text)
            account(open)
        }
        var diagnostic = Diagnostic(
            code, "outcome unknown: \(readBack.effect) may have gone through — \(reason)",
            hint: "settle it safely: " + ways.joined(separator: "; or "))
        diagnostic.outcomeUncertain = true
        return diagnostic
    }

    /// Runs a read that only adds detail to a result the operation already has (the card's last 4 digits). It
    /// never fails the step: a failure becomes a warning naming what is missing.
    public func enrichment<T: Sendable>(_ what: String, _ read: () async throws(Diagnostic) -> T) async -> T? {
        do { return try await read() } catch {
            if error.code != .interrupted { note("warning: \(what) is missing: \(error.message)") }
            return nil
        }
    }
}

/// The money call this task is making (`reconciling`): the first request it sends writes the run's pending state
/// changes first — the call's in-flight record among them — so that what a settle command needs is on disk before
/// anything can move money. Later requests of the call (a read-back, an enrichment) write nothing more.
enum MoneyCall {
    final class Started: Sendable {
        let committed = Atomic<Bool>(false)
    }

    @TaskLocal static var current: Started?

    static func making<T: Sendable>(_ call: () async throws(Diagnostic) -> T) async throws(Diagnostic) -> T {
        let result: Result<T, Diagnostic> = await $current.withValue(Started()) {
            do throws(Diagnostic) { return .success(try await call()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Called before each request is sent: the first one of a money call writes the state's pending changes.
    static func beforeSending(_ state: StateStore?) throws(Diagnostic) {
        guard let call = current, let state, !call.committed.exchange(true, ordering: .relaxed) else { return }
        try state.commit()
    }
}
