import Foundation
import Synchronization

/// Long-lived helpers a run provides to operations (listeners that outlive a single step).
public struct RunServices: Sendable {
    /// Receives Bahn webhooks for `bahn.awaitWebhook` (the local emulator delivers to it under `--env local`).
    public var bahnWebhooks: BahnWebhookInbox?
    /// A directory for files the run makes (test tokens), removed when the run ends.
    public var scratchDirectory: String?
    /// Where a file that a later command needs is kept (a token whose confirm has an unknown outcome).
    public var keepDirectory: String?
    /// Global options that point a later command at this run's environment and state file (`--env`, `--session`),
    /// appended to the commands that settle an unknown outcome.
    public var settleOptions: [String]
    /// Said with those commands when they cannot be complete (the run had `--set` secrets, which are never printed).
    public var settleCaveat: String?
    /// The run talks to an emulator that ends with this process: nothing it did outlives the command.
    public var emulatorEndsWithRun: Bool
    /// `--force`: a money call goes ahead although the state file keeps an earlier one's outcome open (the user settled
    /// it by other means); the open outcomes it passes over are dropped, with a note.
    public var force = false
    /// Whether anything in this run got a well-formed answer: until then a garbled one may be a wrong endpoint URL.
    public let answers = AnswerLog()
    /// Undoes what starting the services changed outside the process (a webhook target).
    public var restore: @Sendable () async -> Void

    public init(bahnWebhooks: BahnWebhookInbox? = nil, scratchDirectory: String? = nil, keepDirectory: String? = nil,
                settleOptions: [String] = [], emulatorEndsWithRun: Bool = false,
                restore: @escaping @Sendable () async -> Void = {}) {
        self.bahnWebhooks = bahnWebhooks
        self.scratchDirectory = scratchDirectory
        self.keepDirectory = keepDirectory
        self.settleOptions = settleOptions
        self.settleCaveat = nil
        self.emulatorEndsWithRun = emulatorEndsWithRun
        self.restore = restore
    }
}

/// What a step — a raw request or a provider operation — gets to work with. `send` is the one place where
/// the retry policy, the deadline and the exchange events meet, so every request of every operation is
/// retried, bounded, traced and recorded the same way.
public struct OperationContext: Sendable {
    public let step: String
    public let client: HTTPClient
    public let retry: RetryPolicy
    public let requestTimeout: Double
    public let deadline: Deadline
    public let configuration: Configuration
    public let state: StateStore?
    public let redactor: Redactor
    public let services: RunServices
    let events: FlowEventSink
    let counter: ExchangeCounter

    /// Sends a request, retrying where the retry policy allows. `build` is called once per attempt with the
    /// attempt number (1-based), so per-attempt headers such as a request id are fresh each time while an
    /// idempotency key stays the same.
    public func send(_ build: @Sendable (Int) throws(Diagnostic) -> HTTPClientRequest) async throws(Diagnostic) -> HTTPClientResponse {
        let last = try await retry.exchange(client: client, deadline: deadline, during: step, build: build,
                                            attempted: { record in
                                                counter.record(status: try? record.outcome.get().status)
                                                events(.exchange(record))
                                            },
                                            retrying: { attempt, delay, reason in
                                                events(.retrying(step: step, attempt: attempt, delay: delay, reason: redactor.text(reason)))
                                            })
        switch last.outcome {
        case .success(let response) where response.status == 429:
            // Rate limited on every attempt: a clear "not now" for the last one — the outcome is open only if an
            // earlier attempt may have taken effect (then a money call reads back).
            var limited = Diagnostic.failure(
                "\(last.request.method) \(redactor.text(last.request.url)): rate limited (429) on \(last.attempts == 1 ? "its attempt" : "all \(last.attempts) attempts")",
                hint: "the service said not now\(response.headers["Retry-After"].map { " (Retry-After: \($0))" } ?? ""), so the last attempt did nothing; wait, then run it again")
            limited.outcomeUncertain = last.outcomeOpen
            limited.rateLimited = true
            throw limited
        case .success(var response):
            response.outcomeOpen = last.outcomeOpen
            services.answers.note(response)
            return response
        case .failure(let error):
            var diagnostic = diagnose(error, request: last.request, attempts: last.attempts, deadlineBound: last.deadlineBound)
            if last.outcomeOpen { diagnostic.outcomeUncertain = true }
            throw diagnostic
        }
    }

    /// The hint for an answer that is not what the protocol promises: `endpoint` (check the URL) while nothing in this
    /// run has answered well — a configuration that never worked — and otherwise a service that failed this once.
    public func garbledHint(endpoint: String) -> String {
        services.answers.any ? "the service answered well before in this run, so it failed this once; try again later (see the answer with -v)" : endpoint
    }

    /// Reports something the user should know (a warning, what a retry did).
    public func note(_ message: String) { events(.note(step: step, message: redactor.text(message))) }

    /// Shows a link the user must act on (see `FlowEvent.link`).
    public func offer(_ label: String, url: String) { events(.link(step: step, label: label, url: redactor.text(url))) }

    /// Reports one poll of a wait the operation runs itself (the engine's `until` reports its own).
    func polled(_ poll: Int, _ reason: String) { events(.polling(step: step, poll: poll, reason: redactor.text(reason))) }

    private func diagnose(_ error: TransportError, request: HTTPClientRequest, attempts: Int, deadlineBound: Bool) -> Diagnostic {
        let tries = attempts > 1 ? " after \(attempts) attempts" : ""
        let what = "\(request.method) \(redactor.text(request.url))"
        switch error {
        case .unreachable(let m):
            return .unavailable("\(what): cannot connect\(tries): \(redactor.text(m))",
                                hint: "check the base URL and that the service is up (--env local uses the built-in emulator)")
        case .timedOut:
            // The flow's deadline, not --timeout, ended it: the message names the budget that was set.
            if deadline.isSpent || deadlineBound {
                var exceeded = deadline.exceeded(during: step)
                exceeded.outcomeUncertain = true  // the deadline cut an exchange short
                return exceeded
            }
            // Whether the request may have acted is the retry loop's to say (RetryPolicy.leavesOutcomeOpen), for this
            // ending as for every other: `send` marks the diagnostic.
            return .unavailable("\(what): no response within \(FlowRunner.format(request.timeout))s\(tries)",
                              hint: "raise --timeout, or check the service with -v")
        case .connectionLost(let m):
            let safe = RetryPolicy.isSafeToRepeat(request)
            return .unavailable("\(what): connection lost\(tries): \(redactor.text(m))",
                              hint: safe ? "the service may be failing; try again later" :
                                "the request may have been applied; it was not repeated because it has no idempotency key")
        case .cancelled(let sent):
            var interrupted = Diagnostic.interrupted(during: step)
            interrupted.outcomeUncertain = sent  // the request was on its way
            return interrupted
        case .invalidRequest(let m):
            return .data("\(what): \(redactor.text(m))")
        }
    }
}

/// Remembers whether a run got any well-formed (JSON) answer. Once it has, the check is one atomic load.
public final class AnswerLog: Sendable {
    private let seen = Atomic<Bool>(false)

    public init() {}

    public var any: Bool { seen.load(ordering: .relaxed) }

    func note(_ response: HTTPClientResponse) {
        guard !any, response.status < 500, !response.body.isEmpty, (try? JSON.parse(response.body)) != nil else { return }
        seen.store(true, ordering: .relaxed)
    }
}

// MARK: - Outcomes that move money

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
    /// Keeps what a safe retry needs (a token out of the run's scratch directory) and returns the ways to settle
    /// the outcome, each a sentence with its command: the re-send that replays, the read of the status.
    public var settle: @Sendable () -> [String]

    public init(provider: String, action: String, effect: String, resource: String, reference: String, replay: String? = nil,
                read: @escaping @Sendable (OperationContext) async throws(Diagnostic) -> Finding,
                settle: @escaping @Sendable () -> [String]) {
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
    public func reconciling(_ readBack: ReadBack,
                            _ operation: () async throws(Diagnostic) -> StepOutput) async throws(Diagnostic) -> StepOutput {
        try guardOpenOutcomes(readBack)
        do {
            let output = try await reconcile(readBack, operation)
            clearReplayed(readBack)
            return output
        } catch {
            // Only the service's own refusal answers a replay (a decline replayed under the key); a connection refused,
            // a rate limit, a deadline or an interruption before sending say nothing of the call left open.
            if error.code == .failure && !error.outcomeUncertain && !error.rateLimited { clearReplayed(readBack) }
            throw error
        }
    }

    /// A known answer to a replay settles the outcome it replayed.
    private func clearReplayed(_ readBack: ReadBack) {
        guard let state, let replay = readBack.replay else { return }
        _ = try? OpenOutcomes.clear(provider: readBack.provider, in: state, where: { $0.replay == replay })
    }

    private func keepOpen(_ readBack: ReadBack, settle ways: [String]) {
        guard let state, !services.emulatorEndsWithRun else { return }
        let outcome = OpenOutcome(provider: readBack.provider, reference: readBack.reference, replay: readBack.replay,
                                  effect: readBack.effect, settle: ways, since: Timestamp.iso8601(Date()), run: state.run)
        do { try OpenOutcomes.record(outcome, in: state) } catch {
            note("warning: could not keep the open outcome in the state file: \(error.message)")
        }
    }

    private func reconcile(_ readBack: ReadBack,
                           _ operation: () async throws(Diagnostic) -> StepOutput) async throws(Diagnostic) -> StepOutput {
        let lost: Diagnostic
        do { return try await operation() } catch {
            guard error.outcomeUncertain else { throw error }
            lost = error
        }
        if lost.code == .interrupted {
            throw unknown(readBack, because: "\(lost.message) while \(readBack.action) was on its way", code: .interrupted)
        }
        let lostAnswer = "\(readBack.action) got no trustworthy answer (\(lost.message))"
        if deadline.isSpent {
            throw unknown(readBack, because: "\(lostAnswer), and no time is left to read \(readBack.resource) back")
        }
        let finding: ReadBack.Finding
        do { finding = try await readBack.read(self) } catch {
            throw unknown(readBack, because: "\(lostAnswer), and reading \(readBack.resource) back failed too (\(error.message))",
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
        var ways = readBack.settle()
        if let caveat = services.settleCaveat { ways.append(caveat) }
        keepOpen(readBack, settle: ways)
        if services.emulatorEndsWithRun {
            ways.append("note that this command's embedded emulator ends with it, so nothing is left to settle; run `checkout-driver sandbox serve` to keep intents between commands")
        }
        var diagnostic = Diagnostic(code, "outcome unknown: \(readBack.effect) may have gone through — \(reason)",
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

// MARK: - The one retry loop

extension RetryPolicy {
    /// The last attempt of an exchange: its request, how it ended and how many attempts were made.
    public struct LastAttempt: Sendable {
        public var request: HTTPClientRequest
        public var outcome: Result<HTTPClientResponse, TransportError>
        public var attempts: Int
        /// Some attempt may have taken effect and the last one's answer does not settle it.
        public var outcomeOpen: Bool
        /// The last attempt's timeout was cut to what was left of the deadline.
        public var deadlineBound = false
    }

    /// Sends `build(attempt)` until an attempt ends in a way this policy does not repeat, waiting between attempts
    /// within `deadline`. Every request goes through here — each step's, and the driver's own housekeeping (webhook
    /// target registration) — so retry safety has one implementation. Throws only for the deadline, an interruption
    /// or a request that cannot be built.
    public func exchange(client: HTTPClient, deadline: Deadline, during step: String,
                         build: (Int) throws(Diagnostic) -> HTTPClientRequest,
                         attempted: (ExchangeRecord) -> Void = { _ in },
                         retrying: (_ attempt: Int, _ delay: Double, _ reason: String) -> Void = { _, _, _ in }) async throws(Diagnostic) -> LastAttempt {
        var attempt = 1
        // Whether an earlier attempt may have taken effect: then stopping between attempts leaves the outcome open.
        var mayHaveTakenEffect = false
        func stopped(_ reason: Diagnostic) -> Diagnostic {
            var stopped = reason
            stopped.outcomeUncertain = mayHaveTakenEffect
            return stopped
        }
        while true {
            if Task.isCancelled { throw stopped(.interrupted(during: step)) }
            var request = try build(attempt)
            try HeaderSafety.check(request, during: step)
            var deadlineBound = false
            if let remaining = deadline.remaining {
                if remaining <= 0 { throw stopped(deadline.exceeded(during: step)) }
                deadlineBound = remaining < request.timeout
                request.timeout = min(request.timeout, remaining)
            }
            let startedAt = Date()
            let clock = ContinuousClock.now
            let outcome: Result<HTTPClientResponse, TransportError>
            do { outcome = .success(try await client.send(request)) } catch { outcome = .failure(error) }
            attempted(ExchangeRecord(step: step, attempt: attempt, startedAt: startedAt, request: request,
                                     outcome: outcome, duration: (ContinuousClock.now - clock).seconds))
            mayHaveTakenEffect = mayHaveTakenEffect || Self.leavesOutcomeOpen(outcome)
            guard shouldRetry(request, attempt: attempt, outcome: outcome), !Task.isCancelled else {
                return LastAttempt(request: request, outcome: outcome, attempts: attempt,
                                   outcomeOpen: mayHaveTakenEffect && !Self.settles(outcome), deadlineBound: deadlineBound)
            }
            let delay = delay(after: attempt, response: try? outcome.get())
            let reason = switch outcome {
            case .success(let r) where Self.isGarbledRead(request, r): "status \(r.status) with a body that is not JSON"
            case .success(let r): "status \(r.status)"
            case .failure(let e): e.description
            }
            retrying(attempt + 1, delay, reason)
            do { try await deadline.sleep(delay, during: step) } catch { throw stopped(error) }
            attempt += 1
        }
    }
}
