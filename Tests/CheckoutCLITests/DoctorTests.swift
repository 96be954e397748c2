import CheckoutKit
import Foundation
import TestSupport
import Testing

/// `doctor`: configuration, services, TLS, clock skew, a sandbox serve announcement, libraries — and its exit codes.
@Suite struct DoctorTests {
    static let bahnSet = [
        "BAHN_API_KEY": "doctor-secret-key-1", "BAHN_SIGNING_KEY": "doctor-secret-key-2",
        "BAHN_WEBHOOK_SECRET": "doctor-secret-key-3",
    ]

    @Test func underTheEmulatorAllIsWell() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["doctor"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for variable in ["BAHN_API_KEY", "CENTRA_TOKEN", "AFTERPAY_SECRET_KEY", "BRAINTREE_PRIVATE_KEY"] {
            #expect(
                r.stdout.range(of: "\(variable) +set \\(emulator\\)", options: .regularExpression) != nil, "\(variable)"
            )
        }
        for service in [
            "BAHN_API_URL", "CENTRA_API_URL", "AFTERPAY_API_URL", "AFTERPAY_PLUS_URL", "CASHAPP_API_URL",
            "BRAINTREE_GRAPHQL_URL",
        ] {
            #expect(
                r.stdout.range(
                    of:
                        "\(service) +http://127\\.0\\.0\\.1:[0-9]+[^ ]*  direct · answers [0-9]{3} in [0-9]+ ms · clock skew [+-][01] s",
                    options: .regularExpression) != nil, "\(service): \(r.stdout)")
        }
        #expect(r.stdout.contains("sandbox serve:  none announced"))
        #expect(r.stdout.contains("libraries:      libcurl/") && r.stdout.contains("OpenSSL"))
        #expect(r.stdout.hasSuffix("result: all is well\n"))
    }

    /// Every missing variable at once, never a value, exit 78.
    @Test func missingVariablesAreNamedAllAtOnceWithoutAnyValue() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["doctor", "--env", "sandbox", "--provider", "bahn", "--set", "BAHN_API_URL=http://127.0.0.1:9"],
            home: s.path, environment: ["BAHN_API_KEY": "doctor-secret-key-1"])
        #expect(r.status == 78, "\(r.all)")
        #expect(
            r.stderr.contains(
                "doctor: 2 required variables are not set for environment 'sandbox': BAHN_SIGNING_KEY, BAHN_WEBHOOK_SECRET"
            ), "\(r.stderr)")
        #expect(r.stdout.contains("BAHN_API_KEY         set (environment)"), "\(r.stdout)")
        #expect(r.stdout.contains("BAHN_KEY_ID          not set"))
        #expect(!r.all.contains("doctor-secret-key-1"))
        #expect(!r.stdout.contains("centra"), "only the provider asked for")
    }

    /// A required service that does not answer is 69; JSON says so per service.
    @Test func aClosedPortIs69() async throws {
        let s = try Scratch()
        let port = try FreePort.take()
        let r = try await BinaryRunner.run(
            ["doctor", "--env", "sandbox", "--provider", "bahn", "--format", "json"], home: s.path,
            environment: Self.bahnSet.merging(["BAHN_API_URL": "http://127.0.0.1:\(port)"]) { $1 })
        #expect(r.status == 69, "\(r.all)")
        let doc = try JSON.parse(Data(r.stdout.utf8))
        let service = try #require(doc["services"]?.arrayValue?.first)
        #expect(service["variable"] == "BAHN_API_URL" && service["answered"] == false && service["required"] == true)
        #expect(service["error"]?.stringValue?.contains("Couldn't connect to server") == true, "\(service)")
        #expect(
            doc["exitCode"] == 69
                && doc["problem"]?.stringValue?.hasPrefix(
                    "BAHN_API_URL (http://127.0.0.1:\(port)) does not answer: unreachable: Failed to connect") == true,
            "\(doc)")
        #expect(doc["variables"]?.arrayValue?.allSatisfy { $0["set"] == true || $0["required"] == false } == true)
        for secret in Self.bahnSet.values { #expect(!r.all.contains(secret)) }
    }

    @Test func aStaleSandboxServeAnnouncementIsSaid() async throws {
        let s = try Scratch()
        let directory = s.path + "/state/checkout-driver/local"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(#"{"url": "http://127.0.0.1:9", "pid": 2147483000}"#.utf8).write(
            to: URL(fileURLWithPath: directory + "/emulator.json"))
        let r = try await BinaryRunner.run(["doctor", "--provider", "bahn"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            r.stdout.contains(
                "sandbox serve:  STALE announcement of http://127.0.0.1:9 (pid 2147483000): its process is gone"),
            "\(r.stdout)")
    }

    /// An HTTPS base URL whose certificate does not verify (self-signed, 30 days): what is wrong and how long it has.
    @Test func aCertificateThatDoesNotVerifyIsShownWithItsDaysLeft() async throws {
        let s = try Scratch()
        let made = try runTool(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "key.pem", "-out", "cert.pem", "-days", "30", "-subj", "/CN=127.0.0.1",
            ],
            directory: s.path)
        #expect(made.status == 0)
        let out = Pipe()
        // It serves until stopped: `stop()` on the way out, whatever the test found (SIGTERM ends it, as it starts
        // clean).
        let server = try TestProcess(
            "/usr/bin/openssl", ["s_server", "-accept", "127.0.0.1:0", "-cert", "cert.pem", "-key", "key.pem", "-www"],
            directory: s.path, standardOutput: .pipe(out))
        defer { server.stop() }
        // "ACCEPT 127.0.0.1:PORT" once it listens.
        var announced = ""
        while !announced.contains("ACCEPT") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            announced += String(decoding: chunk, as: UTF8.self)
        }
        let port = try #require(
            announced.split(separator: ":").last.map { $0.prefix { $0.isNumber } }.flatMap { Int($0) }, "\(announced)")
        let r = try await BinaryRunner.run(
            ["doctor", "--env", "sandbox", "--provider", "bahn", "--format", "json"], home: s.path,
            environment: Self.bahnSet.merging(["BAHN_API_URL": "https://127.0.0.1:\(port)"]) { $1 })
        let doc = try JSON.parse(Data(r.stdout.utf8))
        let tls = try #require(doc["services"]?.arrayValue?.first?["tls"])
        #expect(tls["verified"] == false)
        #expect(tls["problem"]?.stringValue?.contains("self-signed certificate") == true, "\(tls)")
        #expect([29, 30].contains(tls["daysLeft"]?.intValue ?? -1), "\(tls)")
        // libcurl refuses what does not verify: the service does not answer, as every request would find.
        #expect(r.status == 69, "\(r.all)")
    }
}
