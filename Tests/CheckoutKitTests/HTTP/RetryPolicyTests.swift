import Foundation
import Synchronization
import Testing

@testable import CheckoutKit

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(attempts: 3)
    let unavailable = Result<HTTPClientResponse, TransportError>.success(HTTPClientResponse(status: 503))

    func request(_ method: String, _ headers: HTTPHeaders = [:]) -> HTTPClientRequest {
        HTTPClientRequest(method: method, url: "http://127.0.0.1/x", headers: headers)
    }

    @Test func safetyRules() {
        for method in ["GET", "PUT", "DELETE", "HEAD"] {
            #expect(policy.shouldRetry(request(method), attempt: 1, outcome: unavailable))
        }
        #expect(!policy.shouldRetry(request("POST"), attempt: 1, outcome: unavailable))
        #expect(!policy.shouldRetry(request("PATCH"), attempt: 1, outcome: unavailable))
        #expect(policy.shouldRetry(request("POST", ["Idempotency-Key": "k"]), attempt: 1, outcome: unavailable))
        #expect(policy.shouldRetry(request("POST", ["bn-idempotency-key": "k"]), attempt: 1, outcome: unavailable))
        // A request that never reached the server may always be repeated; a lost one only when safe.
        #expect(policy.shouldRetry(request("POST"), attempt: 1, outcome: .failure(.unreachable("refused"))))
        #expect(!policy.shouldRetry(request("POST"), attempt: 1, outcome: .failure(.connectionLost("reset"))))
        #expect(!policy.shouldRetry(request("POST"), attempt: 1, outcome: .failure(.timedOut("slow"))))
        #expect(policy.shouldRetry(request("GET"), attempt: 1, outcome: .failure(.timedOut("slow"))))
        #expect(!policy.shouldRetry(request("GET"), attempt: 1, outcome: .failure(.invalidRequest("bad url"))))
    }

    /// A 429 says the request was not taken: even a mutation with no idempotency key (Centra's) may go again. A read
    /// sent as POST (a GraphQL query) is as safe to repeat as a GET.
    @Test func aRefusedForNowRequestAndAReadOnlyPostMayGoAgain() {
        #expect(policy.shouldRetry(request("POST"), attempt: 1, outcome: .success(HTTPClientResponse(status: 429))))
        #expect(!policy.shouldRetry(request("POST"), attempt: 1, outcome: .success(HTTPClientResponse(status: 502))))
        let query = HTTPClientRequest(method: "POST", url: "http://127.0.0.1/graphql", readOnly: true)
        #expect(policy.shouldRetry(query, attempt: 1, outcome: unavailable))
        #expect(policy.shouldRetry(query, attempt: 1, outcome: .failure(.connectionLost("reset"))))
        #expect(RetryPolicy.isSafeToRepeat(query) && !RetryPolicy.isSafeToRepeat(request("POST")))
    }

    /// Which requests may ride a kept-alive connection: reads and writes keyed in a header; a write keyed only in its
    /// body (Afterpay's capture) or not at all (a GraphQL mutation) gets a fresh connection.
    @Test func onlyReadsAndHeaderKeyedWritesReuseAConnection() {
        #expect(RetryPolicy.mayReuseConnection(request("GET")))
        #expect(RetryPolicy.mayReuseConnection(request("POST", ["Bn-Idempotency-Key": "k"])))
        #expect(RetryPolicy.mayReuseConnection(request("POST", ["idempotency-key": "k"])))
        #expect(
            RetryPolicy.mayReuseConnection(
                HTTPClientRequest(method: "POST", url: "http://127.0.0.1/graphql", readOnly: true)))
        #expect(!RetryPolicy.mayReuseConnection(request("POST")))
        #expect(!RetryPolicy.mayReuseConnection(request("PATCH")))
        let capture = HTTPClientRequest(method: "POST", url: "http://127.0.0.1/v2/payments/capture", idempotent: true)
        #expect(RetryPolicy.isSafeToRepeat(capture) && !RetryPolicy.mayReuseConnection(capture))
    }

    @Test func onlyTransientStatusesAndOnlyWithinTheAttempts() {
        #expect(!policy.shouldRetry(request("GET"), attempt: 1, outcome: .success(HTTPClientResponse(status: 404))))
        #expect(!policy.shouldRetry(request("GET"), attempt: 1, outcome: .success(HTTPClientResponse(status: 200))))
        #expect(policy.shouldRetry(request("GET"), attempt: 1, outcome: .success(HTTPClientResponse(status: 429))))
        #expect(policy.shouldRetry(request("GET"), attempt: 2, outcome: unavailable))
        #expect(!policy.shouldRetry(request("GET"), attempt: 3, outcome: unavailable))
        #expect(!RetryPolicy.never.shouldRetry(request("GET"), attempt: 1, outcome: unavailable))
    }

    /// Every 5xx says nothing of what the request did (a 503 from a proxy included), and none settles an earlier
    /// attempt.
    @Test(arguments: [500, 501, 502, 503, 504, 507, 520, 599])
    func everyServerErrorLeavesTheOutcomeOpen(status: Int) {
        let answer: Result<HTTPClientResponse, TransportError> = .success(HTTPClientResponse(status: status))
        #expect(RetryPolicy.leavesOutcomeOpen(answer))
        #expect(!RetryPolicy.settles(answer))
        #expect(!RetryPolicy.leavesOutcomeOpen(.success(HTTPClientResponse(status: 402))), "a 4xx is an answer")
        #expect(RetryPolicy.settles(.success(HTTPClientResponse(status: 402))))
    }

    /// An attempt that may have acted keeps the outcome open through the attempts after it, even when the last answer
    /// is only "not now" (a 429 settles nothing): a lost first attempt followed by rate limits is open, never "did
    /// nothing".
    @Test func anEarlierAttemptThatMayHaveActedKeepsTheOutcomeOpen() async throws {
        final class Scripted: HTTPClient {
            let outcomes = Mutex<[Result<HTTPClientResponse, TransportError>]>([
                .failure(.connectionLost("reset after the request went out")),
                .success(HTTPClientResponse(status: 429, headers: ["Retry-After": "0"])),
                .success(HTTPClientResponse(status: 429, headers: ["Retry-After": "0"])),
            ])
            func send(_ request: HTTPClientRequest) async throws(TransportError) -> HTTPClientResponse {
                try outcomes.withLock { $0.removeFirst() }.get()
            }
        }
        let keyed = request("POST", ["Idempotency-Key": "k-1"])
        let last = try await RetryPolicy(attempts: 3, interval: 0.01, backoff: 1, jitter: 0)
            .exchange(client: Scripted(), deadline: Deadline(seconds: nil), during: "pay") { _ in keyed }
        #expect(last.attempts == 3)
        #expect((try? last.outcome.get())?.status == 429)
        #expect(last.outcomeOpen, "the first attempt may have paid")
    }

    @Test func retryAfterSeconds() {
        let response = HTTPClientResponse(status: 429, headers: ["Retry-After": "7"])
        #expect(policy.delay(after: 1, response: response) == 7)
        #expect(RetryPolicy.parseRetryAfter(" 0 ") == 0)
        #expect(RetryPolicy.parseRetryAfter("soon") == nil)
        // Capped: a server cannot park the driver for an hour.
        #expect(
            policy.delay(after: 1, response: HTTPClientResponse(status: 429, headers: ["Retry-After": "3600"])) == 60)
    }

    @Test func retryAfterHTTPDate() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let inFive = formatter.string(from: Date().addingTimeInterval(5))
        let seconds = try #require(RetryPolicy.parseRetryAfter(inFive))
        #expect(seconds > 3 && seconds <= 5)
        #expect(RetryPolicy.parseRetryAfter(formatter.string(from: Date().addingTimeInterval(-60))) == 0)
    }

    @Test func exponentialGrowthWithinJitterBounds() {
        let p = RetryPolicy(attempts: 10, interval: 0.2, backoff: 2, maxDelay: 10, jitter: 0.2)
        for attempt in 1...4 {
            let base = 0.2 * pow(2, Double(attempt - 1))
            let samples = (0..<200).map { _ in p.delay(after: attempt, response: nil) }
            #expect(samples.allSatisfy { $0 >= base * 0.8 - 1e-9 && $0 <= base * 1.2 + 1e-9 })
            #expect(Set(samples).count > 1, "jitter should vary the delay")
        }
        #expect((0..<50).allSatisfy { _ in p.delay(after: 9, response: nil) <= 12 })
        let exact = RetryPolicy(attempts: 5, interval: 0.1, backoff: 3, jitter: 0)
        #expect(exact.delay(after: 1, response: nil) == 0.1)
        #expect(abs(exact.delay(after: 3, response: nil) - 0.9) < 1e-9)
    }

    /// A response's body is parsed once for it and its copies (a read's answer is checked for a garbled body before its
    /// reader parses it), and parsed afresh once the body is changed.
    @Test func aResponseBodyIsParsedOnceAndAgainWhenItChanges() throws {
        let request = HTTPClientRequest(
            method: "GET", url: "http://127.0.0.1/x", headers: ["Accept": "application/json"])
        var response = HTTPClientResponse(status: 200, body: Data(#"{"a":1}"#.utf8))
        #expect(!RetryPolicy.isGarbledRead(request, response))
        let copy = response
        #expect(copy.json == ["a": 1])
        response.body = Data("<html>a proxy's page</html>".utf8)
        #expect(
            response.json == nil && RetryPolicy.isGarbledRead(request, response), "the changed body is parsed again")
        #expect(copy.json == ["a": 1], "a copy keeps its own body's parse")
        guard case .failure(let error) = response.parsedBody() else {
            Issue.record("parsed")
            return
        }
        #expect(error.description.isEmpty == false)
        response.body = Data()
        #expect(response.json == nil && !RetryPolicy.isGarbledRead(request, response), "an empty body is not garbled")
    }

    /// A read is garbled when it asked for JSON — however the header spells it — and got a body that is not JSON.
    @Test(arguments: [
        ("application/json", true), ("Application/JSON; charset=utf-8", true), ("application/problem+json", true),
        ("text/html", false), ("*/*", false),
    ])
    func aGarbledReadIsOneThatAskedForJSON(accept: String, garbled: Bool) {
        let request = HTTPClientRequest(method: "GET", url: "http://127.0.0.1/x", headers: ["Accept": accept])
        let response = HTTPClientResponse(status: 200, body: Data("<html>a proxy's page</html>".utf8))
        #expect(RetryPolicy.isGarbledRead(request, response) == garbled)
    }
}
