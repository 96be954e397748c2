import Foundation
import Testing

@testable import CheckoutKit

/// The transport of a replay: recorded answers in order, the first divergence kept and every later request refused,
/// recorded failures given again, and listeners at the recorded addresses that hear their requests.
@Suite struct ReplayTransportTests {
    static func recording(_ exchanges: [Recording.Exchange], listeners: [String] = []) -> Recording {
        Recording(
            exchanges: exchanges, flow: "f", definition: nil, vars: [:], environment: "local", kind: .local,
            configuration: [:],
            state: nil, listeners: listeners, steps: [], startedAt: nil, driverVersion: "test")
    }

    static func exchange(
        _ method: String, _ path: String, body: String? = nil, status: Int = 200, answer: String = "{}"
    ) -> Recording.Exchange {
        Recording.Exchange(
            step: "step-\(path)", attempt: 1, method: method, url: "http://127.0.0.1:1\(path)",
            contentType: body == nil ? nil : "application/json",
            body: body, answer: .success(HTTPClientResponse(status: status, body: Data(answer.utf8))))
    }

    static func send(
        _ t: ReplayTransport, _ method: String, _ path: String, body: String? = nil,
        by sender: HTTPClientRequest.Sender? = nil
    ) async -> Result<HTTPClientResponse, TransportError> {
        var request = HTTPClientRequest(
            method: method, url: "http://127.0.0.1:2\(path)",
            headers: body == nil ? [:] : ["Content-Type": "application/json"],
            body: body.map { Data($0.utf8) })
        request.sender = sender
        do { return .success(try await t.send(request)) } catch { return .failure(error) }
    }

    @Test func answersInOrderAndEndsMatched() async throws {
        let t = ReplayTransport(
            recording: Self.recording([
                Self.exchange("GET", "/a", answer: #"{"n":1}"#),
                Self.exchange("POST", "/b", body: #"{"x":1}"#, status: 201),
            ]),
            redactor: Redactor())
        #expect(try await Self.send(t, "GET", "/a").get().json == ["n": 1])
        #expect(t.verdict()?.kind == .missing, "one recorded request is still to come")
        #expect(try await Self.send(t, "POST", "/b", body: #"{"x":1}"#).get().status == 201)
        #expect(t.verdict() == nil && t.matched == 2)
    }

    @Test func theFirstDivergenceIsKeptAndEveryLaterRequestRefused() async {
        let t = ReplayTransport(
            recording: Self.recording([Self.exchange("POST", "/b", body: #"{"x":1}"#), Self.exchange("GET", "/c")]),
            redactor: Redactor())
        guard case .failure(.invalidRequest) = await Self.send(t, "POST", "/b", body: #"{"x":2}"#) else {
            Issue.record("a differing body was answered")
            return
        }
        guard case .failure(.invalidRequest) = await Self.send(t, "GET", "/c") else {
            Issue.record("a request after the divergence was answered")
            return
        }
        let verdict = t.verdict()
        #expect(
            verdict
                == Divergence(
                    kind: .differs, request: 1, step: nil,
                    headline: "sent POST /b, which differs from the recorded one",
                    lines: ["$.x: recorded 1, sent 2"]))
    }

    /// The step and attempt that sent a diverging request are this run's; the recording's are said beside them when
    /// they differ, and the recorded answer before it, which this run acted on.
    @Test func aDivergenceNamesWhoSentItAndTheAnswerBefore() async throws {
        let t = ReplayTransport(
            recording: Self.recording([
                Self.exchange("GET", "/a", status: 500), Self.exchange("POST", "/b", body: #"{"x":1}"#),
            ]),
            redactor: Redactor())
        #expect(try await Self.send(t, "GET", "/a", by: .init(step: "step-/a", attempt: 1)).get().status == 500)
        _ = await Self.send(t, "POST", "/b", body: #"{"x":2}"#, by: .init(step: "next", attempt: 3))
        #expect(
            t.verdict()
                == Divergence(
                    kind: .differs, request: 2, step: "next", sentBy: .init(step: "next", attempt: 3),
                    headline:
                        "sent POST /b, which differs from the recorded one, where the recording's was sent by step 'step-/b'",
                    lines: [
                        "after the recorded answer to request 1, sent by step 'step-/a': status 500",
                        "$.x: recorded 1, sent 2",
                    ]))
        #expect(HTTPClientRequest.Sender(step: "next", attempt: 3).description == "step 'next' (attempt 3)")
    }

    @Test func anotherRequestInItsPlaceIsNamed() async {
        let t = ReplayTransport(recording: Self.recording([Self.exchange("GET", "/a")]), redactor: Redactor())
        _ = await Self.send(t, "GET", "/z")
        #expect(t.verdict()?.headline == "sent GET /z, but the recording's request 1 is GET /a, sent by step 'step-/a'")
        #expect(t.verdict()?.lines == ["path: recorded /a, sent /z"])
    }

    @Test func aRequestPastTheRecordingIsExtra() async {
        let t = ReplayTransport(recording: Self.recording([]), redactor: Redactor())
        _ = await Self.send(t, "GET", "/a")
        #expect(
            t.verdict()
                == Divergence(
                    kind: .extra, request: 1, step: nil,
                    headline: "sent GET /a, but the recording ends after 0 requests", lines: []))
    }

    @Test func aRecordedFailureIsGivenAgain() async {
        for (text, expected) in [
            ("timed out: after 1 s", TransportError.timedOut("after 1 s")),
            ("connection lost: reset", .connectionLost("reset")), ("unreachable: refused", .unreachable("refused")),
            ("cancelled: the run was interrupted", .cancelled(sent: true)), ("", .connectionLost("no answer recorded")),
        ] {
            var x = Self.exchange("GET", "/a")
            x.answer = .failure(Recording.failure(text))
            let t = ReplayTransport(recording: Self.recording([x]), redactor: Redactor())
            guard case .failure(let error) = await Self.send(t, "GET", "/a") else {
                Issue.record("\(text): answered")
                continue
            }
            #expect(error == expected, "\(text)")
            #expect(t.verdict() == nil, "a recorded failure is a match")
        }
    }

    @Test func listenersTakeTheRecordedAddressesAndHearTheirRequests() async throws {
        let t = ReplayTransport(
            recording: Self.recording([Self.exchange("GET", "/return?r=1")], listeners: ["http://127.0.0.1:46373"]),
            redactor: Redactor())
        #expect(!t.hearsOutside)
        let heard = Heard()
        let listener = try t.listen("test listener") { request in
            heard.add("\(request.method) \(request.target)")
            return .respond(.text(200, "ok"))
        }
        #expect(listener.baseURL == "http://127.0.0.1:46373")
        let response = try await t.send(HTTPClientRequest(method: "GET", url: "http://127.0.0.1:46373/return?r=1"))
        #expect(response.status == 200)
        #expect(heard.all == ["GET /return?r=1"])
        // One the recording did not have still gets an address (the requests naming it then differ).
        #expect(try t.listen("another") { _ in .reset }.baseURL == "http://127.0.0.1:2")
    }

    final class Heard: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ s: String) { lock.withLock { list.append(s) } }
        var all: [String] { lock.withLock { list } }
    }
}

/// Once every request matched, each step must have ended as recorded.
@Suite struct ReplayVerdictTests {
    static func result(_ steps: [(String, StepResult.Outcome)]) -> FlowResult {
        FlowResult(
            name: "f", environment: "local", startedAt: Date(), duration: 0,
            steps: steps.map {
                StepResult(
                    name: $0.0, isFinally: false, optional: false, outcome: $0.1, startedAt: Date(), duration: 0,
                    requests: 0, polls: 0, status: nil, message: $0.1 == .failed ? "it broke" : nil, output: nil)
            },
            failure: nil, captures: [:])
    }

    static func recording(_ steps: [(String, StepResult.Outcome)]) -> Recording {
        var r = ReplayTransportTests.recording([])
        r.steps = steps.map { Recording.Step(name: $0.0, outcome: $0.1, isFinally: false, output: nil) }
        return r
    }

    @Test func stepsMustEndAsRecorded() {
        let recorded = Self.recording([("a", .passed), ("b", .failed)])
        #expect(
            ReplayVerdict.stepDivergence(Self.result([("a", .passed), ("b", .failed)]), recording: recorded) == nil,
            "a recorded failure that fails again is a match")
        let other = ReplayVerdict.stepDivergence(Self.result([("a", .passed), ("b", .passed)]), recording: recorded)
        #expect(other?.kind == .step && other?.headline == "step 'b' passed, and it failed in the recording")
        #expect(
            ReplayVerdict.stepDivergence(Self.result([("a", .failed), ("b", .failed)]), recording: recorded)?.lines == [
                "this run: it broke"
            ])
        #expect(
            ReplayVerdict.stepDivergence(Self.result([("a", .passed)]), recording: recorded)?.headline
                == "the recording has step 'b', which this run did not reach")
        #expect(
            ReplayVerdict.stepDivergence(Self.result([("a", .passed), ("c", .failed)]), recording: recorded)?.headline
                == "step 'c' ran where the recording has step 'b'")
        #expect(
            ReplayVerdict.stepDivergence(
                Self.result([("a", .passed), ("b", .failed), ("c", .passed)]), recording: recorded)?.headline
                == "step 'c' ran, and the recording has no step after 'b'")
    }

    @Test func aReplaysWebhookEventsAreAllThereWillBe() async {
        // A wait for an event the recording did not get ends at once, not at its timeout.
        let events = BahnWebhookEvents([], complete: true)
        let started = ContinuousClock.now
        #expect(await events.wait(for: "payment_intent.status.succeeded", intent: nil, timeout: 5) == nil)
        #expect(ContinuousClock.now - started < .seconds(2))
        let event = BahnWebhookEvent(body: [
            "id": "evt_1", "type": "t", "data": ["payment_intent": ["id": "pi_1", "status": "succeeded"]],
        ])!
        let service = BahnWebhookService(replaying: [event])
        #expect(await service.events.wait(for: "t", intent: "pi_1", timeout: 5)?.status == "succeeded")
        #expect(service.url == nil)
    }
}
