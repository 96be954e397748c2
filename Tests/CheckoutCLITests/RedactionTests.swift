import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// Plants known secrets in the configuration and in what the service echoes back, then searches every
/// output the driver produces — stdout, stderr, HAR, JSON, JSONL, JUnit, the state file — for them.
@Suite struct RedactionTests {
    static let apiKey = "bn_live_PLANTED_api_key_7f3e9c1a"
    static let sharedSecret = "PLANTED-shared-secret-0b4d"
    static let clientSecret = "pi_secret_PLANTED_client_secret_99"
    static let tokenData = "UExBTlRFRC10b2tlbi1kYXRhLWJ5dGVz"
    static let tokenSignature = "UExBTlRFRC1jbXMtc2lnbmF0dXJl"

    @Test(arguments: ["text", "json", "jsonl"])
    func noPlantedSecretReachesAnyOutput(format: String) async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        // The echo route sends the request back, so secrets come back in response bodies too; the second
        // step fails on purpose so that the secret also lands in an error message and a JUnit failure.
        let flow = try s.write(
            "secrets.json",
            """
            {"name": "secrets", "steps": [
              {"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
                "headers": {"Bn-Api-Key": "${env.BAHN_API_KEY}", "Authorization": "Bearer ${env.BAHN_API_KEY}",
                            "X-Shared-Secret": "${env.CENTRA_SHARED_SECRET}", "X-Note": "key=${env.BAHN_API_KEY}"},
                "json": {"client_secret": "\(Self.clientSecret)", "note": "the key is ${env.BAHN_API_KEY}",
                         "token": {"data": "\(Self.tokenData)", "signature": "\(Self.tokenSignature)", "header": {}, "version": "EC_v1"}}},
               "capture": {"echoed_note": "json.note", "echoed_key_header": "headers.bn-api-key"}},
              {"name": "fails", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
                "json": {"note": "${env.BAHN_API_KEY}"}},
               "expect": {"equals": {"json.note": "something else"}}}
            ]}
            """)
        let r = try await BinaryRunner.run(
            [
                "flow", "run", flow, "--env", "sandbox", "--format", format, "-v", "--record", s.path + "/out.har",
                "--junit", s.path + "/out.xml", "--session", s.path + "/state.json",
            ],
            home: s.path,
            environment: [
                "EMULATOR_URL": emulator.baseURL, "BAHN_API_KEY": Self.apiKey,
                "CENTRA_SHARED_SECRET": Self.sharedSecret,
            ])
        #expect(r.status == 1, "\(r.all)")

        // The secrets really went over the wire (so finding none in the outputs means something).
        let wire = emulator.receivedRequests().map {
            String(decoding: $0.body, as: UTF8.self) + $0.headers.map { $0.value }.joined()
        }.joined()
        let planted = [Self.apiKey, Self.sharedSecret, Self.clientSecret, Self.tokenData, Self.tokenSignature]
        #expect(planted.allSatisfy { wire.contains($0) })

        let outputs: [(String, String)] = [
            ("stdout", r.stdout), ("stderr", r.stderr),
            ("HAR", try s.read("out.har")), ("JUnit", try s.read("out.xml")), ("state", try s.read("state.json")),
        ]
        for (name, text) in outputs {
            for secret in planted {
                #expect(!text.contains(secret), "\(name) leaks \(secret)")
            }
            #expect(!text.contains("Bearer bn_"), "\(name) leaks the Authorization value")
        }
        // Redaction masks, it does not drop: the trace still shows that the header was sent.
        #expect(r.stderr.contains("Bn-Api-Key: [REDACTED]"))
        #expect(try s.read("out.har").contains("[REDACTED]"))
    }

    /// A secret with characters JSON escapes (a quote, a line break, a slash) is masked as the wire carries it too.
    @Test func aSecretIsMaskedInItsJSONEscapedForm() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let secret = "PLANTED/sk\"quoted\"\nsecond-line-of-the-secret"
        let flow = try s.write(
            "f.json",
            #"""
            {"name": "escaped", "steps": [{"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
              "json": {"k": "${env.BAHN_API_KEY}", "note": "sent as ${env.BAHN_API_KEY}"}}}]}
            """#)
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--env", "sandbox", "-v", "--format", "json", "--record", s.path + "/r.har"],
            home: s.path, environment: ["EMULATOR_URL": emulator.baseURL, "BAHN_API_KEY": secret])
        #expect(r.status == 0, "\(r.all)")
        let escaped = String(
            String(
                decoding: try JSONSerialization.data(withJSONObject: [secret], options: .withoutEscapingSlashes),
                as: UTF8.self
            ).dropFirst(2).dropLast(2))
        #expect(
            emulator.receivedRequests().contains { String(decoding: $0.body, as: UTF8.self).contains(escaped) },
            "it went over the wire escaped")
        for (name, text) in [("stdout", r.stdout), ("stderr", r.stderr), ("HAR", try s.read("r.har"))] {
            #expect(!text.contains("PLANTED/sk"), "\(name) leaks the secret")
            #expect(!text.contains("second-line-of-the-secret"), "\(name) leaks a line of it")
        }
    }

    @Test func stateFileIsOwnerOnly() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--session", s.path + "/st/state.json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let attributes = try FileManager.default.attributesOfItem(atPath: s.path + "/st/state.json")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let state = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path + "/st/state.json")))
                as? [String: Any])
        #expect(
            ((state["captures"] as? [String: [String: Any]])?["emulator-orders"]?["order_id"] as? String)?.hasPrefix(
                "ord_") == true)
    }

    /// A provider's error text is output too: an Afterpay error that quotes the checkout token shows it masked in the
    /// text, the JSON document, the JUnit report and the HAR alike (the token is the state file's, read at start).
    @Test func aCheckoutTokenQuotedInAProvidersErrorIsMaskedEverywhere() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        #expect(try await BinaryRunner.run(["cashapp", "checkout", "--amount", "5.00"], home: s.path).status == 0)
        let state =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: s.path + "/state/checkout-driver/local/state.json")))
            as? [String: Any]
        let token = try #require((state?["cashapp"] as? [String: Any])?["token"] as? String)
        for format in ["text", "json"] {
            let r = try await BinaryRunner.run(
                [
                    "cashapp", "capture", "--format", format, "--junit", s.path + "/j.xml", "--record",
                    s.path + "/r.har",
                ], home: s.path)
            #expect(r.status == 1, "\(r.all)")
            #expect(
                r.all.contains("The Cash App Pay checkout [REDACTED] has not been validated"),
                "the message is there, masked: \(r.all)")
            #expect(!r.all.contains(token), "\(format): \(r.all)")
            for report in ["/j.xml", "/r.har"] {
                #expect(!(try String(contentsOfFile: s.path + report, encoding: .utf8)).contains(token), "\(report)")
            }
        }
    }
}
