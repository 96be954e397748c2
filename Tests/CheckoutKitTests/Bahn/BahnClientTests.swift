import Crypto
import Foundation
import LoopbackHTTP
import SandboxEmulator
import Testing
import TestSupport

@testable import CheckoutKit

/// What goes on the wire to Bahn: JWS bodies, the documented headers, and the token's exact bytes.
@Suite struct BahnClientTests {
    /// Bahn's response key is read once per process, from a file as from a PEM given inline: the runs of a batch do not
    /// each parse it again (a file gone since is no matter), and a value that cannot be read is refused every time.
    @Test func theResponseKeyIsReadOncePerProcess() throws {
        let scratch = try TestSupport.Scratch()
        let key = P256PrivateKey().publicKey.pemRepresentation
        let path = try scratch.write("bahn-response.pem", key)
        let first = try BahnClient.loadResponseKey(path)
        #expect(first == (try VerifyingKey(pem: key)))
        try FileManager.default.removeItem(atPath: path)
        #expect(try BahnClient.loadResponseKey(path) == first)
        let missing = scratch.path + "/never.pem"
        for _ in 0..<2 {
            #expect(throws: Diagnostic.self) { try BahnClient.loadResponseKey(missing) }
        }
    }

    @Test func createAndConfirmBodiesAreES256CompactJWSVerifyingWithTheRegisteredKey() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(BahnRig.paySteps(order: "1234"))
        #expect(result.passed, "\(String(describing: result.failure))")

        let publicKey = try VerifyingKey(pem: TestCredentials.bahnClientPublicKeyPEM)
        let posts = rig.bahnRequests.filter { $0.method == "POST" }
        #expect(
            posts.map(\.path) == [
                "/api/payment_intents", "/api/payment_intents/\(result.captures["intent"]?.stringValue ?? "?")/confirm",
            ])
        for request in posts {
            let jws = try ReceivedJWS(request.body)
            #expect(jws.header.count == 2, "header is exactly {alg, kid}: \(jws.header)")
            #expect(jws.header["alg"] as? String == "ES256")
            #expect(jws.header["kid"] as? String == TestCredentials.bahnKeyID)
            #expect(jws.signature.count == 64, "ES256 is the 64-byte R||S, not DER")
            #expect(publicKey.verify(signature: jws.signature, message: jws.signingInput))
            // The same signature must not verify over anything else.
            #expect(!publicKey.verify(signature: jws.signature, message: jws.signingInput + Data("x".utf8)))
        }
        let create = try ReceivedJWS(try #require(posts.first).body).payloadObject
        #expect(create["amount"] as? Int == 8000)
        #expect(create["currency"] as? String == "704")
        #expect(create["description"] as? String == "Order #1234")
        #expect(create["metadata"] as? [String: String] == ["order_id": "1234"])
    }

    @Test func withoutAKeyIDTheHeaderIsAlgOnly() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"VND"}}"#,
            env: ["BAHN_KEY_ID": ""])
        #expect(result.passed, "\(String(describing: result.failure))")
        let jws = try ReceivedJWS(try #require(rig.createRequests.first).body)
        #expect(jws.header.count == 1)
        #expect(jws.header["alg"] as? String == "ES256")
    }

    @Test func anRSASigningKeySignsRS256AndTheUnregisteredKeyIsAConfigurationError() async throws {
        let rig = try BahnRig()
        let rsa = RSAPrivateKey(bits: 2048)
        let result = try await rig.run(
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"VND"}}"#,
            env: ["BAHN_SIGNING_KEY": rsa.pemRepresentation])
        let failure = try #require(result.failure)
        #expect(failure.code == .configuration, "\(failure)")
        #expect(failure.message.contains("invalid_signature"), "\(failure)")
        #expect(failure.hint == BahnProtocol.hint(forCode: "invalid_signature", type: nil))
        #expect(failure.hint?.contains("BAHN_SIGNING_KEY") == true)

        let requests = rig.createRequests
        #expect(requests.count == 1, "a 401 is not retried")
        let jws = try ReceivedJWS(try #require(requests.first).body)
        #expect(jws.header["alg"] as? String == "RS256")
        #expect(jws.header["kid"] as? String == TestCredentials.bahnKeyID)
        #expect(VerifyingKey.rs256(rsa.publicKey).verify(signature: jws.signature, message: jws.signingInput))
        #expect(
            !(try VerifyingKey(pem: TestCredentials.bahnClientPublicKeyPEM)).verify(
                signature: jws.signature, message: jws.signingInput))
    }

    @Test func theSigningKeyMayBeAPathToAPEMFile() async throws {
        let rig = try BahnRig()
        let keyPath = rig.directory + "/bahn-client.pem"
        try TestCredentials.bahnClientPrivateKeyPEM.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let step = #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"VND"}}"#
        let result = try await rig.run(step, env: ["BAHN_SIGNING_KEY": keyPath])
        #expect(result.passed, "\(String(describing: result.failure))")

        let missing = try await rig.run(step, env: ["BAHN_SIGNING_KEY": rig.directory + "/nope.pem"])
        #expect(missing.failure?.code == .configuration)
        #expect(missing.failure?.message.contains("nope.pem") == true)
        #expect(rig.createRequests.count == 1, "nothing is sent without a usable key")
    }

    @Test func everyRequestCarriesExactlyTheDocumentedHeaders() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(
            BahnRig.paySteps(order: "1234") + #"""
                ,{"name":"poll","use":"bahn.getIntent","with":{"intent":"${vars.intent}"}},
                 {"name":"anonymous","use":"bahn.createIntent","with":{"amount":100,"currency":"VND"}}
                """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        let intent = try #require(result.captures["intent"]?.stringValue)
        let requests = rig.bahnRequests
        // create, confirm, its payment method, the poll, the anonymous create.
        #expect(requests.map(\.method) == ["POST", "POST", "GET", "GET", "POST"])

        let bahnHeaderNames = { (request: HTTPRequest) -> [String] in
            request.headers.fields.map { $0.name.lowercased() }.filter { $0.hasPrefix("bn-") }.sorted()
        }
        for request in requests {
            #expect(request.headers.values("Bn-Api-Key") == [TestCredentials.bahnAPIKey])
            let ids = request.headers.values("Bn-Request-Id")
            #expect(ids.count == 1 && UUID(uuidString: ids[0]) != nil, "Bn-Request-Id is one UUID: \(ids)")
            if request.method == "POST" {
                #expect(request.headers.values("Content-Type") == ["application/jose"])
                #expect(request.headers.values("Bn-Jose-Method") == ["jws"])
                #expect(request.headers.values("Bn-Idempotency-Key").count == 1)
                #expect(
                    bahnHeaderNames(request) == ["bn-api-key", "bn-idempotency-key", "bn-jose-method", "bn-request-id"])
            } else {
                #expect(request.body.isEmpty, "a GET has no body")
                #expect(request.headers["Bn-Idempotency-Key"] == nil)
                #expect(request.headers["Content-Type"] == nil)
            }
        }
        #expect(
            Set(requests.compactMap { $0.headers["Bn-Request-Id"] }).count == requests.count,
            "a fresh request id per request")

        #expect(requests[0].headers["Bn-Idempotency-Key"] == "order-1234-create")
        #expect(requests[1].path == "/api/payment_intents/\(intent)/confirm")
        #expect(requests[1].headers["Bn-Idempotency-Key"] == "order-1234-applepay")
        #expect(requests[3].path == "/api/payment_intents/\(intent)")
        // Without an order, create still gets a key (fresh per invocation, so its own retries replay).
        let anonymousKey = try #require(requests[4].headers["Bn-Idempotency-Key"])
        #expect(
            anonymousKey.hasPrefix("create-") && UUID(uuidString: String(anonymousKey.dropFirst(7))) != nil,
            "\(anonymousKey)")
    }

    @Test func theTokenArrivesAsTheFilesExactBytes() async throws {
        let rig = try BahnRig()
        let result = try await rig.run(BahnRig.paySteps(order: "77"))
        #expect(result.passed, "\(String(describing: result.failure))")
        let path = try #require(result.captures["token_file"]?.stringValue)
        let fileBytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let confirm = try #require(rig.confirmRequests.first)
        let received = try ReceivedJWS(confirm.body).appleToken()
        #expect(received == fileBytes)
        // Sent as a JSON string inside the object, never base64-wrapped.
        #expect(try ReceivedJWS(confirm.body).payloadObject.count == 1)
    }

    /// PassKit's bytes are not the only JSON spelling a file can hold: reordered keys, blanks, CRLF, tabs and an
    /// escaped solidus must all reach Bahn unchanged, since Bahn checks Apple's signature over what it receives.
    @Test func aHandCraftedTokenFileArrivesByteForByte() async throws {
        let rig = try BahnRig()
        let made = try rig.makeToken(amount: 8000).token
        let object = try #require(try JSONSerialization.jsonObject(with: made.bytes) as? [String: Any])
        let header = try #require(object["header"] as? [String: String])
        let data = try #require(object["data"] as? String)
        let signature = try #require(object["signature"] as? String)
        let escapedSolidus = { (s: String) in s.replacingOccurrences(of: "/", with: #"\/"#) }
        let text =
            "{\r\n\t\"version\" : \"EC_v1\",\r\n  \"header\":{ \"transactionId\" :\"\(header["transactionId"]!)\",\n"
            + "    \"publicKeyHash\": \"\(escapedSolidus(header["publicKeyHash"]!))\", \"ephemeralPublicKey\":\"\(header["ephemeralPublicKey"]!)\"},\n"
            + "  \"signature\":\t\"\(signature)\" ,\n  \"data\": \"\(escapedSolidus(data))\"\n}\n"
        let crafted = Data(text.utf8)
        #expect(crafted != made.bytes)
        let path = try rig.write(crafted)
        let file = try PaymentTokenFile.read(path: path, redactor: nil)
        #expect(file.bytes == crafted)
        #expect(file.transactionId == made.transactionId)

        // Whether the emulator accepts this spelling is its business; what it received is ours.
        _ = try await rig.run(
            #"""
            {"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"704"},"capture":{"intent":"payment_intent.id"}},
            {"name":"confirm","use":"bahn.confirm","with":{"intent":"${vars.intent}","tokenFile":"\#(path)"}}
            """#)
        let confirm = try #require(rig.confirmRequests.first)
        let received = try ReceivedJWS(confirm.body).appleToken()
        #expect(received == crafted, "\(String(decoding: received, as: UTF8.self))")
    }

    /// A JWS answer is opened; with BAHN_RESPONSE_KEY set, it must verify with Bahn's key, and one that does not is no
    /// answer to trust.
    @Test func aJWSAnswerIsVerifiedWithBahnsKeyWhenOneIsConfigured() async throws {
        let bahnKey = P256PrivateKey()
        func compact(_ payload: JSON, signedWith key: P256PrivateKey) throws -> Data {
            let input =
                Data(#"{"alg":"ES256"}"#.utf8).base64URLEncodedString() + "." + payload.data.base64URLEncodedString()
            return Data(
                (input + "." + (try SigningKey.es256(key).sign(Data(input.utf8))).base64URLEncodedString()).utf8)
        }
        let answer: JSON = [
            "payment_intent": [
                "id": "pi_jws_1", "object": "payment_intent", "status": "requires_payment_method",
                "amount": 8000, "currency": "704",
            ]
        ]
        let signed = try compact(answer, signedWith: bahnKey)
        let server = try TestServer { _, _ in
            .respond(HTTPResponse(status: 200, headers: ["Content-Type": "application/jose"], body: signed))
        }
        let rig = try BahnRig()
        let step =
            #"{"name":"create","use":"bahn.createIntent","with":{"amount":8000,"currency":"704"},"capture":{"intent":"payment_intent.id"}}"#
        // No key configured: the JWS is opened as it is.
        let opened = try await rig.run(step, env: ["BAHN_API_URL": server.baseURL])
        #expect(opened.passed && opened.captures["intent"] == "pi_jws_1", "\(String(describing: opened.failure))")
        // Bahn's key: it verifies.
        let verified = try await rig.run(
            step, env: ["BAHN_API_URL": server.baseURL, "BAHN_RESPONSE_KEY": bahnKey.publicKey.pemRepresentation])
        #expect(verified.passed && verified.captures["intent"] == "pi_jws_1", "\(String(describing: verified.failure))")
        // Another key: the answer settles nothing.
        let other = P256PrivateKey().publicKey.pemRepresentation
        let refused = try await rig.run(step, env: ["BAHN_API_URL": server.baseURL, "BAHN_RESPONSE_KEY": other])
        #expect(!refused.passed)
        #expect(
            refused.failure?.message.contains("a JWS that does not verify with BAHN_RESPONSE_KEY") == true,
            "\(String(describing: refused.failure))")
        #expect(refused.failure?.outcomeUncertain == true)
        // A key that is not one is a configuration error before anything is sent.
        let before = server.requests.count
        let broken = try await rig.run(
            step, env: ["BAHN_API_URL": server.baseURL, "BAHN_RESPONSE_KEY": "/nonexistent/bahn.pem"])
        #expect(broken.exitCode == .configuration, "\(String(describing: broken.failure))")
        #expect(server.requests.count == before)
    }
}
