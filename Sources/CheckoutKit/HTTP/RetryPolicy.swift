import Foundation

/// The one retry policy. A request is retried only when doing so cannot move money twice: it is
/// idempotent by method, it carries an idempotency key (the same key on every attempt), or it provably
/// never reached the server. Delays grow exponentially with jitter; `429` honours `Retry-After`.
public struct RetryPolicy: Sendable, Equatable {
    /// Total attempts, the first included.
    public var attempts: Int
    /// Delay before the second attempt, in seconds.
    public var interval: Double
    /// Factor applied to the delay after each attempt.
    public var backoff: Double
    public var maxDelay: Double
    /// ± fraction of each delay drawn at random, so that parallel runners do not retry in lockstep.
    public var jitter: Double

    public init(
        attempts: Int = 3, interval: Double = 0.2, backoff: Double = 2, maxDelay: Double = 10, jitter: Double = 0.2
    ) {
        self.attempts = max(1, attempts)
        self.interval = max(0, interval)
        self.backoff = max(1, backoff)
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
    }

    public static let `default` = RetryPolicy()
    public static let never = RetryPolicy(attempts: 1)

    /// Headers whose presence makes a non-idempotent request safe to repeat.
    public static let idempotencyHeaders = ["Idempotency-Key", "Bn-Idempotency-Key"]
    static let idempotentMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]
    /// Statuses that say "not now" rather than "no".
    static let transientStatuses: Set<Int> = [408, 425, 429, 500, 502, 503, 504]
    /// Answers that do not say whether the request took effect: every 5xx, whatever its body. An internal error may
    /// come half-way, a bad gateway or a gateway timeout after the origin acted — and a 503 from a proxy in front of
    /// the service says nothing of what the service did. Every other status is an answer.
    static let indeterminateStatuses = Set(500...599)

    /// Whether an attempt that ended so may have taken effect without saying so: the request went out and what came
    /// back does not tell. The one classifier behind the retry loop's bookkeeping, the engine's diagnoses and the
    /// providers' reading of answers; operations that move money read back when it holds.
    public static func leavesOutcomeOpen(_ outcome: Result<HTTPClientResponse, TransportError>) -> Bool {
        switch outcome {
        case .success(let response): indeterminateStatuses.contains(response.status)
        case .failure(.invalidRequest): false
        case .failure(let error): !error.requestNeverSent
        }
    }

    /// Whether an answer settles what the request did (so that an earlier lost attempt no longer matters): anything
    /// but a status that means "not now". With an idempotency key, such an answer is the replay of the first one.
    static func settles(_ outcome: Result<HTTPClientResponse, TransportError>) -> Bool {
        if case .success(let response) = outcome {
            return !transientStatuses.contains(response.status) && !indeterminateStatuses.contains(response.status)
        }
        return false
    }

    public static func isSafeToRepeat(_ request: HTTPClientRequest) -> Bool {
        request.readOnly || request.idempotent || idempotentMethods.contains(request.method)
            || idempotencyHeaders.contains { request.headers[$0] != nil }
    }

    /// Whether the request may go out on a kept-alive connection. A kept connection the server closed just as the
    /// request went out loses the request's answer (libcurl's own resend is refused, see `CurlTransport`), which leaves
    /// what it did open — so only requests whose repeat is harmless take that chance: reads, and writes that carry an
    /// idempotency key in a header. A mutation without one (Centra's and Braintree's GraphQL mutations, Afterpay's
    /// capture) gets a fresh connection, and an answer it cannot lose that way.
    public static func mayReuseConnection(_ request: HTTPClientRequest) -> Bool {
        request.readOnly || idempotentMethods.contains(request.method)
            || idempotencyHeaders.contains { request.headers[$0] != nil }
    }

    /// Whether attempt number `attempt` (1-based) that ended in `outcome` should be followed by another.
    public func shouldRetry(
        _ request: HTTPClientRequest, attempt: Int,
        outcome: Result<HTTPClientResponse, TransportError>
    ) -> Bool {
        guard attempt < attempts else { return false }
        switch outcome {
        case .success(let response) where Self.isGarbledRead(request, response):
            return true
        case .success(let response):
            // A 429 says the request was not taken, so even a request without an idempotency key may go again.
            return Self.transientStatuses.contains(response.status)
                && (Self.isSafeToRepeat(request) || response.status == 429)
        case .failure(let error):
            switch error {
            // Asking again changes none of these: a malformed request, a proxy that wants credentials or will not
            // open the tunnel, a certificate this machine does not trust.
            case .invalidRequest, .proxyRefused, .tlsRefused: return false
            default: return error.requestNeverSent || Self.isSafeToRepeat(request)
            }
        }
    }

    /// A read that asked for JSON and got a body that is not JSON (a proxy's error page, a body garbled on the way): a
    /// passing fault, and a read is safe to ask again — an approval poll must not end a run the customer approved.
    static func isGarbledRead(_ request: HTTPClientRequest, _ response: HTTPClientResponse) -> Bool {
        (request.readOnly || request.method == "GET")
            && request.headers["Accept"].map { Bytes.occurs(Self.json, in: Array($0.lowercased().utf8)) } == true
            && !response.body.isEmpty && (try? response.parsedBody().get()) == nil
    }

    /// (Looked for as bytes: Foundation's `contains` went through `NSString` for every answer to a read.)
    private static let json = Array("json".utf8)

    /// Seconds to wait after attempt number `attempt` (1-based).
    public func delay(after attempt: Int, response: HTTPClientResponse?) -> Double {
        if let response, let retryAfter = response.headers["Retry-After"].flatMap(Self.parseRetryAfter) {
            return min(retryAfter, max(maxDelay, 60))
        }
        let base = min(interval * pow(backoff, Double(attempt - 1)), maxDelay)
        guard jitter > 0, base > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter))
    }

    /// `Retry-After` is either delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
    static func parseRetryAfter(_ value: String) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed) { return max(0, seconds) }
        guard let date = Timestamp.httpDate(trimmed) else { return nil }
        return max(0, date.timeIntervalSinceNow)
    }
}
