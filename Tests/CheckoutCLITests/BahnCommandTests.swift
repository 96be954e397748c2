import Foundation
import SandboxEmulator
import Testing

#if canImport(FoundationXML)
    import FoundationXML
    import TestSupport
#endif

/// The Bahn commands through the built binary: the main job, bad token files, secrets on every output,
/// chaining through the state file against `sandbox serve` and --wait (`bahn listen`: BahnListenCommandTests).
@Suite struct BahnCommandTests {
    /// `--env sandbox` pointed at an in-test emulator with its test credentials, as a user would configure it.
    static func sandboxEnvironment(_ emulator: Emulator, scratch: Scratch) throws -> [String: String] {
        let keyFile = try scratch.write("bahn-signing-key.pem", TestCredentials.bahnClientPrivateKeyPEM)
        return [
            "BAHN_API_URL": emulator.baseURL, "BAHN_API_KEY": TestCredentials.bahnAPIKey, "BAHN_SIGNING_KEY": keyFile,
            "BAHN_KEY_ID": TestCredentials.bahnKeyID, "BAHN_WEBHOOK_SECRET": TestCredentials.bahnWebhookSecret,
        ]
    }

    static func makeToken(_ s: Scratch, amount: Int = 8000, name: String = "token.json") async throws -> String {
        let path = s.path + "/" + name
        let r = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "\(amount)", "--currency", "704", "--out", path, "-q"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        return path
    }

    @Test func mainJobPassesWithNoConfiguration() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for step in ["make-token", "create-intent", "confirm", "poll", "webhook"] {
            #expect(r.stdout.contains("✓ \(step)"))
        }
        // The embedded emulator's state is throwaway: nothing is left in the default state directory.
        #expect(!FileManager.default.fileExists(atPath: s.path + "/state/checkout-driver/local/state.json"))
    }

    @Test(arguments: [
        ("empty", "", "is empty"),
        ("not JSON", "hello, token", "not JSON"),
        ("truncated", "{\"data\":\"abc\",\"signature\":\"de", "truncated"),
        (
            "PKPayment wrapper",
            "{\"token\":{\"paymentData\":{\"data\":\"a\",\"signature\":\"b\",\"header\":{},\"version\":\"EC_v1\"}}}",
            "token.paymentData"
        ),
        (
            "PKPaymentToken wrapper",
            "{\"paymentData\":{\"data\":\"a\",\"signature\":\"b\",\"header\":{},\"version\":\"EC_v1\"},\"transactionIdentifier\":\"ab\"}",
            "paymentData"
        ),
        ("missing fields", "{\"data\":\"a\",\"version\":\"EC_v1\"}", "signature"),
        (
            "unknown version",
            "{\"data\":\"a\",\"signature\":\"b\",\"header\":{\"ephemeralPublicKey\":\"x\",\"publicKeyHash\":\"y\",\"transactionId\":\"ab\"},\"version\":\"EC_v9\"}",
            "unknown version"
        ),
        ("not UTF-8", "\u{FF}", "UTF-8"),
        (
            "byte-order mark",
            "\u{FEFF}{\"data\":\"a\",\"signature\":\"b\",\"header\":{\"ephemeralPublicKey\":\"x\",\"publicKeyHash\":\"y\",\"transactionId\":\"ab\"},\"version\":\"EC_v1\"}",
            "starts with a UTF-8 byte-order mark"
        ),
    ])
    func badTokenFilesExit65AndSendNothing(kind: String, content: String, expected: String) async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let file = s.path + "/bad-token.json"
        // "\u{FF}" stands for a lone 0xFF byte: never valid UTF-8.
        try (content == "\u{FF}" ? Data([0xFF, 0x7B]) : Data(content.utf8)).write(to: URL(fileURLWithPath: file))
        let r = try await BinaryRunner.run(
            ["bahn", "confirm", "--intent", "pi_TEST", "--token-file", file, "--env", "sandbox"],
            home: s.path, environment: try Self.sandboxEnvironment(emulator, scratch: s))
        #expect(r.status == 65, "\(kind): \(r.all)")
        #expect(r.stderr.contains(expected), "\(kind): \(r.stderr)")
        #expect(r.stderr.contains("hint:"), "\(kind)")
        #expect(emulator.receivedRequests().isEmpty, "\(kind): something was sent")
    }

    @Test func missingBahnCredentialStopsTheFlowBeforeItsFirstRequest() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let flow = try s.write(
            "f.json",
            """
            {"name": "mixed", "steps": [
              {"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}},
              {"name": "create", "use": "bahn.createIntent", "with": {"amount": 8000, "currency": "704"}}
            ]}
            """)
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--env", "sandbox"], home: s.path,
            environment: ["EMULATOR_URL": emulator.baseURL, "BAHN_API_URL": emulator.baseURL])
        #expect(r.status == 78)
        #expect(
            r.stderr.contains("BAHN_API_KEY, BAHN_SIGNING_KEY are not set for environment 'sandbox'"),
            "every missing one at once: \(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func metadataValuesGoOutExactlyAsTyped() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let r = try await BinaryRunner.run(
            [
                "bahn", "create-intent", "--amount", "8000", "--currency", "704", "--metadata", "ref=1.50",
                "--metadata", "big=12345678901234567890", "--env", "sandbox",
            ],
            home: s.path, environment: try Self.sandboxEnvironment(emulator, scratch: s))
        #expect(r.status == 0, "\(r.all)")
        let jws = String(decoding: try #require(emulator.receivedRequests().first).body, as: UTF8.self).split(
            separator: ".")
        var payload = String(jws[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while payload.count % 4 != 0 { payload += "=" }
        let decoded = try #require(Data(base64Encoded: payload))
        let body = try #require(try JSONSerialization.jsonObject(with: decoded) as? [String: Any])
        let metadata = try #require(body["metadata"] as? [String: String])
        #expect(metadata == ["ref": "1.50", "big": "12345678901234567890"])
    }

    @Test func base64WrappedTokenIsExplained() async throws {
        let s = try Scratch()
        let good = try await Self.makeToken(s)
        let wrapped = try s.write("wrapped.txt", try Data(contentsOf: URL(fileURLWithPath: good)).base64EncodedString())
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let r = try await BinaryRunner.run(
            ["bahn", "confirm", "--intent", "pi_TEST", "--token-file", wrapped, "--env", "sandbox"],
            home: s.path, environment: try Self.sandboxEnvironment(emulator, scratch: s))
        #expect(r.status == 65)
        #expect(emulator.receivedRequests().isEmpty)
        #expect(r.stderr.contains("base64"))
        #expect(r.stderr.contains("base64 -d"))
    }

    /// One changed character in any field of the token. The signed fields (Apple signs
    /// ephemeralPublicKey‖data‖transactionId, and the signature itself) fail the signature check with the
    /// integration guide's "signature or invalid-token" hint; publicKeyHash is not signed, so a change there reads as a
    /// token encrypted to another certificate (the decryption hint); the version is caught before sending.
    @Test(arguments: [
        ("data", 1, "hint: signature or invalid-token error"),
        ("signature", 1, "hint: signature or invalid-token error"),
        ("ephemeralPublicKey", 1, "hint: signature or invalid-token error"),
        ("transactionId", 1, "hint: signature or invalid-token error"),
        ("publicKeyHash", 1, "hint: decryption error"),
        ("version", 65, "unknown version"),
    ])
    func oneChangedByteFailsConfirm(field: String, status: Int32, expected: String) async throws {
        let s = try Scratch()
        let token = try await Self.makeToken(s)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: token)))
        let text = String(decoding: bytes, as: UTF8.self)
        let valueStart = try #require(text.range(of: "\"\(field)\":\"")).upperBound
        let index = text.utf8.distance(from: text.startIndex, to: valueStart) + 4
        let before = bytes[index]
        bytes[index] = Self.differentCharacter(for: before, hex: field == "transactionId")
        // The change must change what the field decodes to: hex is case-insensitive, so `a` → `A` would not.
        if field == "transactionId" {
            #expect(
                Int(String(UnicodeScalar(bytes[index])), radix: 16) != Int(String(UnicodeScalar(before)), radix: 16))
        }
        let tampered = s.path + "/tampered.json"
        try Data(bytes).write(to: URL(fileURLWithPath: tampered))
        let r = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "o-1", "--amount", "8000", "--currency", "704",
                "--token-file", tampered,
            ], home: s.path)
        #expect(r.status == status, "\(field): \(r.all)")
        #expect(r.stderr.contains(expected), "\(field): \(r.stderr)")
    }

    /// Another character of the same alphabet: the next hex digit for hex, else another base64 character.
    static func differentCharacter(for byte: UInt8, hex: Bool) -> UInt8 {
        if hex {
            let digits = Array("0123456789abcdef".utf8)
            let value = Int(String(UnicodeScalar(byte)), radix: 16)!
            return digits[(value + 1) % 16]
        }
        return switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "8"): byte + 1
        case UInt8(ascii: "A"): UInt8(ascii: "B")
        default: UInt8(ascii: "A")
        }
    }

    @Test func noSecretReachesAnyOutput() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let env = try Self.sandboxEnvironment(emulator, scratch: s)
        let token = try await Self.makeToken(s)
        let tokenJSON = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: token))) as? [String: Any])
        let data = try #require(tokenJSON["data"] as? String)
        let signature = try #require(tokenJSON["signature"] as? String)
        let keyBody = TestCredentials.bahnClientPrivateKeyPEM.split(separator: "\n")[1]  // a line of the private key
        let secrets = [
            TestCredentials.bahnAPIKey, String(keyBody), data, signature, String(data.prefix(40)),
            String(signature.prefix(40)),
        ]

        for format in ["text", "json"] {
            let r = try await BinaryRunner.run(
                [
                    "bahn", "confirm", "--order-id", "o-\(format)", "--amount", "8000", "--currency", "704",
                    "--token-file", token,
                    "--env", "sandbox", "-v", "--format", format, "--record", s.path + "/\(format).har", "--junit",
                    s.path + "/\(format).xml",
                    "--session", s.path + "/\(format)-state.json",
                ],
                home: s.path, environment: env)
            // Separate state files: the text run spends the token, the json run sends it again and Bahn refuses it,
            // so both a successful confirm and a Bahn error go through every output.
            #expect(r.status == (format == "text" ? 0 : 1), "\(format): \(r.all)")
            if format == "json" { #expect(r.stderr.contains("apple_pay_token_already_used")) }
            let outputs = [
                ("stdout", r.stdout), ("stderr", r.stderr), ("HAR", try s.read("\(format).har")),
                ("JUnit", try s.read("\(format).xml")), ("state", (try? s.read("\(format)-state.json")) ?? ""),
            ]
            for (name, text) in outputs {
                for secret in secrets {
                    #expect(!text.contains(secret), "\(format) \(name) leaks \(secret.prefix(12))…")
                }
            }
            #expect(r.stderr.contains("Bn-Api-Key: [REDACTED]"))
        }
        // And the secrets did go over the wire, so their absence above means redaction worked.
        let wire = emulator.receivedRequests().map { $0.headers.map(\.value).joined() }.joined()
        #expect(wire.contains(TestCredentials.bahnAPIKey))
    }

    @Test func commandsChainThroughTheStateFileAgainstSandboxServe() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }

        let token = try await Self.makeToken(s)
        let create = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "8000", "--currency", "VND", "--order-id", "1234"], home: s.path)
        #expect(create.status == 0, "\(create.all)")
        #expect(create.stderr.contains("environment: local (sandbox serve at http://127.0.0.1:"))
        let intent = try #require(
            create.stdout.split(separator: "\n").first { $0.hasPrefix("payment_intent ") }?.split(separator: " ")[1])

        let confirm = try await BinaryRunner.run(
            ["bahn", "confirm", "--order-id", "1234", "--token-file", token, "--capture", "manual"], home: s.path)
        #expect(confirm.status == 0, "\(confirm.all)")
        #expect(confirm.stdout.contains("payment_intent \(intent)  requires_capture"))
        #expect(confirm.stdout.contains("idempotency key order-1234-applepay"))
        #expect(confirm.stdout.contains("card            visa ····1234 via apple_pay  (device token ····0046)"))

        // The same command again replays under the same key: the original answer, no second authorisation.
        let again = try await BinaryRunner.run(
            ["bahn", "confirm", "--order-id", "1234", "--token-file", token, "--capture", "manual"],
            home: s.path)
        #expect(again.status == 0, "\(again.all)")
        #expect(again.stderr.contains("Bahn replayed the original response for idempotency key order-1234-applepay"))
        // Under another key the spent token is refused before anything is sent.
        let other = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "1234", "--token-file", token,
                "--idempotency-key", "another",
            ], home: s.path)
        #expect(other.status == 65, "\(other.all)")
        #expect(other.stderr.contains("single-use"))
        #expect(other.stderr.contains("--idempotency-key order-1234-applepay"))

        let capture = try await BinaryRunner.run(["bahn", "capture", String(intent)], home: s.path)
        #expect(capture.status == 0, "\(capture.all)")
        let show = try await BinaryRunner.run(["bahn", "intent", String(intent), "--format", "json"], home: s.path)
        #expect(show.status == 0)
        #expect(show.stdout.contains("\"status\": \"succeeded\""))
        let cancel = try await BinaryRunner.run(["bahn", "cancel", String(intent)], home: s.path)
        #expect(cancel.status == 1)
        #expect(cancel.stderr.contains("payment_intent_unexpected_state"))
    }

    /// Without `sandbox serve` each command's embedded emulator ends with it: chaining says how to chain.
    @Test func chainingWithoutSandboxServeSaysToStartIt() async throws {
        let s = try Scratch()
        let token = try await Self.makeToken(s)
        let create = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "8000", "--currency", "VND", "--order-id", "77"], home: s.path)
        #expect(create.status == 0, "\(create.all)")
        let confirm = try await BinaryRunner.run(
            ["bahn", "confirm", "--order-id", "77", "--token-file", token], home: s.path)
        #expect(confirm.status == 64, "\(confirm.all)")
        #expect(confirm.stderr.contains("order 77 has no intent in the state file yet"))
        #expect(
            confirm.stderr.contains(
                "hint: the embedded emulator (--env local) and its state end with each command: start `checkout-driver sandbox serve`"
            ))
    }

    /// `bahn confirm --wait` for a new order of `amount` on the embedded emulator.
    static func confirmAndWait(amount: Int) async throws -> BinaryRunner.Result {
        let s = try Scratch()
        let token = try await makeToken(s, amount: amount)
        return try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "o-\(amount)", "--amount", "\(amount)", "--currency", "704",
                "--token-file", token, "--wait",
            ], home: s.path)
    }

    @Test func waitPollsAProcessingIntentToItsEnd() async throws {
        let r = try await Self.confirmAndWait(amount: 5200)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("note: confirm: Bahn returned processing"))
        #expect(r.stdout.contains("✓ wait"))
        #expect(r.stdout.contains("succeeded"))
        #expect(r.stdout.contains("card            visa ····1234 via apple_pay"))  // confirm's details survive the poll
    }

    @Test func aTraceOrRecordingNeverCostsTheSpentTokenCheck() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let env = try Self.sandboxEnvironment(emulator, scratch: s)
        let token = try await Self.makeToken(s)
        let state = s.path + "/state.json"
        let first = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "r-1", "--amount", "8000", "--currency", "704",
                "--token-file", token, "--env", "sandbox", "-v", "--record", s.path + "/r.har", "--session", state,
            ],
            home: s.path, environment: env)
        #expect(first.status == 0, "\(first.all)")
        let transaction = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: token))) as? [String: Any])
        let id = try #require((transaction["header"] as? [String: Any])?["transactionId"] as? String)
        #expect(try s.read("state.json").contains(id))  // the state keeps the real id, not a mask
        let sent = emulator.receivedRequests().count
        let again = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "r-1", "--token-file", token, "--env", "sandbox",
                "--idempotency-key", "a-new-key", "-v", "--session", state,
            ], home: s.path, environment: env)
        #expect(again.status == 65, "\(again.all)")
        #expect(again.stderr.contains("single-use"))
        #expect(again.stderr.contains("already confirmed under idempotency key order-r-1-applepay"))
        #expect(emulator.receivedRequests().count == sent)
    }

    @Test func waitFailsWhenTheIntentEndsDeclined() async throws {
        let r = try await Self.confirmAndWait(amount: 5300)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("requires_payment_method"))
        #expect(r.stdout.contains("last error"))
    }

    @Test func aNewTokenAfterADeclineGetsItsOwnIdempotencyKey() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let env = try Self.sandboxEnvironment(emulator, scratch: s)
        let state = s.path + "/state.json"
        let first = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "d-1", "--amount", "5100", "--currency", "704",
                "--token-file", try await Self.makeToken(s, amount: 5100, name: "a.json"), "--env", "sandbox",
                "--session", state,
            ], home: s.path, environment: env)
        #expect(first.status == 1)
        #expect(first.stderr.contains("card_declined"))
        let second = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "d-1", "--token-file",
                try await Self.makeToken(s, amount: 5100, name: "b.json"), "--env", "sandbox", "--session", state,
            ],
            home: s.path, environment: env)
        #expect(second.status == 1)
        // a real second attempt, not idempotency_key_reused
        #expect(second.stderr.contains("card_declined"), "\(second.all)")
        #expect(second.stderr.contains("new idempotency key, order-d-1-applepay-"))
        let keys = emulator.receivedRequests().filter { $0.path.hasSuffix("/confirm") }.compactMap {
            $0.headers["Bn-Idempotency-Key"]
        }
        #expect(keys.count == 2 && keys[0] == "order-d-1-applepay" && keys[1].hasPrefix("order-d-1-applepay-"))
    }

    /// `bahn intent`, `capture` and `cancel` default to the state file's last intent, as the Cash App commands default
    /// to the last request; `--amount` takes the decimal form too, read exactly by the currency's digits.
    @Test func intentCommandsDefaultToTheLastIntentAndAmountsMayBeDecimals() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let none = try await BinaryRunner.run(["bahn", "intent"], home: s.path)
        #expect(none.status == 64 && none.stderr.contains("no intent given and none in the state file"), "\(none.all)")
        let created = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "80.00", "--currency", "EUR"], home: s.path)
        #expect(created.stdout.contains("amount          8000 978 (EUR)"), "\(created.stdout)")
        let intent = String(try #require(created.stdout.firstMatch(of: /payment_intent (pi_\w+)/)).1)
        let read = try await BinaryRunner.run(["bahn", "intent"], home: s.path)
        #expect(
            read.status == 0 && read.stdout.contains("payment_intent \(intent)  requires_payment_method"), "\(read.all)"
        )
        let cancelled = try await BinaryRunner.run(["bahn", "cancel"], home: s.path)
        #expect(
            cancelled.status == 0 && cancelled.stdout.contains("payment_intent \(intent)  canceled"), "\(cancelled.all)"
        )
        let captured = try await BinaryRunner.run(["bahn", "capture"], home: s.path)
        #expect(
            captured.status == 1
                && captured.stderr.contains(
                    "hint: check the intent's status with `checkout-driver bahn intent \(intent)`"),
            "\(captured.all)")
        // The currency a typed step starts with (USD) is still sent when it is the one given: a required argument.
        let dollars = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "12", "--currency", "USD"], home: s.path)
        #expect(dollars.status == 0 && dollars.stdout.contains("amount          12 840 (USD)"), "\(dollars.all)")
        let wrong = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "80.5", "--currency", "VND"], home: s.path)
        #expect(
            wrong.status == 64 && wrong.stderr.contains("--amount 80.5 has 1 decimal, and VND has none"), "\(wrong.all)"
        )
    }

}
