import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// The Braintree commands through the built binary against the emulator: charge and authorize + capture end to end
/// with no configuration, void, the fake nonces, the decline / failure / rejection ranges, a nonce used twice, a wrong
/// tokenization key, the configuration mismatch warning, and secrets on every output.
@Suite struct BraintreeCommandTests {
    static func ledger(_ server: ServeProcess) throws -> [[String: Any]] {
        let json =
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
            as? [String: Any]
        return ((json?["entries"] as? [[String: Any]]) ?? []).filter { $0["provider"] as? String == "braintree" }
    }

    static func transaction(_ stdout: String) -> String? {
        stdout.firstMatch(of: /transaction       (\S+)/).map { String($0.output.1) }
    }

    @Test func aTokenFromApplepayTokenSettlesWithNoConfiguration() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let token = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "1000", "--currency", "USD", "--out", s.path + "/token.json"],
            home: s.path)
        #expect(token.status == 0, "\(token.all)")
        let r = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--token-file", s.path + "/token.json", "--amount", "10.00"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for step in ["config", "tokenize", "charge"] { #expect(r.stdout.contains("✓ \(step)"), "\(step)") }
        #expect(
            r.stdout.contains(/transaction       \S+  SUBMITTED_FOR_SETTLEMENT  10.00 USD  \(order cd-[0-9a-f]{20}\)/),
            "\(r.stdout)")
        #expect(r.stdout.contains(/card              VISA \d{4}  \(APPLE_PAY\)/), "\(r.stdout)")
        #expect(
            r.stdout.contains(/nonce             [0-9a-f-]{6}… \(masked\)/)
                && r.stdout.contains("tokenized         Apple Pay - Visa"), "\(r.stdout)")
        #expect(r.stdout.contains("apple pay         mock"))
        let ledger = try Self.ledger(server)
        #expect(
            ledger.map { $0["kind"] as? String } == ["capture"] && ledger.first?["amount"] as? Int == 1000, "\(ledger)")
        // The same token again: Apple Pay tokens are single-use, so it is refused before the tokenization is sent.
        let tokenizations = {
            let log =
                try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/requests"]).utf8))
                as? [String: Any]
            return ((log?["requests"] as? [[String: Any]]) ?? []).filter {
                ($0["target"] as? String)?.hasSuffix("/payment_methods/apple_payment_tokens") == true
            }.count
        }
        let before = try tokenizations()
        #expect(before == 1, "the first run tokenized once")
        let again = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--token-file", s.path + "/token.json", "--amount", "10.00"], home: s.path)
        #expect(again.status == 1, "\(again.all)")
        #expect(
            again.stderr.contains(
                "refused before sending: this Apple Pay token was already used by Braintree's tokenization"),
            "\(again.stderr)")
        #expect(again.stderr.contains("checkout-driver applepay token"), "the hint makes a fresh one: \(again.stderr)")
        #expect(try tokenizations() == before, "nothing was sent")
        #expect(try Self.ledger(server).count == 1)
    }

    @Test(arguments: ["fake-apple-pay-visa-nonce", "fake-apple-pay-mastercard-nonce", "fake-apple-pay-amex-nonce"])
    func theSandboxsFakeNoncesWorkAsDocumented(nonce: String) async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--nonce", nonce, "--amount", "12.34", "--order-id", "order-77"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.contains("SUBMITTED_FOR_SETTLEMENT  12.34 USD  (order order-77)"), "\(r.stdout)")
        #expect(r.stdout.contains("nonce             fake-a… (masked)") && !r.stdout.contains(nonce), "\(r.stdout)")
        #expect(!r.stdout.contains("✓ tokenize"))
    }

    /// How many captureTransaction mutations the emulator has received.
    static func captureRequests(_ server: ServeProcess) throws -> Int {
        let log = try curl(["-s", server.url + "/_sandbox/requests"])
        return log.components(separatedBy: "captureTransaction").count - 1
    }

    @Test func authorizeThenCaptureAndVoid() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let authorized = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--authorize-only", "--amount", "25.00"], home: s.path)
        #expect(authorized.status == 0, "\(authorized.all)")
        #expect(authorized.stdout.contains("AUTHORIZED  25.00 USD"), "\(authorized.stdout)")
        let id = try #require(Self.transaction(authorized.stdout))
        let captured = try await BinaryRunner.run(["braintree", "capture", id], home: s.path)
        #expect(captured.status == 0, "\(captured.all)")
        #expect(captured.stdout.contains("\(id)  SUBMITTED_FOR_SETTLEMENT  25.00 USD"), "\(captured.stdout)")
        // A second capture of it is refused before anything is sent, as Cash App's is.
        let requests = try Self.captureRequests(server)
        #expect(requests == 1, "the one capture was sent")
        let again = try await BinaryRunner.run(["braintree", "capture", id], home: s.path)
        #expect(
            again.status == 1
                && again.stderr.contains(
                    "refused before sending: this authorized Braintree transaction was already used by its capture (SUBMITTED_FOR_SETTLEMENT)"
                ), "\(again.all)")
        #expect(try Self.captureRequests(server) == requests, "nothing was sent")
        let second = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--authorize-only", "--amount", "5.00", "--nonce", "fake-apple-pay-visa-nonce"],
            home: s.path)
        let other = try #require(Self.transaction(second.stdout))
        let voided = try await BinaryRunner.run(["braintree", "void", other], home: s.path)
        #expect(voided.status == 0, "\(voided.all)")
        #expect(voided.stdout.contains("\(other)  VOIDED"), "\(voided.stdout)")
        #expect(
            try Self.ledger(server).map { $0["kind"] as? String } == [
                "authorization", "capture", "authorization", "void",
            ])
        // A voided transaction cannot be captured: errors[] in an HTTP 200 answer, exit 1 with the legacy code.
        let late = try await BinaryRunner.run(["braintree", "capture", other], home: s.path)
        #expect(late.status == 1 && late.stderr.contains("legacyCode 91507"), "\(late.all)")
    }

    @Test(arguments: [
        ("2000.00", "legacyCode 2000"), ("2999.99", "legacyCode 2999"), ("3000.00", "legacyCode 3000"),
        ("5001.00", "legacyCode 5001"),
    ])
    func theDeclineFailureAndRejectionRangesEndWithExit1(amount: String, code: String) async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", amount], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("error: charge failed:") && r.stderr.contains(code), "\(r.stderr)")
        #expect(r.stderr.contains("hint: the") && r.stderr.contains("nothing was charged"), "\(r.stderr)")
    }

    @Test func theDeclinedFlowPassesWhenBraintreeRefuses() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "braintree-apple-pay-declined"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("refused as expected"), "\(r.stderr)")
    }

    /// A nonce Braintree refused a transaction for is used up too: the next charge with it is refused before sending.
    @Test func aNonceARefusedChargeUsedIsSpent() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "declined-then-again.json",
            #"""
            { "name": "declined-then-again", "steps": [
              { "name": "make-token", "use": "applepay.makeToken", "with": { "amount": 200000, "currency": "USD" }, "capture": { "token_file": "path" } },
              { "name": "tokenize", "use": "braintree.tokenize", "with": { "tokenFile": "${vars.token_file}" } },
              { "name": "declined", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "2000.00", "expect": "declined" } },
              { "name": "again", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "10.00" } } ] }
            """#)
        let r = try await BinaryRunner.run(["flow", "run", flow], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stdout.contains("✓ declined") && r.stdout.contains("✗ again"), "\(r.stdout)")
        #expect(
            r.stderr.contains("refused before sending: this Braintree nonce was already used by charge of order cd-"),
            "\(r.stderr)")
        #expect(r.stderr.contains("which Braintree refused"), "\(r.stderr)")
    }

    @Test func aNonceUsedTwiceIsRefused() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "twice.json",
            #"""
            { "name": "twice", "steps": [
              { "name": "make-token", "use": "applepay.makeToken", "with": { "amount": 500, "currency": "USD" }, "capture": { "token_file": "path" } },
              { "name": "tokenize", "use": "braintree.tokenize", "with": { "tokenFile": "${vars.token_file}" } },
              { "name": "first", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "5.00" } },
              { "name": "second", "use": "braintree.charge", "with": { "nonce": "${steps.tokenize.nonce}", "amount": "5.00" } } ] }
            """#)
        let r = try await BinaryRunner.run(["flow", "run", flow], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stdout.contains("✓ first") && r.stdout.contains("✗ second"), "\(r.stdout)")
        // The state file saw the nonce pay, so the second charge is refused before it is sent (the emulator's own
        // 91565 for a reused nonce is checked in the emulator's tests).
        #expect(
            r.stderr.contains("refused before sending: this Braintree nonce was already used by charge of order cd-"),
            "\(r.stderr)")
        #expect(r.stderr.contains("tokenize a fresh Apple Pay token"))
        let json = try await BinaryRunner.run(["flow", "run", flow, "--format", "json"], home: s.path)
        let steps = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["steps"]
                as? [[String: Any]])
        #expect(
            steps.first { $0["name"] as? String == "second" }?["requests"] as? Int == 0,
            "nothing was sent: \(json.stdout)")
    }

    /// Wrong server API keys: Braintree answers HTTP 200 with an AUTHENTICATION error, which is exit 78 naming the
    /// keys.
    @Test func wrongAPIKeysAreExit78() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["braintree", "ping", "--set", "BRAINTREE_PRIVATE_KEY=not-the-private-key"], home: s.path)
        #expect(r.status == 78, "\(r.all)")
        #expect(r.stderr.contains("Braintree refused the credentials: Authentication failed"), "\(r.stderr)")
        #expect(r.stderr.contains("check BRAINTREE_PUBLIC_KEY and BRAINTREE_PRIVATE_KEY"))
        #expect(!r.all.contains("not-the-private-key"), "the wrong key is still a secret")
    }

    @Test func aWrongTokenizationKeyIsExit78() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["braintree", "config", "--set", "BRAINTREE_TOKENIZATION_KEY=sandbox_wrongkey1_emulatormerchant01"],
            home: s.path)
        #expect(r.status == 78, "\(r.all)")
        #expect(r.stderr.contains("BRAINTREE_TOKENIZATION_KEY"))
        #expect(!r.all.contains("sandbox_wrongkey1_emulatormerchant01"), "a key is a secret, even a wrong one")
    }

    @Test func aPaymentRequestOutOfSyncWithTheGatewayWarns() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            [
                "braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", "1.00", "--currency",
                "EUR", "--network", "JCB",
            ],
            home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            r.stderr.contains("warning: the payment request's currency EUR is not the gateway's USD"), "\(r.stderr)")
        #expect(r.stderr.contains("warning: JCB is not among the gateway's supported networks"), "\(r.stderr)")
    }

    @Test func configAndPingAndClientToken() async throws {
        let s = try Scratch()
        let config = try await BinaryRunner.run(["braintree", "config"], home: s.path)
        #expect(
            config.status == 0 && config.stdout.contains("networks          visa, mastercard, amex, discover"),
            "\(config.all)")
        let ping = try await BinaryRunner.run(["braintree", "ping"], home: s.path)
        #expect(ping.status == 0 && ping.stdout.contains("ping              pong"), "\(ping.all)")
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let token = try await BinaryRunner.run(["braintree", "client-token", "-q"], home: s.path)
        #expect(token.status == 0, "\(token.all)")
        let clientToken = token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let withToken = try await BinaryRunner.run(
            ["braintree", "config", "--client-token", clientToken], home: s.path)
        #expect(withToken.status == 0 && withToken.stdout.contains("apple pay         mock"), "\(withToken.all)")
    }

    @Test func secretsNeverReachAnyOutput() async throws {
        let s = try Scratch()
        let har = s.path + "/run.har"
        let junit = s.path + "/junit.xml"
        _ = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "1000", "--currency", "USD", "--out", s.path + "/token.json"],
            home: s.path)
        let r = try await BinaryRunner.run(
            [
                "braintree", "apple-pay", "--token-file", s.path + "/token.json", "--amount", "10.00", "-v",
                "--record", har, "--junit", junit,
            ], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let json = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--amount", "10.00", "--format", "jsonl", "-v"], home: s.path)
        #expect(json.status == 0, "\(json.all)")
        // The nonce the run charged, as the emulator received it.
        let received = try curl(["-s", server.url + "/_sandbox/requests"])
        let charged = try #require(
            received.firstMatch(of: /paymentMethodId\\?"\s*:\s*\\?"([0-9a-f-]{20,})/).map { String($0.output.1) })
        let tokenRun = try await BinaryRunner.run(["braintree", "client-token", "-q"], home: s.path)
        let clientToken = tokenRun.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let withToken = try await BinaryRunner.run(
            ["braintree", "config", "--client-token", clientToken, "-v"], home: s.path)
        #expect(withToken.status == 0, "\(withToken.all)")
        let tokenBytes = try Data(contentsOf: URL(fileURLWithPath: s.path + "/token.json"))
        let outputs = [
            r.all, json.all, try String(contentsOfFile: har, encoding: .utf8),
            try String(contentsOfFile: junit, encoding: .utf8), withToken.all,
        ]
        // HAR keeps bodies as JSON strings: the nonce's key and value appear escaped there.
        let nonces = (try String(contentsOfFile: har, encoding: .utf8)).matches(of: /\\"nonce\\":\\"([^"\\]+)/).map {
            String($0.output.1)
        }
        #expect(!nonces.isEmpty && nonces.allSatisfy { $0 == "[REDACTED]" }, "\(nonces)")
        #expect(!json.all.contains(charged), "the charged nonce is in no output of its run")
        #expect(
            clientToken.count > 40 && !withToken.all.contains(clientToken),
            "the client token is printed by client-token only")
        for output in outputs {
            #expect(!output.contains(TestCredentials.braintreePrivateKey))
            #expect(!output.contains(TestCredentials.braintreeTokenizationKey))
            #expect(
                !output.contains(
                    Data("\(TestCredentials.braintreePublicKey):\(TestCredentials.braintreePrivateKey)".utf8)
                        .base64EncodedString()))
            #expect(!output.contains(tokenBytes.base64EncodedString()), "no token bytes")
        }
        #expect(outputs[2].contains("apple_payment_tokens") && outputs[2].contains("chargePaymentMethod"))
    }

    /// A processor decline is told in the processor's own words wherever it is reported — here found by the read-back
    /// of a charge whose answer was lost.
    @Test func aDeclineReadBackShowsTheProcessorsMessage() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /braintree/graphql => drop @1"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", "2000.00"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("is PROCESSOR_DECLINED (processor 2000: Do Not Honor)"), "\(r.stderr)")
    }
}
