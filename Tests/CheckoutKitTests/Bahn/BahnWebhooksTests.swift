import Foundation
import SandboxEmulator
import Testing

@testable import CheckoutKit

/// `Bn-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, 300 s tolerance.
@Suite struct BahnWebhookSignatureTests {
    static let secret = "whsec_test_secret"
    static let body = Data(#"{"id":"evt_1","type":"payment_intent.status.succeeded"}"#.utf8)
    static let t = 1_700_000_000
    static let now = Date(timeIntervalSince1970: TimeInterval(t))
    /// Computed independently: printf '%s' '1700000000.<body>' | openssl dgst -sha256 -hmac whsec_test_secret
    static let expected = "80aa16032e4867d80044bd47f535615bfe700362f828cfa122b99e152ca37fb8"

    func problem(_ header: String?, body: Data = body, secret: String = secret, at now: Date = now) -> String? {
        BahnWebhookSignature.problem(body: body, header: header, secret: secret, now: now)
    }

    @Test func signMatchesAnIndependentHMAC() {
        #expect(BahnWebhookSignature.sign(body: Self.body, timestamp: Self.t, secret: Self.secret) == Self.expected)
    }

    @Test func aGoodSignatureIsAccepted() {
        #expect(problem("t=\(Self.t),v1=\(Self.expected)") == nil)
        #expect(problem("t=\(Self.t), v1=\(Self.expected.uppercased())") == nil, "blanks and hex case do not matter")
    }

    @Test func aWrongSecretOrAnAlteredBodyIsRejected() {
        #expect(problem("t=\(Self.t),v1=\(Self.expected)", secret: "whsec_other")?.contains("does not match") == true)
        var altered = Self.body
        altered.append(0x20)
        #expect(problem("t=\(Self.t),v1=\(Self.expected)", body: altered)?.contains("does not match") == true)
        // The timestamp is signed too.
        let shifted = Self.t + 1
        #expect(problem("t=\(shifted),v1=\(Self.expected)")?.contains("does not match") == true)
    }

    @Test func staleAndFutureTimestampsAreRejectedOutsideTheTolerance() {
        let header = "t=\(Self.t),v1=\(Self.expected)"
        #expect(problem(header, at: Self.now.addingTimeInterval(299)) == nil)
        #expect(problem(header, at: Self.now.addingTimeInterval(-299)) == nil)
        // Each says which: signed too long ago, or dated ahead of this clock.
        #expect(
            problem(header, at: Self.now.addingTimeInterval(301))
                == "stale signature: signed 301 s ago, beyond the 300 s tolerance (a replayed or long-delayed delivery)"
        )
        #expect(
            problem(header, at: Self.now.addingTimeInterval(-301))
                == "signature dated 301 s in the future, beyond the 300 s tolerance (the sender's clock or this machine's is off)"
        )
        #expect(
            BahnWebhookSignature.problem(
                body: Self.body, header: header, secret: Self.secret,
                now: Self.now.addingTimeInterval(301), tolerance: 400) == nil)
    }

    @Test func malformedHeadersAreRejected() {
        #expect(problem(nil)?.contains("missing") == true)
        #expect(problem("")?.contains("missing") == true)
        for header in [
            "garbage", "t=\(Self.t)", "v1=\(Self.expected)", "t=soon,v1=\(Self.expected)",
            "t\(Self.t)v1\(Self.expected)",
        ] {
            #expect(problem(header)?.contains("malformed") == true, "\(header)")
        }
        #expect(problem("v1=\(Self.expected)")?.hasSuffix("no t=<unix seconds> timestamp") == true)
        #expect(problem("t=\(Self.t)")?.hasSuffix("no v1=<hex> signature") == true)
        #expect(problem("t=\(Self.t),v1=\(Self.expected.dropLast())") != nil, "a truncated signature")
    }

    @Test func oneMatchingV1AmongSeveralIsEnough() {
        let wrong = String(repeating: "0", count: 64)
        #expect(problem("t=\(Self.t),v1=\(wrong),v1=\(Self.expected)") == nil)
        #expect(problem("t=\(Self.t),v1=\(Self.expected),v1=\(wrong)") == nil)
        #expect(problem("t=\(Self.t),v0=\(Self.expected),v1=\(wrong)") != nil, "only v1 counts")
        #expect(problem("t=\(Self.t),v1=\(wrong),v1=\(wrong.dropLast())") != nil)
    }
}

/// The inbox over real HTTP: verified, deduplicated by event id, rejected with 400 when unsigned.
@Suite struct BahnWebhookInboxTests {
    static let secret = TestCredentials.bahnWebhookSecret

    static func event(id: String, intent: String = "pi_1") -> Data {
        Data(
            #"{"id":"\#(id)","type":"payment_intent.status.succeeded","created":1,"data":{"payment_intent":{"id":"\#(intent)","status":"succeeded"}}}"#
                .utf8)
    }

    func post(
        _ body: Data, to inbox: BahnWebhookInbox, secret: String = secret
    ) async throws -> (status: Int, json: JSON?) {
        let t = Int(Date().timeIntervalSince1970)
        let signature = BahnWebhookSignature.sign(body: body, timestamp: t, secret: secret)
        let request = HTTPClientRequest(
            method: "POST", url: inbox.url,
            headers: ["Content-Type": "application/json", "Bn-Signature": "t=\(t),v1=\(signature)"],
            body: body, timeout: 5)
        let response = try await CurlTransport(options: .direct).send(request)
        return (response.status, try? JSON.parse(response.body))
    }

    @Test func goodDeliveriesAreStoredOnceAndDuplicatesAcknowledged() async throws {
        let seen = Box<[String]>([])
        let rejected = Box<[String]>([])
        let inbox = try BahnWebhookInbox(
            secret: Self.secret,
            onEvent: { (event: CheckoutKit.BahnWebhookEvent) in seen.withLock { $0.append(event.id) } },
            onRejected: { reason in rejected.withLock { $0.append(reason) } })
        inbox.start()
        defer { Thread.detachNewThread { inbox.shutdown() } }

        let first = try await post(Self.event(id: "evt_A"), to: inbox)
        #expect(first.status == 200)
        #expect(first.json == ["received": true, "duplicate": false])
        let duplicate = try await post(Self.event(id: "evt_A"), to: inbox)
        #expect(duplicate.status == 200)
        #expect(duplicate.json?["duplicate"] == true)
        let other = try await post(Self.event(id: "evt_B", intent: "pi_2"), to: inbox)
        #expect(other.json?["duplicate"] == false)

        #expect(inbox.received.map(\.id) == ["evt_A", "evt_B"])
        #expect(inbox.received.first?.intentID == "pi_1")
        #expect(inbox.received.first?.status == "succeeded")
        #expect(seen.withLock { $0 } == ["evt_A", "evt_B"], "onEvent once per new event")
        #expect(rejected.withLock { $0 }.isEmpty)
        let found = await inbox.events.wait(for: "payment_intent.status.succeeded", intent: "pi_2", timeout: 0)
        #expect(found?.id == "evt_B")
    }

    @Test func aBadSignatureIsRejectedWith400AndNotStored() async throws {
        let rejected = Box<[String]>([])
        let seen = Box<Int>(0)
        let inbox = try BahnWebhookInbox(
            secret: Self.secret,
            onEvent: { (_: CheckoutKit.BahnWebhookEvent) in seen.withLock { $0 += 1 } },
            onRejected: { reason in rejected.withLock { $0.append(reason) } })
        inbox.start()
        defer { Thread.detachNewThread { inbox.shutdown() } }

        let response = try await post(Self.event(id: "evt_X"), to: inbox, secret: "whsec_forged")
        #expect(response.status == 400)
        #expect(response.json?["error"]?.stringValue?.contains("does not match") == true)
        #expect(inbox.received.isEmpty)
        #expect(seen.withLock { $0 } == 0)
        #expect(rejected.withLock { $0 }.count == 1)

        // Signed but not a Bahn event.
        let notAnEvent = try await post(Data(#"{"hello":"world"}"#.utf8), to: inbox)
        #expect(notAnEvent.status == 400)
        #expect(rejected.withLock { $0 }.count == 2)
        #expect(inbox.received.isEmpty)
    }
}

/// A batch holds one inbox from run to run: a run looks at the events that came since it started, never at an earlier
/// run's, with or without an intent to wait for.
@Suite struct BahnWebhookEventsTests {
    @Test func aRunLooksOnlyAtEventsSinceItStarted() async {
        let events = BahnWebhookEvents()
        let earlier = BahnWebhookEvent(body: [
            "id": "evt_1", "type": "payment_intent.status.succeeded",
            "data": ["payment_intent": ["id": "pi_1", "status": "succeeded"]],
        ])!
        events.add(earlier)
        let start = events.count
        #expect(start == 1)
        #expect(await events.wait(for: "payment_intent.status.succeeded", intent: nil, timeout: 0, from: start) == nil)
        #expect(
            await events.wait(for: "payment_intent.status.succeeded", intent: "pi_1", timeout: 0, from: start) == nil)
        #expect(await events.wait(for: "payment_intent.status.succeeded", intent: nil, timeout: 0)?.id == "evt_1")
        events.add(
            BahnWebhookEvent(body: [
                "id": "evt_2", "type": "payment_intent.status.succeeded",
                "data": ["payment_intent": ["id": "pi_2", "status": "succeeded"]],
            ])!)
        #expect(
            await events.wait(for: "payment_intent.status.succeeded", intent: nil, timeout: 0, from: start)?.id
                == "evt_2")
        #expect(
            await events.wait(for: "payment_intent.status.succeeded", intent: "pi_2", timeout: 0, from: start)?.id
                == "evt_2")
    }
}
