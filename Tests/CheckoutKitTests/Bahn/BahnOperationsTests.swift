import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutKit

/// The Bahn operations run as flow steps, end to end against the emulator.
@Suite struct BahnOperationsTests {
    @Test func aLostConfirmResponseIsRetriedUnderTheSameKeyAndReplaysWithoutASecondCharge() async throws {
        let rig = try BahnRig(faults: "POST /api/payment_intents/*/confirm => drop @1")
        let result = try await rig.run(BahnRig.paySteps(order: "555"))
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.step("confirm")?.outcome == .passed)
        let intent = try #require(result.captures["intent"]?.stringValue)

        let confirms = rig.confirmRequests
        #expect(confirms.count == 2)
        #expect(Set(confirms.compactMap { $0.headers["Bn-Idempotency-Key"] }) == ["order-555-applepay"])
        #expect(confirms.allSatisfy { $0.headers.values("Bn-Idempotency-Key").count == 1 })
        let requestIDs = confirms.compactMap { $0.headers["Bn-Request-Id"] }
        #expect(
            requestIDs.count == 2 && requestIDs[0] != requestIDs[1], "a fresh Bn-Request-Id per attempt: \(requestIDs)")
        // Every attempt is the engine's own (traced, retried by its policy), none a transport's silent resend.
        let attempts = rig.events.exchanges.filter { $0.step == "confirm" && $0.request.url.hasSuffix("/confirm") }
        #expect(attempts.map(\.attempt) == [1, 2])
        #expect(attempts.compactMap { $0.request.headers["Bn-Request-Id"] } == requestIDs)
        #expect(rig.events.retries.map(\.step) == ["confirm"])
        // The retry repeats the very same body (the JWS differs: ES256 signatures are randomised).
        #expect(try ReceivedJWS(confirms[0].body).payload == ReceivedJWS(confirms[1].body).payload)

        let movements = rig.emulator.ledger.entries().filter { $0.reference == intent }
        #expect(movements.map(\.kind) == [.authorization, .capture])
        let output = try #require(result.step("confirm")?.output)
        #expect(output["payment_intent"]?["status"] == "succeeded")
        #expect(
            rig.events.all.contains { if case .note(_, let m) = $0 { m.contains("replayed") } else { false } },
            "the replay is reported")
    }

    /// Re-sending a spent token under the key it went out with is a replay: Bahn answers with the original response.
    @Test func aLaterInvocationWithTheSpentTokenUnderItsKeyReplays() async throws {
        let rig = try BahnRig()
        let first = try await rig.run(BahnRig.paySteps(order: "900"))
        #expect(first.passed, "\(String(describing: first.failure))")
        let tokenFile = try #require(first.captures["token_file"]?.stringValue)
        let intent = try #require(first.captures["intent"]?.stringValue)

        let again = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"900","tokenFile":"\#(tokenFile)"}}"#)
        #expect(again.passed, "\(String(describing: again.failure))")
        #expect(
            rig.confirmRequests.map { $0.headers["Bn-Idempotency-Key"] } == [
                "order-900-applepay", "order-900-applepay",
            ])
        #expect(rig.events.all.contains { if case .note(_, let m) = $0 { m.contains("replayed") } else { false } })
        #expect(
            rig.emulator.ledger.entries().filter { $0.reference == intent }.map(\.kind) == [.authorization, .capture])

        // The same holds with the key given explicitly.
        let explicit = try await rig.run(
            #"""
            {"name":"confirm","use":"bahn.confirm","with":{"orderId":"900","tokenFile":"\#(tokenFile)","idempotencyKey":"order-900-applepay"}}
            """#)
        #expect(explicit.passed, "\(String(describing: explicit.failure))")
        #expect(rig.emulator.ledger.entries().filter { $0.reference == intent }.count == 2)
    }

    /// Under any other key a spent token would be a second charge attempt: refused before anything is sent, with a
    /// hint the user can follow (the key that replays).
    @Test func theSpentTokenUnderANewKeyIsRefusedBeforeAnythingIsSent() async throws {
        let rig = try BahnRig()
        let first = try await rig.run(BahnRig.paySteps(order: "902"))
        #expect(first.passed, "\(String(describing: first.failure))")
        let tokenFile = try #require(first.captures["token_file"]?.stringValue)
        let intent = try #require(first.captures["intent"]?.stringValue)
        let sent = rig.bahnRequests.count
        let stateBefore = try rig.stateFile()

        let second = try await rig.run(
            #"""
            {"name":"confirm","use":"bahn.confirm","with":{"orderId":"902","tokenFile":"\#(tokenFile)","idempotencyKey":"another-key"}}
            """#)
        let failure = try #require(second.failure)
        #expect(failure.code == .dataError, "\(failure)")
        #expect(failure.message.contains("already confirmed under idempotency key order-902-applepay"), "\(failure)")
        #expect(
            failure.hint?.contains("--idempotency-key order-902-applepay") == true,
            "\(String(describing: failure.hint))")
        #expect(rig.bahnRequests.count == sent, "nothing reaches Bahn")
        // The refusal changed nothing: the token still carries the key that replays.
        let after = try #require(try rig.stateFile()["bahn"] as? [String: Any])
        let txid = try #require(first.captures["txid"]?.stringValue)
        #expect(
            ((after["tokens"] as? [String: Any])?[txid] as? [String: Any])?["idempotencyKey"] as? String
                == "order-902-applepay")
        #expect(
            NSDictionary(dictionary: after) == NSDictionary(dictionary: stateBefore["bahn"] as? [String: Any] ?? [:]))
        #expect(rig.movements(intent) == [.authorization, .capture])
    }

    /// Without the state file (another machine, a wiped state), the order-keyed default still replays.
    @Test func aRepeatedConfirmUnderTheOrderKeyReplaysTheOriginalResponse() async throws {
        let rig = try BahnRig()
        let first = try await rig.run(BahnRig.paySteps(order: "901"))
        #expect(first.passed, "\(String(describing: first.failure))")
        let tokenFile = try #require(first.captures["token_file"]?.stringValue)
        let intent = try #require(first.captures["intent"]?.stringValue)

        let freshState = StateStore(path: rig.directory + "/other-state.json")
        let again = try await rig.run(
            #"""
            {"name":"confirm","use":"bahn.confirm","with":{"intent":"\#(intent)","orderId":"901","tokenFile":"\#(tokenFile)"}}
            """#, state: freshState)
        #expect(again.passed, "\(String(describing: again.failure))")
        let confirms = rig.confirmRequests
        #expect(confirms.count == 2)
        #expect(confirms.map { $0.headers["Bn-Idempotency-Key"] } == ["order-901-applepay", "order-901-applepay"])
        #expect(
            rig.emulator.ledger.entries().filter { $0.reference == intent }.map(\.kind) == [.authorization, .capture])
        #expect(again.step("confirm")?.output?["payment_intent"]?["status"] == "succeeded")
    }

    @Test func confirmingAnOrderWithoutAnIntentOrAmountIsAUsageErrorNamingAmount() async throws {
        let rig = try BahnRig()
        let token = try rig.makeToken(amount: 8000)
        let result = try await rig.run(
            #"{"name":"confirm","use":"bahn.confirm","with":{"orderId":"42","tokenFile":"\#(token.path)"}}"#)
        let failure = try #require(result.failure)
        #expect(failure.code == .usage, "\(failure)")
        #expect(failure.message.contains("42"))
        #expect(failure.hint?.contains("--amount") == true, "\(failure)")
        #expect(rig.bahnRequests.isEmpty)
        #expect(try BahnState(store: rig.state).spentTransactions().isEmpty, "a refused confirm spends nothing")
    }

    @Test func confirmingANewOrderWithItsAmountCreatesTheIntentFirst() async throws {
        let rig = try BahnRig()
        let token = try rig.makeToken(amount: 8000)
        let result = try await rig.run(
            #"""
            {"name":"confirm","use":"bahn.confirm",
             "with":{"orderId":"43","tokenFile":"\#(token.path)","amount":8000,"currency":"VND","description":"Order #43"}}
            """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        let posts = rig.bahnRequests.filter { $0.method == "POST" }
        #expect(posts.count == 2)
        let create = try #require(posts.first)
        #expect(create.path == "/api/payment_intents")
        #expect(create.headers["Bn-Idempotency-Key"] == "order-43-create")
        let body = try ReceivedJWS(create.body).payloadObject
        #expect(body["amount"] as? Int == 8000)
        #expect(body["currency"] as? String == "704")
        #expect(body["metadata"] as? [String: String] == ["order_id": "43"])

        let confirm = try #require(posts.last)
        #expect(confirm.path.hasSuffix("/confirm"))
        #expect(confirm.headers["Bn-Idempotency-Key"] == "order-43-applepay")
        let output = try #require(result.step("confirm")?.output)
        let intent = try #require(output["payment_intent"]?["id"]?.stringValue)
        #expect(confirm.path == "/api/payment_intents/\(intent)/confirm")
        #expect(output["summary"]?["status"] == "succeeded")
        #expect(output["summary"]?["last4"] == "1234")
        #expect(output["summary"]?["wallet"] == "apple_pay")
        #expect(output["summary"]?["dynamicLast4"] == .string(String(PaymentTokenMaker.testDPAN.suffix(4))))
    }

    @Test func captureAndCancelAreSignedPostsUnderTheirOwnKeys() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            BahnRig.paySteps(order: "60", confirmExtra: #","captureMethod":"manual""#) + #"""
                ,{"name":"capture","use":"bahn.capture","with":{"intent":"${vars.intent}"}},
                 {"name":"cancel-too-late","use":"bahn.cancel","with":{"intent":"${vars.intent}"},"optional":true}
                """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        #expect(result.step("confirm")?.output?["payment_intent"]?["status"] == "requires_capture")
        #expect(result.step("capture")?.output?["payment_intent"]?["status"] == "succeeded")
        #expect(result.step("cancel-too-late")?.outcome == .failed)
        #expect(
            rig.requests("POST", suffix: "/capture").map { $0.headers["Bn-Idempotency-Key"] } == [
                "intent-\(intent)-capture"
            ])
        #expect(
            rig.requests("POST", suffix: "/cancel").map { $0.headers["Bn-Idempotency-Key"] } == [
                "intent-\(intent)-cancel"
            ])
        #expect(
            rig.emulator.ledger.entries().filter { $0.reference == intent }.map(\.kind) == [.authorization, .capture])
    }

    // MARK: awaitWebhook

    @Test func awaitWebhookReturnsTheVerifiedEventForTheIntent() async throws {
        let rig = try BahnRig()
        let inbox = try BahnWebhookInbox(secret: TestCredentials.bahnWebhookSecret)
        inbox.start()
        defer { Thread.detachNewThread { inbox.shutdown() } }
        rig.emulator.bahn.addWebhookTarget(id: "inbox", url: inbox.url)

        let result = try await rig.run(
            BahnRig.paySteps(order: "70") + #"""
                ,{"name":"webhook","use":"bahn.awaitWebhook",
                  "with":{"type":"payment_intent.status.succeeded","intent":"${vars.intent}","timeout":5}}
                """#, services: RunServices(started: [BahnWebhookService(inbox: inbox, removeTarget: nil)]))
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        let output = try #require(result.step("webhook")?.output)
        #expect(output["type"] == "payment_intent.status.succeeded")
        #expect(output["intent"] == .string(intent))
        #expect(output["status"] == "succeeded")
        let sent = rig.emulator.bahn.events().filter {
            $0.type == "payment_intent.status.succeeded" && $0.paymentIntentID == intent
        }
        #expect(sent.count == 1)
        #expect(output["id"] == .string(sent.first?.id ?? "?"))
    }

    @Test func awaitWebhookFailsAfterItsTimeoutWhenEveryDeliveryIsRejected() async throws {
        let rig = try BahnRig()
        let rejections = Box<[String]>([])
        let inbox = try BahnWebhookInbox(
            secret: "whsec_not_the_emulators",
            onRejected: { reason in rejections.withLock { $0.append(reason) } })
        inbox.start()
        defer { Thread.detachNewThread { inbox.shutdown() } }
        rig.emulator.bahn.addWebhookTarget(id: "inbox", url: inbox.url)

        let started = ContinuousClock.now
        let result = try await rig.run(
            BahnRig.paySteps(order: "71") + #"""
                ,{"name":"webhook","use":"bahn.awaitWebhook",
                  "with":{"type":"payment_intent.status.succeeded","intent":"${vars.intent}","timeout":0.4}}
                """#, services: RunServices(started: [BahnWebhookService(inbox: inbox, removeTarget: nil)]))
        let failure = try #require(result.failure)
        #expect(failure.code == .failure, "\(failure)")
        #expect(result.step("webhook")?.outcome == .failed)
        #expect(result.step("confirm")?.outcome == .passed)
        #expect(failure.message.contains("payment_intent.status.succeeded"))
        #expect(failure.message.contains("0.4"), "\(failure)")
        #expect(try #require(result.step("webhook")).duration >= 0.4)
        #expect(ContinuousClock.now - started < .seconds(5))

        #expect(await eventually { !rejections.withLock { $0.isEmpty } })
        #expect(
            rejections.withLock { $0 }.allSatisfy { $0.contains("does not match") }, "\(rejections.withLock { $0 })")
        #expect(inbox.received.isEmpty)
        #expect(
            await eventually {
                rig.emulator.bahn.events().contains {
                    $0.deliveries.contains { $0.attempts.contains { $0.httpStatus == 400 } }
                }
            }, "the emulator saw the 400")
    }

    @Test func awaitWebhookWithoutAListenerIsAConfigurationError() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            #"{"name":"webhook","use":"bahn.awaitWebhook","with":{"type":"payment_intent.status.succeeded","timeout":0.1}}"#
        )
        #expect(result.failure?.code == .configuration)
        #expect(result.failure?.hint?.contains("BAHN_WEBHOOK_SECRET") == true)
    }
}
