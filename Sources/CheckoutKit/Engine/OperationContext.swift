import Foundation

/// Long-lived helpers a run provides to operations (listeners that outlive a single step).
public struct RunServices: Sendable {
    /// Receives Bahn webhooks for `bahn.awaitWebhook` (the local emulator delivers to it under `--env local`).
    public var bahnWebhooks: BahnWebhookInbox?
    /// A directory for files the run makes (test tokens), removed when the run ends.
    public var scratchDirectory: String?
    /// Undoes what starting the services changed outside the process (a webhook target).
    public var restore: @Sendable () async -> Void

    public init(bahnWebhooks: BahnWebhookInbox? = nil, scratchDirectory: String? = nil,
                restore: @escaping @Sendable () async -> Void = {}) {
        self.bahnWebhooks = bahnWebhooks
        self.scratchDirectory = scratchDirectory
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
        var attempt = 1
        while true {
            var request = try build(attempt)
            if let remaining = deadline.remaining {
                if remaining <= 0 { throw deadline.exceeded(during: step) }
                request.timeout = min(request.timeout, remaining)
            }
            let startedAt = Date()
            let clock = ContinuousClock.now
            let outcome: Result<HTTPClientResponse, TransportError>
            do { outcome = .success(try await client.send(request)) } catch { outcome = .failure(error) }
            counter.increment()
            events(.exchange(ExchangeRecord(step: step, attempt: attempt, startedAt: startedAt, request: request,
                                            outcome: outcome, duration: (ContinuousClock.now - clock).seconds)))
            if retry.shouldRetry(request, attempt: attempt, outcome: outcome) {
                let delay = retry.delay(after: attempt, response: try? outcome.get())
                let reason = switch outcome {
                case .success(let r): "status \(r.status)"
                case .failure(let e): e.description
                }
                events(.retrying(step: step, attempt: attempt + 1, delay: delay, reason: redactor.text(reason)))
                try await deadline.sleep(delay, during: step)
                attempt += 1
                continue
            }
            switch outcome {
            case .success(let response): return response
            case .failure(let error): throw diagnose(error, request: request, attempts: attempt)
            }
        }
    }

    /// Reports something the user should know (a warning, what a retry did).
    public func note(_ message: String) { events(.note(step: step, message: redactor.text(message))) }

    private func diagnose(_ error: TransportError, request: HTTPClientRequest, attempts: Int) -> Diagnostic {
        let tries = attempts > 1 ? " after \(attempts) attempts" : ""
        let what = "\(request.method) \(redactor.text(request.url))"
        switch error {
        case .unreachable(let m):
            return .unavailable("\(what): cannot connect\(tries): \(redactor.text(m))",
                                hint: "check the base URL and that the service is up (--env local uses the built-in emulator)")
        case .timedOut:
            if let remaining = deadline.remaining, remaining <= 0.05 { return deadline.exceeded(during: step) }
            return .unavailable("\(what): no response within \(FlowRunner.format(request.timeout))s\(tries)",
                                hint: "raise --timeout, or check the service with -v")
        case .connectionLost(let m):
            let safe = RetryPolicy.isSafeToRepeat(request)
            return .unavailable("\(what): connection lost\(tries): \(redactor.text(m))",
                                hint: safe ? "the service may be failing; try again later" :
                                    "the request may have been applied; it was not repeated because it has no idempotency key")
        case .invalidRequest(let m):
            return .data("\(what): \(redactor.text(m))")
        }
    }
}
