import Crypto
import Foundation
import LoopbackHTTP
import Synchronization
import TestSupport
import Testing
import Threads

@testable import SandboxEmulator

@Suite struct BahnAuthTests {
    @Test func apiKeyAndRequestIDAreChecked() throws {
        try withEmulator { emulator, client in
            let path = "/api/payment_intents/pi_X"
            var r = try rawRequest(
                port: client.port, method: "GET", path: path, headers: [("Bn-Request-Id", UUID().uuidString)])
            #expect(
                r.status == 401 && r.errorCode == "invalid_api_key"
                    && r.error["type"] as? String == "authentication_error")
            #expect(r.error["param"] is NSNull)
            r = try rawRequest(
                port: client.port, method: "GET", path: path,
                headers: [("Bn-Api-Key", "wrong"), ("Bn-Request-Id", UUID().uuidString)])
            #expect(r.status == 401 && r.errorCode == "invalid_api_key")
            r = try rawRequest(
                port: client.port, method: "GET", path: path, headers: [("Bn-Api-Key", TestCredentials.bahnAPIKey)])
            #expect(r.status == 400 && r.errorCode == "missing_request_id")
            r = try rawRequest(
                port: client.port, method: "GET", path: path,
                headers: [("Bn-Api-Key", TestCredentials.bahnAPIKey), ("Bn-Request-Id", "not-a-uuid")])
            #expect(r.status == 400 && r.errorCode == "missing_request_id")
            r = try client.get(path)
            #expect(r.status == 404 && r.errorCode == "resource_missing")
        }
    }

    @Test func postFramingAndJWSAreChecked() throws {
        try withEmulator { emulator, client in
            let path = "/api/payment_intents"
            let payload = Data(#"{"amount":8000,"currency":"704"}"#.utf8)
            func send(_ headers: [(String, String)], _ body: String) throws -> RawResponse {
                try rawRequest(port: client.port, method: "POST", path: path, headers: headers, body: Data(body.utf8))
            }
            let good = BahnTestClient.standardHeaders(post: true)
            let base = good.filter { $0.0 != "Content-Type" && $0.0 != "Bn-Jose-Method" }

            var r = try send(
                base + [("Content-Type", "application/json"), ("Bn-Jose-Method", "jws")], BahnTestClient.jws(payload))
            #expect(r.status == 415 && r.errorCode == "invalid_content_type")
            r = try send(base + [("Content-Type", "application/jose")], BahnTestClient.jws(payload))
            #expect(r.status == 400 && r.errorCode == "invalid_jose_method")

            r = try send(good, "not a jws")
            #expect(r.status == 401 && r.errorCode == "invalid_signature")
            #expect((r.error["message"] as? String)?.contains("Malformed JWS") == true)

            r = try send(good, BahnTestClient.jws(payload, header: #"{"alg":"HS256"}"#))
            #expect(r.status == 401 && r.errorCode == "invalid_signature")
            #expect((r.error["message"] as? String)?.contains("alg") == true)

            r = try send(good, BahnTestClient.jws(payload, header: #"{"alg":"ES256","kid":"someone-else"}"#))
            #expect(r.status == 401 && (r.error["message"] as? String)?.contains("kid") == true)

            r = try send(good, BahnTestClient.jws(payload, key: P256PrivateKey()))
            #expect(r.status == 401 && (r.error["message"] as? String)?.contains("signature does not verify") == true)

            // A kid is optional.
            r = try send(good, BahnTestClient.jws(payload, header: #"{"alg":"ES256"}"#))
            #expect(r.status == 200)
            #expect(emulator.ledger.entries().isEmpty)
        }
    }
}

@Suite struct BahnPaymentIntentTests {
    @Test func createValidatesAndReturnsTheIntent() throws {
        try withEmulator { _, client in
            let path = "/api/payment_intents"
            var r = try client.post(path, ["amount": 0, "currency": "704"])
            #expect(r.status == 400 && r.errorCode == "parameter_invalid" && r.error["param"] as? String == "amount")
            r = try client.post(path, ["amount": "8000", "currency": "704"])
            #expect(r.status == 400 && r.error["param"] as? String == "amount")
            // `true` is not an amount, and 1 is one (JSONSerialization's NSNumber cannot tell them apart by `is Bool`).
            r = try client.post(path, ["amount": true, "currency": "704"])
            #expect(r.status == 400 && r.error["param"] as? String == "amount")
            r = try client.post(path, ["amount": 12.5, "currency": "704"])
            #expect(r.status == 400 && r.error["param"] as? String == "amount")
            r = try client.post(path, ["amount": 1, "currency": "704"])
            #expect(r.status == 200 && r.intent["amount"] as? Int == 1, "\(r.status) \(r.error)")
            r = try client.post(path, ["amount": 8000, "currency": "VND"])
            #expect(r.status == 400 && r.errorCode == "parameter_invalid" && r.error["param"] as? String == "currency")
            r = try client.post(path, ["amount": 8000])
            #expect(r.status == 400 && r.errorCode == "parameter_missing" && r.error["param"] as? String == "currency")
            r = try client.post(path, ["amount": 8000, "currency": "704", "metadata": ["n": 1]])
            #expect(r.status == 400 && r.error["param"] as? String == "metadata")

            r = try client.post(
                path,
                ["amount": 8000, "currency": "704", "description": "Order #1234", "metadata": ["order_id": "1234"]])
            #expect(r.status == 200)
            let intent = r.intent
            let id = try #require(intent["id"] as? String)
            #expect(id.wholeMatch(of: /pi_[0-9A-HJKMNP-TV-Z]{26}/) != nil)
            #expect((intent["client_secret"] as? String)?.hasPrefix("pi_secret_") == true)
            #expect(intent["status"] as? String == "requires_payment_method")
            #expect(intent["amount"] as? Int == 8000 && intent["currency"] as? String == "704")
            #expect((intent["metadata"] as? [String: String]) == ["order_id": "1234"])
            #expect(try client.get("/api/payment_intents/\(id)").intent["id"] as? String == id)
        }
    }

    @Test func confirmSucceedsAndRecordsAuthorizationAndCapture() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 8000)
            let token = try TestApplePayToken.make(amount: 8000, pan: "4817499999994242")
            let r = try client.confirm(id, token: token.json)
            #expect(r.status == 200)
            #expect(r.intent["status"] as? String == "succeeded")
            #expect((r.intent["latest_charge_id"] as? String)?.hasPrefix("ch_") == true)
            let kinds = emulator.ledger.entries().map(\.kind)
            #expect(kinds == [.authorization, .capture])
            #expect(
                emulator.ledger.entries().allSatisfy {
                    $0.provider == "bahn" && $0.reference == id && $0.amount == 8000
                })

            let pm = try #require(r.intent["payment_method_id"] as? String)
            let method = try client.get("/api/payment_methods/\(pm)").json
            #expect(method["id"] as? String == pm && method["type"] as? String == "card")
            let card = try #require(method["card"] as? [String: Any])
            #expect(card["brand"] as? String == "visa" && card["last4"] as? String == "1234")
            let network = try #require(card["network_token"] as? [String: Any])
            #expect(
                network["dynamic_last4"] as? String == "4242"
                    && network["token_requestor_id"] as? String == "40010030273")
            let wallet = try #require(card["wallet"] as? [String: Any])
            #expect(wallet["type"] as? String == "apple_pay")
            #expect(
                (wallet["assurance_details"] as? [String: Bool]) == [
                    "account_verified": true, "card_holder_authenticated": true,
                ])
        }
    }

    @Test func manualCaptureAndCancel() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 8000)
            var r = try client.confirm(id, token: try TestApplePayToken.make().json, manual: true)
            #expect(r.intent["status"] as? String == "requires_capture")
            #expect(emulator.ledger.entries().map(\.kind) == [.authorization])
            r = try client.post("/api/payment_intents/\(id)/capture", [:])
            #expect(r.status == 200 && r.intent["status"] as? String == "succeeded")
            #expect(emulator.ledger.entries().map(\.kind) == [.authorization, .capture])
            r = try client.post("/api/payment_intents/\(id)/capture", [:])
            #expect(r.status == 400 && r.errorCode == "payment_intent_unexpected_state")
            r = try client.post("/api/payment_intents/\(id)/cancel", [:])
            #expect(r.status == 400 && r.errorCode == "payment_intent_unexpected_state")

            let second = try client.createIntent(amount: 8000)
            #expect(
                try client.confirm(second, token: try TestApplePayToken.make().json, manual: true).intent["status"]
                    as? String == "requires_capture")
            r = try client.post("/api/payment_intents/\(second)/cancel", [:])
            #expect(r.status == 200 && r.intent["status"] as? String == "canceled")
            #expect(emulator.ledger.entries().filter { $0.reference == second }.map(\.kind) == [.authorization, .void])
            r = try client.post("/api/payment_intents/pi_NOPE/capture", [:])
            #expect(r.status == 404 && r.errorCode == "resource_missing")
        }
    }

    @Test func declineAmount() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 5100)
            let r = try client.confirm(id, token: try TestApplePayToken.make(amount: 5100).json)
            #expect(r.status == 402 && r.error["type"] as? String == "card_error" && r.errorCode == "card_declined")
            #expect(r.error["decline_code"] as? String == "insufficient_funds")
            let intent = try client.get("/api/payment_intents/\(id)").intent
            #expect(intent["status"] as? String == "requires_payment_method")
            let error = try #require(intent["last_payment_error"] as? [String: String])
            #expect(
                error["code"] == "card_declined" && error["decline_code"] == "insufficient_funds"
                    && error["message"] != nil)
            #expect(emulator.ledger.entries().isEmpty)
            #expect(emulator.bahn.events().map(\.type) == ["payment_intent.payment_failed"])
        }
    }

    @Test func processingThenSucceeded() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 5200)
            let r = try client.confirm(id, token: try TestApplePayToken.make(amount: 5200).json)
            #expect(r.status == 200 && r.intent["status"] as? String == "processing")
            #expect(emulator.ledger.entries().isEmpty)
            #expect(
                try eventually {
                    try client.get("/api/payment_intents/\(id)").intent["status"] as? String == "succeeded"
                })
            #expect(emulator.ledger.entries().map(\.kind) == [.authorization, .capture])
            #expect(
                emulator.bahn.events().map(\.type) == [
                    "payment_intent.status.processing", "payment_intent.status.succeeded",
                ])
        }
    }

    @Test func processingThenFailed() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 5300)
            let r = try client.confirm(id, token: try TestApplePayToken.make(amount: 5300).json)
            #expect(r.intent["status"] as? String == "processing")
            #expect(
                try eventually {
                    try client.get("/api/payment_intents/\(id)").intent["last_payment_error"] is [String: String]
                })
            #expect(
                try client.get("/api/payment_intents/\(id)").intent["status"] as? String == "requires_payment_method")
            #expect(emulator.ledger.entries().isEmpty)
            #expect(
                emulator.bahn.events().map(\.type) == [
                    "payment_intent.status.processing", "payment_intent.payment_failed",
                ])
        }
    }
}

@Suite struct BahnConfirmRulesTests {
    @Test func idempotentReplay() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 8000)
            let token = try TestApplePayToken.make().json
            let first = try client.confirm(id, token: token, key: "order-1234-applepay")
            // Re-signed (ES256 is randomised, so the JWS differs) but the same payload.
            let second = try client.confirm(id, token: token, key: "order-1234-applepay")
            #expect(first.status == 200 && second.status == 200)
            #expect(first.body == second.body)
            #expect(second.headers["Bn-Idempotent-Replayed"] == "true")
            #expect(first.headers["Bn-Idempotent-Replayed"] == nil)
            #expect(emulator.ledger.entries().count == 2)
            #expect(emulator.bahn.events().count == 1)

            // Same key, different payload.
            let other = try client.confirm(id, token: try TestApplePayToken.make().json, key: "order-1234-applepay")
            #expect(other.status == 400 && other.error["type"] as? String == "idempotency_error")
            #expect(other.errorCode == "idempotency_key_reused")
            // Same key, same payload, different route.
            let elsewhere = try client.post(
                "/api/payment_intents/\(id)/cancel",
                ["payment_method_data": ["apple_pay": ["token": token]]],
                idempotencyKey: "order-1234-applepay")
            #expect(elsewhere.errorCode == "idempotency_key_reused")
        }
    }

    @Test func errorsReplayToo() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 5100)
            let token = try TestApplePayToken.make(amount: 5100).json
            let first = try client.confirm(id, token: token, key: "k-decline")
            let again = try client.confirm(id, token: token, key: "k-decline")
            #expect(first.status == 402 && again.status == 402 && first.body == again.body)
            #expect(again.headers["Bn-Idempotent-Replayed"] == "true")
            #expect(emulator.bahn.events().count == 1)
        }
    }

    @Test func concurrentRequestsWithOneKeyRunOnce() throws {
        try withEmulator { emulator, client in
            let id = try client.createIntent(amount: 8000)
            let token = try TestApplePayToken.make().json
            let statuses = Mutex<[Int]>([])
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                let status = (try? client.confirm(id, token: token, key: "race"))?.status ?? -1
                statuses.withLock { $0.append(status) }
            }
            // Each loser either waited for the stored response (replay, 200) or was told the key is in flight (409).
            let all = statuses.withLock { $0 }
            #expect(all.filter { $0 == 200 }.count >= 1 && all.allSatisfy { $0 == 200 || $0 == 409 })
            #expect(emulator.ledger.entries().count == 2)
        }
    }

    @Test func confirmNeedsAnIdempotencyKey() throws {
        try withEmulator { _, client in
            let id = try client.createIntent(amount: 8000)
            let r = try client.post(
                "/api/payment_intents/\(id)/confirm",
                ["payment_method_data": ["apple_pay": ["token": try TestApplePayToken.make().json]]])
            #expect(r.status == 400 && r.errorCode == "missing_idempotency_key")
        }
    }

    @Test func tokenReuseAndMismatchAndBadTokens() throws {
        try withEmulator { emulator, client in
            let token = try TestApplePayToken.make(amount: 8000)
            let a = try client.createIntent(amount: 8000)
            let b = try client.createIntent(amount: 8000)
            #expect(try client.confirm(a, token: token.json).status == 200)
            let reused = try client.confirm(b, token: token.json)
            #expect(reused.status == 400 && reused.errorCode == "apple_pay_token_already_used")

            let mismatch = try client.confirm(b, token: try TestApplePayToken.make(amount: 9000).json)
            #expect(mismatch.status == 400 && mismatch.errorCode == "apple_pay_amount_mismatch")
            let currency = try client.confirm(b, token: try TestApplePayToken.make(amount: 8000, currency: "840").json)
            #expect(currency.errorCode == "apple_pay_amount_mismatch")

            let wrapped = try client.confirm(b, token: try TestApplePayToken.make().bytes.base64EncodedString())
            #expect(wrapped.status == 400 && wrapped.errorCode == "apple_pay_token_malformed")
            var tampered = try TestApplePayToken.make()
            tampered.data = tampered.data.changingByte(at: 3)
            let invalid = try client.confirm(b, token: tampered.json)
            #expect(invalid.errorCode == "apple_pay_token_invalid")
            #expect((invalid.error["message"] as? String)?.contains("exact bytes") == true)
            let foreign = try client.confirm(
                b, token: try TestApplePayToken.make(merchantIdentifier: "merchant.other").json)
            #expect(foreign.errorCode == "apple_pay_decryption_failed")

            let both = try client.post(
                "/api/payment_intents/\(b)/confirm",
                ["payment_method_data": ["apple_pay": ["token": token.json], "card": ["number": "4242"]]],
                idempotencyKey: "both")
            #expect(both.status == 400 && both.errorCode == "parameter_invalid")
            #expect((both.error["message"] as? String)?.contains("google_pay") == true)
            #expect(emulator.ledger.entries().count == 2)  // only intent a moved money
        }
    }
}
