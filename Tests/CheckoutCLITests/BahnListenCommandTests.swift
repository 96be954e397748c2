import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// `bahn listen`: the webhooks it verifies, dedupes and prints, and the emulator handed back to it by a flow that
/// awaited webhooks.
extension BahnCommandTests {
    @Test func listenVerifiesDedupesAndPrints() async throws {
        let s = try Scratch()
        // Somewhere to forward to (the emulator's echo answers 200); not announced, so --env sandbox stays apart.
        let target = try ServeProcess(home: s.path + "/target", arguments: ["--no-announce"])
        defer { target.stop() }
        let out = Pipe()
        let err = Pipe()
        let listener = try TestProcess(
            BinaryRunner.binary,
            ["bahn", "listen", "--env", "sandbox", "--format", "jsonl", "--forward-to", target.url + "/_sandbox/echo"],
            environment: BinaryRunner.environment(
                home: s.path, extra: ["BAHN_WEBHOOK_SECRET": "whsec_listen_test_secret"]),
            standardOutput: .pipe(out), standardError: .pipe(err))
        defer { listener.stop() }
        let line = try #require(err.fileHandleForReading.readLine(containing: "listening for Bahn webhooks at "))
        let url = try #require(line.split(separator: " ").last.map(String.init))

        let body =
            #"{"id":"evt_1","type":"payment_intent.status.succeeded","created":1,"data":{"payment_intent":{"id":"pi_1","status":"succeeded"}}}"#
        func post(secret: String, t: Int) throws -> String {
            let mac = hmacHex(secret: secret, message: "\(t).\(body)")
            return try curl([
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Content-Type: application/json",
                "-H", "Bn-Signature: t=\(t),v1=\(mac)", "--data-binary", body, url,
            ])
        }
        let now = Int(Date().timeIntervalSince1970)
        #expect(try post(secret: "whsec_listen_test_secret", t: now) == "200")
        // duplicate: accepted, not printed again
        #expect(try post(secret: "whsec_listen_test_secret", t: now) == "200")
        #expect(try post(secret: "wrong_secret_value", t: now) == "400")
        #expect(try post(secret: "whsec_listen_test_secret", t: now - 301) == "400")  // stale
        usleep(300_000)  // the forward of the one new delivery completes

        listener.signal(SIGINT)
        #expect(listener.exits(within: 3), "Ctrl-C stops bahn listen")
        #expect(listener.stop() == .exited(0))
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let lines = printed.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let events = lines.filter { $0["event"] as? String == "webhook" }
        #expect(events.count == 1, "\(printed)")
        #expect(
            events.first?["id"] as? String == "evt_1" && events.first?["environment"] as? String == "sandbox",
            "\(printed)")
        #expect((events.first?["time"] as? String)?.hasPrefix("20") == true, "each line says when: \(printed)")
        let forwards = lines.filter { $0["event"] as? String == "forwarded" }
        #expect(
            forwards.count == 1 && forwards.first?["delivered"] as? Bool == true
                && forwards.first?["status"] as? Int == 200, "\(printed)")
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(errors.contains("signature does not match"))
        #expect(errors.contains("stale signature"))
    }

    @Test func aFlowAwaitingWebhooksHandsTheEmulatorBackToBahnListen() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }

        let out = Pipe()
        let err = Pipe()
        let listener = try TestProcess(
            BinaryRunner.binary, ["bahn", "listen"], environment: BinaryRunner.environment(home: s.path),
            standardOutput: .pipe(out), standardError: .pipe(err))
        defer { listener.stop() }
        // "listening …" comes once it has registered with sandbox serve.
        #expect(err.fileHandleForReading.readLine(containing: "listening for Bahn webhooks") != nil)

        // A flow that awaits its own webhook borrows the emulator's target, then gives it back…
        let flow = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(flow.status == 0, "\(flow.all)")
        // …so this confirm's events reach the listener.
        let token = try await Self.makeToken(s)
        let confirm = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "after", "--amount", "8000", "--currency", "704",
                "--token-file", token,
            ], home: s.path)
        #expect(confirm.status == 0, "\(confirm.all)")
        let intent = try #require(
            confirm.stdout.split(separator: "\n").first { $0.hasPrefix("payment_intent ") }?.split(separator: " ")[1])
        // Delivery is asynchronous: wait (up to the end of the stream) for the line, then stop the listener.
        let delivered = Task.detached {
            out.fileHandleForReading.readLine(containing: "payment_intent.status.succeeded  \(intent)")
        }
        let watchdog = Task.detached {
            try await Task.sleep(for: .seconds(10))
            listener.signal(SIGINT)
        }
        let printed = await delivered.value
        watchdog.cancel()
        // SIGTERM (a container's stop) ends it as cleanly as Ctrl-C: 0, as the exit-code table says.
        listener.signal(SIGTERM)
        #expect(listener.exits(within: 3), "SIGTERM stops bahn listen")
        #expect(listener.termination == .exited(0))
        #expect(printed != nil)
    }

    /// HMAC-SHA256 with the openssl command line: an implementation independent of the one under test.
    private func hmacHex(secret: String, message: String) -> String {
        let input = Pipe()
        let output = Pipe()
        guard
            let p = try? TestProcess(
                "/usr/bin/openssl", ["dgst", "-sha256", "-hmac", secret, "-r"],
                standardInput: .pipe(input), standardOutput: .pipe(output))
        else { return "" }
        input.fileHandleForWriting.write(Data(message.utf8))
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return String(text.prefix { $0 != " " })
    }

    @Test func listenRefusesOneJSONDocumentAndWarnsWhenNothingCanDeliver() async throws {
        let json = try await BinaryRunner.run(["bahn", "listen", "--format", "json"])
        #expect(json.status == 64 && json.stderr.contains("use --format jsonl"), "\(json.all)")
        let s = try Scratch()
        let listener = try LiveProcess(["bahn", "listen"], home: s.path)
        #expect(
            await eventually(timeout: 10) { listener.stderr.contains("listening for Bahn webhooks at") },
            "\(listener.stderr)")
        #expect(
            await eventually(timeout: 5) {
                listener.stderr.contains("warning: no `checkout-driver sandbox serve` is running")
            }, "\(listener.stderr)")
        listener.send(SIGINT)
        #expect(listener.exitStatus(within: 5) == 0)
    }
}
