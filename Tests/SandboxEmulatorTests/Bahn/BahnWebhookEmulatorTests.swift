import Crypto
import Foundation
import LoopbackHTTP
import Synchronization
import TestSupport
import Testing
import Threads
@testable import SandboxEmulator

@Suite struct BahnWebhookTests {
    @Test func webhooksAreSignedAndRetried() throws {
        struct Received: Sendable {
            var body: Data
            var signature: String?
            var contentType: String?
        }
        let log = Mutex<[Received]>([])
        let receiver = try HTTPServer { request in
            let count = log.withLock { log in
                log.append(
                    Received(
                        body: request.body, signature: request.headers["Bn-Signature"],
                        contentType: request.headers["Content-Type"]))
                return log.count
            }
            // The first delivery is refused, so the emulator must retry.
            return .respond(HTTPResponse(status: count == 1 ? 500 : 200))
        }
        receiver.start()
        defer { receiver.shutdown() }

        try withEmulator { emulator, client in
            emulator.bahn.addWebhookTarget(id: "test", url: receiver.baseURL + "/hooks/bahn")
            let id = try client.createIntent(amount: 8000)
            #expect(try client.confirm(id, token: try TestApplePayToken.make().json).status == 200)
            #expect(eventually { emulator.bahn.events().first?.status == .delivered })
            let event = try #require(emulator.bahn.events().first)
            #expect(event.deliveries.map(\.target) == ["test"])
            #expect(event.deliveries.first?.attempts.map(\.httpStatus) == [500, 200])

            let received = log.withLock { $0 }
            #expect(received.count == 2)
            for delivery in received {
                #expect(delivery.body == event.body)
                #expect(delivery.contentType == "application/json")
                let header = try #require(delivery.signature)
                let fields = Dictionary(
                    uniqueKeysWithValues: header.split(separator: ",").map {
                        let kv = $0.split(separator: "=", maxSplits: 1)
                        return (String(kv[0]), String(kv[1]))
                    })
                let t = try #require(fields["t"])
                let expected = HMAC.sha256(
                    key: Data(TestCredentials.bahnWebhookSecret.utf8), message: Data("\(t).".utf8) + delivery.body)
                #expect(fields["v1"] == expected.hexString)
                #expect(abs(Double(t)! - Date().timeIntervalSince1970) < 300)
            }
            let json = try #require(try JSONSerialization.jsonObject(with: received[0].body) as? [String: Any])
            #expect(json["type"] as? String == "payment_intent.status.succeeded")
            #expect((json["id"] as? String)?.hasPrefix("evt_") == true)
            let data = try #require(json["data"] as? [String: Any])
            #expect((data["payment_intent"] as? [String: Any])?["id"] as? String == id)

            let listed = try rawRequest(port: client.port, method: "GET", path: "/_sandbox/bahn/events").json
            let events = try #require(listed["events"] as? [[String: Any]])
            #expect(events.first?["status"] as? String == "delivered")
            let deliveries = try #require(events.first?["deliveries"] as? [[String: Any]])
            #expect(deliveries.count == 1 && deliveries.first?["url"] as? String == receiver.baseURL + "/hooks/bahn")
            #expect((deliveries.first?["attempts"] as? [Any])?.count == 2)
        }
    }

    /// Deliveries to one listener ride one kept-alive connection; one the listener closed meanwhile (its idle timeout,
    /// or `Connection: close`) is not used again, and the next event still arrives at its first attempt.
    @Test(arguments: [false, true])
    func deliveriesKeepTheirConnection(listenerCloses: Bool) throws {
        let connections = Mutex<[Int]>([])
        let receiver = try HTTPServer(limits: ServerLimits(idleTimeout: 1)) { request in
            connections.withLock { $0.append(request.connectionID) }
            return .respond(HTTPResponse(status: 200, headers: listenerCloses ? ["Connection": "close"] : [:]))
        }
        receiver.start()
        defer { receiver.shutdown() }
        try withEmulator { emulator, client in
            emulator.bahn.addWebhookTarget(id: "test", url: receiver.baseURL + "/hooks/bahn")
            for round in 1...3 {
                let id = try client.createIntent(amount: 8000)
                #expect(try client.confirm(id, token: try TestApplePayToken.make().json).status == 200)
                #expect(
                    eventually {
                        emulator.bahn.events().count == round
                            && emulator.bahn.events().allSatisfy { $0.status == .delivered }
                    })
            }
            // The listener's idle timeout closes the kept connection; the poster notices before it writes.
            Thread.sleep(forTimeInterval: 2)
            let id = try client.createIntent(amount: 8000)
            #expect(try client.confirm(id, token: try TestApplePayToken.make().json).status == 200)
            #expect(
                eventually {
                    emulator.bahn.events().count == 4 && emulator.bahn.events().allSatisfy { $0.status == .delivered }
                })
            #expect(emulator.bahn.events().allSatisfy { $0.deliveries.first?.attempts.count == 1 })
        }
        let seen = connections.withLock { $0 }
        #expect(seen.count == 4)
        if listenerCloses {
            #expect(Set(seen).count == 4)
        } else {
            #expect(Set(seen.prefix(3)).count == 1, "the first three rode one connection")
            #expect(seen[3] != seen[0], "a closed connection is not used again")
        }
    }

    @Test func withoutAURLEventsAreRecordedNotSent() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 8000)
            #expect(
                try client.confirm(id, token: try TestApplePayToken.make().json).intent["status"] as? String
                    == "succeeded")
            #expect(emulator.bahn.events().map(\.status) == [.notSent])
        }
    }
}

/// Webhook targets are a set: every target gets every event; one that never answers is dropped.
@Suite struct BahnWebhookTargetTests {
    @Test func everyTargetGetsEveryEventAndADeadOneIsDropped() throws {
        let received = Locked<[String]>([])
        let receiver = try HTTPServer { request in
            received.withLock { $0.append(request.path) }
            return .respond(HTTPResponse(status: 200))
        }
        receiver.start()
        defer { receiver.shutdown() }
        // A port nobody listens on: bind one, note it, close it.
        let dead = try HTTPServer { _ in .respond(HTTPResponse(status: 200)) }
        let deadURL = dead.baseURL + "/gone"
        dead.shutdown()

        let webhooks = BahnWebhooks(url: nil, retryDelays: [0.01, 0.01])
        webhooks.add(.init(id: "a", url: receiver.baseURL + "/a"))
        webhooks.add(.init(id: "b", url: receiver.baseURL + "/b"))
        webhooks.add(.init(id: "dead", url: deadURL))
        webhooks.emit(type: "payment_intent.status.succeeded", paymentIntent: ["id": "pi_1"], intentID: "pi_1")
        webhooks.emit(type: "payment_intent.status.succeeded", paymentIntent: ["id": "pi_2"], intentID: "pi_2")
        #expect(eventually { received.withLock { $0.count } == 4 })
        #expect(received.withLock { $0 }.filter { $0 == "/a" }.count == 2)
        #expect(received.withLock { $0 }.filter { $0 == "/b" }.count == 2)
        #expect(eventually { webhooks.targets.map(\.id) == ["a", "b"] }, "the target that never answered is gone")
        // Each event's delivery to the dead target ends failed, once its retries are spent (one may still be retrying
        // when the target is dropped).
        let failed = { webhooks.events().flatMap(\.deliveries).filter { $0.target == "dead" } }
        #expect(eventually { failed().count == 2 && failed().allSatisfy { $0.status == .failed } }, "\(failed())")

        // Removing a target stops its deliveries; re-adding an id points it at the new URL.
        #expect(webhooks.remove(id: "a"))
        #expect(!webhooks.remove(id: "a"))
        webhooks.add(.init(id: "b", url: receiver.baseURL + "/b2"))
        webhooks.emit(type: "payment_intent.canceled", paymentIntent: ["id": "pi_3"], intentID: "pi_3")
        #expect(eventually { received.withLock { $0 }.contains("/b2") })
        #expect(webhooks.events().last?.deliveries.map(\.target) == ["b"])
    }

    /// Events are kept as the request log keeps requests: the latest `BahnRules.eventsKept`, read in pages by id; an
    /// event no longer kept can be neither paged from nor resent.
    @Test func theLatestEventsAreKeptAndReadInPages() throws {
        let webhooks = BahnWebhooks(url: nil)
        let ids = (0..<BahnRules.eventsKept + 5).map { n in
            webhooks.emit(
                type: "payment_intent.status.succeeded", paymentIntent: ["id": .string("pi_\(n)")], intentID: "pi_\(n)")
        }
        let kept = webhooks.events()
        #expect(kept.count == BahnRules.eventsKept && kept.first?.id == ids[5] && kept.last?.id == ids.last)
        let first = try #require(webhooks.page(ListPage(limit: 3)))
        #expect(first.events.map(\.id) == Array(ids[5..<8]) && first.hasMore)
        let next = try #require(webhooks.page(ListPage(limit: 3, since: ids[7])))
        #expect(next.events.map(\.id) == Array(ids[8..<11]))
        let end = try #require(webhooks.page(ListPage(limit: 3, since: ids[ids.count - 2])))
        #expect(end.events.map(\.id) == [ids[ids.count - 1]] && !end.hasMore)
        #expect(webhooks.page(ListPage(since: ids[4])) == nil, "a dropped event names no place to page from")
        #expect(!webhooks.resend(id: ids[4]) && webhooks.resend(id: ids[5]))
        #expect(webhooks.events().first?.deliveries.isEmpty == true, "resent to no target: still none")
    }

    /// A batch shares one target: an intent's events reach it in order, and a delivery that hangs holds back only the
    /// events of its own lane, not every other run's.
    @Test func oneTargetTakesOtherIntentsEventsWhileADeliveryHangs() throws {
        let release = DispatchSemaphore(value: 0)
        let received = Mutex<[String]>([])
        let receiver = try HTTPServer(workers: 4) { request in
            let text = String(decoding: request.body, as: UTF8.self)
            if text.contains("pi_slow") && text.contains("processing") { release.wait() }
            // One entry in one step: handlers run at once, and two steps would let another's entry come between.
            let label =
                (text.contains("succeeded") ? "succeeded" : "processing")
                + (text.contains("pi_slow") ? " slow" : " other")
            received.withLock { $0.append(label) }
            return .respond(HTTPResponse(status: 200))
        }
        receiver.start()
        defer { receiver.shutdown() }
        let webhooks = BahnWebhooks(url: nil, retryDelays: [0.01])
        webhooks.add(.init(id: "batch", url: receiver.baseURL + "/hooks"))
        webhooks.emit(type: "payment_intent.status.processing", paymentIntent: ["id": "pi_slow"], intentID: "pi_slow")
        webhooks.emit(type: "payment_intent.status.succeeded", paymentIntent: ["id": "pi_slow"], intentID: "pi_slow")
        // Other intents, on the other lanes at least: one of them is not behind the hanging delivery.
        for n in 0..<BahnWebhooks.lanes {
            webhooks.emit(
                type: "payment_intent.status.succeeded", paymentIntent: ["id": .string("pi_\(n)")], intentID: "pi_\(n)")
        }
        #expect(
            eventually { received.withLock { $0 }.contains("succeeded other") },
            "another intent's event arrived meanwhile")
        #expect(
            !received.withLock { $0 }.contains("succeeded slow"), "the slow intent's second event waits for its first")
        release.signal()
        #expect(
            eventually {
                received.withLock { $0 }.filter { $0.hasSuffix(" slow") } == ["processing slow", "succeeded slow"]
            })
    }
}
