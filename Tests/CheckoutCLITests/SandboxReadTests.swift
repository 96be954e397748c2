import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// `sandbox ledger | requests | events | trigger` and `bahn events resend`: a running emulator read and driven from the
/// command line; trigger and resend reach `bahn listen`.
@Suite struct SandboxReadTests {
    @Test func withoutARunningEmulatorThereIsNothingToRead() async throws {
        let s = try Scratch()
        for command in [["sandbox", "ledger"], ["sandbox", "events"], ["bahn", "events", "resend", "evt_1"]] {
            let r = try await BinaryRunner.run(command, home: s.path)
            #expect(r.status == 69, "\(command): \(r.all)")
            #expect(r.stderr.contains("no running emulator to ask: no sandbox serve is announced"), "\(r.stderr)")
        }
    }

    /// The ledger route answers a page at a time; `sandbox ledger` reads them all.
    @Test func sandboxLedgerReadsEveryPage() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        for n in 1...1234 {
            emulator.ledger.append(provider: "bahn", kind: .capture, reference: "pi_\(n)", amount: n, currency: "EUR")
        }
        let r = try await BinaryRunner.run(
            ["sandbox", "ledger", "--url", emulator.baseURL, "--format", "jsonl"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let ids = r.stdout.split(separator: "\n").compactMap { try? JSON.parse(Data($0.utf8))["id"]?.stringValue }
        #expect(ids == (1...1234).map { String(format: "le_%06d", $0) })
    }

    @Test func ledgerRequestsEventsTriggerAndResendAgainstSandboxServe() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let listener = try LiveProcess(["bahn", "listen", "--format", "jsonl"], home: s.path)
        defer { listener.send(SIGKILL) }
        #expect(listener.waitFor("listening for Bahn webhooks", on: .stderr), "\(listener.stderr)")

        let flow = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "-q"], home: s.path)
        #expect(flow.status == 0, "\(flow.all)")
        let ledger = try await BinaryRunner.run(["sandbox", "ledger"], home: s.path)
        #expect(ledger.status == 0, "\(ledger.all)")
        #expect(
            ledger.stdout.range(
                of:
                    "^id +provider +kind +reference +amount +at\nle_000001  bahn  +authorization  pi_[0-9A-Z]+  8000 VND  20",
                options: .regularExpression) != nil, "\(ledger.stdout)")
        #expect(ledger.stdout.contains("  capture  "))
        let entries = try JSON.parse(
            Data(try await BinaryRunner.run(["sandbox", "ledger", "--format", "json"], home: s.path).stdout.utf8))[
                "entries"]
        #expect(entries?.arrayValue?.count == 2)
        let requests = try await BinaryRunner.run(["sandbox", "requests", "--format", "jsonl"], home: s.path)
        // What the emulator received holds credentials: shown masked, as every output is.
        #expect(
            !requests.stdout.contains(TestCredentials.bahnAPIKey)
                && requests.stdout.contains(#"["Bn-Api-Key","[REDACTED]"]"#), "\(requests.stdout.prefix(3000))")
        let lines = try requests.stdout.split(separator: "\n").map { try JSON.parse(Data($0.utf8)) }
        #expect(
            lines.contains {
                $0["method"] == "POST" && $0["target"] == "/api/payment_intents" && $0["status"] == 200
                    && $0["receivedAt"]?.stringValue.flatMap(Timestamp.parse) != nil
            }, "\(requests.stdout)")
        // The table: a header row, and each request's time and the status it was answered.
        let table = try await BinaryRunner.run(["sandbox", "requests"], home: s.path)
        #expect(
            table.stdout.hasPrefix("received")
                && table.stdout.contains(/\n20[0-9T:.-]+Z  POST    \/api\/payment_intents  +200  +\d+ bytes/),
            "\(table.stdout.prefix(800))")

        // trigger: a made-up intent's event, delivered to the listener.
        let trigger = try await BinaryRunner.run(["sandbox", "trigger", "payment_intent.canceled"], home: s.path)
        #expect(trigger.status == 0, "\(trigger.all)")
        let sent = try #require(
            trigger.stdout.firstMatch(
                of: /sent (evt_[0-9A-Z]+) payment_intent.canceled for (pi_[0-9A-Z]+) to ([0-9]+) targets?/),
            "\(trigger.stdout)")
        let event = String(sent.1)
        #expect(listener.waitFor(#""id":"\#(event)""#), "\(listener.stdout)")
        #expect(listener.stdout.contains(#""type":"payment_intent.canceled""#))

        // resend: the same event again; the listener tells it is one it already has.
        let resend = try await BinaryRunner.run(["bahn", "events", "resend", event], home: s.path)
        #expect(resend.status == 0 && resend.stdout.hasPrefix("resent \(event) to "), "\(resend.all)")
        #expect(listener.waitFor(#"{"environment":"local","event":"duplicate","id":"\#(event)""#), "\(listener.stdout)")

        let eventsOutput = try await BinaryRunner.run(["sandbox", "events", "--format", "json"], home: s.path).stdout
        #expect(
            eventsOutput.contains(#""client_secret": "[REDACTED]""#) && !eventsOutput.contains("_secret_"),
            "\(eventsOutput.prefix(2000))")
        let events = try JSON.parse(Data(eventsOutput.utf8))
        let record = try #require(events["events"]?.arrayValue?.first { $0["id"]?.stringValue == event })
        #expect(record["provider"] == "bahn" && record["subject"]?.stringValue == String(sent.2), "\(record)")
        let deliveries = record["deliveries"]?.arrayValue ?? []
        #expect(deliveries.count >= 2 && deliveries.allSatisfy { $0["status"] == "delivered" }, "\(deliveries)")
        let text = try await BinaryRunner.run(["sandbox", "events"], home: s.path)
        #expect(
            text.stdout.range(
                of:
                    "\(event)  payment_intent.canceled +\(sent.2)  delivered  [^\n]*: delivered \\(1 attempt\\), [^\n]*: delivered \\(1 attempt\\)",
                options: .regularExpression) != nil, "\(text.stdout)")

        // An object the emulator does not have is a failure (as Bahn's 404 is), a mistyped command a usage error.
        let unknown = try await BinaryRunner.run(["bahn", "events", "resend", "evt_nope"], home: s.path)
        #expect(unknown.status == 1 && unknown.stderr.contains("No such event: evt_nope"), "\(unknown.all)")
        let intent = try await BinaryRunner.run(
            ["sandbox", "trigger", "payment_intent.status.succeeded", "--intent", "pi_nope"], home: s.path)
        #expect(intent.status == 1 && intent.stderr.contains("No such payment_intent: pi_nope"), "\(intent.all)")
        let type = try await BinaryRunner.run(["sandbox", "trigger", "payment_intent.status.succeded"], home: s.path)
        #expect(
            type.status == 64 && type.stderr.contains("did you mean 'payment_intent.status.succeeded'?"), "\(type.all)")
        // The generic spelling: which provider's emulator, and what the event is about (the flow's intent).
        let paid = try #require(entries?.arrayValue?.first?["reference"]?.stringValue)
        let subject = try await BinaryRunner.run(
            ["sandbox", "trigger", "payment_intent.canceled", "--provider", "bahn", "--subject", paid], home: s.path)
        #expect(
            subject.status == 0 && subject.stdout.contains("payment_intent.canceled for \(paid) to "), "\(subject.all)")
        let both = try await BinaryRunner.run(
            ["sandbox", "trigger", "payment_intent.canceled", "--subject", "pi_1", "--intent", "pi_2"], home: s.path)
        #expect(both.status == 64 && both.stderr.contains("not both"), "\(both.all)")
        // Only a provider whose emulator sends webhooks has events.
        let quiet = try await BinaryRunner.run(["sandbox", "events", "--provider", "centra"], home: s.path)
        #expect(quiet.status == 64 && quiet.stderr.contains("bahn"), "\(quiet.all)")
        let bahnOnly = try await BinaryRunner.run(["sandbox", "events", "--provider", "bahn"], home: s.path)
        #expect(bahnOnly.status == 0 && bahnOnly.stdout.contains(event), "\(bahnOnly.all)")

        // A reader that closed the pipe ends the command quietly, with SIGPIPE's status (141): no "Broken pipe", no 74.
        let piped = try BinaryRunner.runWithItsReaderGone(["sandbox", "ledger", "--format", "jsonl"], home: s.path)
        #expect(piped.status == 141 && piped.stderr.isEmpty, "\(piped)")
        // A listener whose reader goes stops listening, as a Unix tool ends: the second event it would print ends it.
        let shell = try TestProcess(
            "/bin/bash",
            [
                "-c",
                "\"$0\" bahn listen --format jsonl 2>/dev/null | head -1 >/dev/null; echo \"${PIPESTATUS[0]}\" > \"$1\"",
                BinaryRunner.binary, s.path + "/listen-status",
            ],
            environment: BinaryRunner.environment(home: s.path))
        defer { shell.stop() }
        for _ in 0..<50 where shell.isRunning {
            _ = try await BinaryRunner.run(["sandbox", "trigger", "payment_intent.canceled"], home: s.path)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(!shell.isRunning, "the listener ended when its reader went")
        #expect(try String(contentsOfFile: s.path + "/listen-status", encoding: .utf8) == "141\n")
    }
}
