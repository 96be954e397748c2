import Foundation

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
    public func exchange(
        client: HTTPClient, deadline: Deadline, during step: String,
        build: (Int) throws(Diagnostic) -> HTTPClientRequest,
        attempted: (ExchangeRecord) -> Void = { _ in },
        retrying: (_ attempt: Int, _ delay: Double, _ reason: String) -> Void = { _, _, _ in }
    ) async throws(Diagnostic) -> LastAttempt {
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
            request.sender = .init(step: step, attempt: attempt)
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
            attempted(
                ExchangeRecord(
                    step: step, attempt: attempt, startedAt: startedAt, request: request,
                    outcome: outcome, duration: (ContinuousClock.now - clock).seconds))
            mayHaveTakenEffect = mayHaveTakenEffect || Self.leavesOutcomeOpen(outcome)
            guard shouldRetry(request, attempt: attempt, outcome: outcome), !Task.isCancelled else {
                return LastAttempt(
                    request: request, outcome: outcome, attempts: attempt,
                    outcomeOpen: mayHaveTakenEffect && !Self.settles(outcome), deadlineBound: deadlineBound)
            }
            let delay = delay(after: attempt, response: try? outcome.get())
            let reason =
                switch outcome {
                case .success(let r) where Self.isGarbledRead(request, r):
                    "status \(r.status) with a body that is not JSON"
                case .success(let r): "status \(r.status)"
                case .failure(let e): e.description
                }
            retrying(attempt + 1, delay, reason)
            do { try await deadline.sleep(delay, during: step) } catch { throw stopped(error) }
            attempt += 1
        }
    }
}
