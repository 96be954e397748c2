import CheckoutKit
import Foundation
import TestSupport
import Testing

/// `--format json` everywhere: every outcome a script may read, errors included, is one JSON document on stdout
/// (the message stays on stderr for people).
@Suite struct JSONOutputTests {
    func document(_ text: String) throws -> [String: Any] {
        try #require(
            try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not one JSON document: \(text)")
    }

    @Test(arguments: [
        (["flow", "run", "no-such-flow"], Int32(64)),
        (["flow", "run", "emulator-orders", "--timeout", "soon"], Int32(64)),
        (["flwo", "list"], Int32(64)),
        (["bahn", "confirm", "--intent", "pi_1", "--token-file", "/nonexistent.json"], Int32(65)),
    ])
    func anErrorIsAJSONDocumentOnStdoutAndAMessageOnStderr(arguments: [String], status: Int32) async throws {
        for format in ["json", "jsonl"] {
            let r = try await BinaryRunner.run(arguments + ["--format", format])
            #expect(r.status == status, "\(arguments) \(format): \(r.all)")
            // One document, or in JSON lines the last line: the outcome, with its error.
            let outcome = format == "json" ? r.stdout : String(r.stdout.split(separator: "\n").last ?? "")
            let error = try #require(try document(outcome)["error"] as? [String: Any])
            #expect(error["exitCode"] as? Int == Int(status))
            #expect((error["message"] as? String)?.isEmpty == false)
            #expect(error["hint"] is String)
            #expect(r.stderr.contains("error: \(error["message"] as? String ?? "?")"))
            #expect(!r.stdout.contains("}\n{\"error\""), "the error is told once: \(r.stdout)")
        }
    }

    @Test func aFailedFlowGivesOneDocumentCarryingItsError() async throws {
        let s = try Scratch()
        let token = try await BahnCommandTests.makeToken(s, amount: 5100)
        let r = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "j-1", "--amount", "5100", "--currency", "704",
                "--token-file", token, "--format", "json",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        let doc = try document(r.stdout)
        #expect(doc["passed"] as? Bool == false)
        #expect(((doc["error"] as? [String: Any])?["message"] as? String)?.contains("card_declined") == true)
        // The step's account of money: the refused charge, with its amount and currency.
        let money = ((doc["steps"] as? [[String: Any]])?.first?["money"] as? [[String: Any]]) ?? []
        #expect(
            money.count == 1 && money.first?["kind"] as? String == "charge"
                && money.first?["outcome"] as? String == "refused"
                && money.first?["amount"] as? Int == 5100 && money.first?["currency"] as? String == "704", "\(money)")
    }

    /// A confirm that only authorises (manual capture) is an authorization awaiting its capture, not a charge — and
    /// the capture that follows is the money taken, once.
    @Test func aManualCaptureIsAnAuthorizationThenACapture() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let token = try await BahnCommandTests.makeToken(s)
        func money(_ r: BinaryRunner.Result) throws -> [[String: Any]] {
            ((try document(r.stdout)["steps"] as? [[String: Any]])?.first?["money"] as? [[String: Any]]) ?? []
        }
        let confirm = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "m-1", "--amount", "8000", "--currency", "704",
                "--token-file", token, "--capture", "manual", "--format", "json",
            ], home: s.path)
        #expect(confirm.status == 0, "\(confirm.all)")
        let authorised = try money(confirm)
        #expect(
            authorised.count == 1 && authorised.first?["kind"] as? String == "authorization"
                && authorised.first?["status"] as? String == "authorised, awaiting capture"
                && authorised.first?["amount"] as? Int == 8000, "\(authorised)")
        let capture = try await BinaryRunner.run(["bahn", "capture", "--format", "json"], home: s.path)
        #expect(capture.status == 0, "\(capture.all)")
        let captured = try money(capture)
        #expect(
            captured.count == 1 && captured.first?["kind"] as? String == "capture"
                && captured.first?["outcome"] as? String == "done", "\(captured)")
    }

    /// A confirm whose answer was lost and could not be read back is an open outcome in the account too: unknown, with
    /// its amount and reference — what there is to settle — and the commands that settle it.
    @Test func anUnknownOutcomeKeepsItsAmountInTheAccount() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /api/payment_intents/*/confirm => drop @1-3; GET /api/payment_intents/* => status=503 @1-3",
            ])
        defer { server.stop() }
        let token = try await BahnCommandTests.makeToken(s)
        let r = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "u-1", "--amount", "8000", "--currency", "704",
                "--token-file", token, "--format", "json",
            ], home: s.path)
        #expect(r.status == 75, "\(r.all)")
        let money = ((try document(r.stdout)["steps"] as? [[String: Any]])?.first?["money"] as? [[String: Any]]) ?? []
        #expect(money.count == 1, "\(money)")
        #expect(
            money.first?["outcome"] as? String == "unknown" && money.first?["amount"] as? Int == 8000
                && (money.first?["reference"] as? String)?.hasPrefix("pi_") == true, "\(money)")
        #expect(
            ((money.first?["settle"] as? [String]) ?? []).contains { $0.contains("checkout-driver bahn intent pi_") },
            "\(money)")
    }

    /// JSON lines carry each movement of money as it happens, beside the steps.
    @Test func moneyIsAnEventInJSONLines() async throws {
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--format", "jsonl"])
        #expect(r.status == 0, "\(r.all)")
        let events = try r.stdout.split(separator: "\n").map { try document(String($0)) }.filter {
            $0["event"] as? String == "money"
        }
        #expect(
            events.count == 1 && events.first?["step"] as? String == "confirm"
                && events.first?["kind"] as? String == "charge"
                && events.first?["amount"] as? Int == 8000 && events.first?["status"] as? String == "succeeded",
            "\(events)")
    }

    @Test func versionInJSON() async throws {
        let r = try await BinaryRunner.run(["--version", "--format", "json"])
        #expect(r.status == 0)
        let doc = try document(r.stdout)
        #expect(doc["name"] as? String == "checkout-driver" && doc["version"] as? String == DriverVersion.current)
        #expect(doc["commit"] is NSNull, "a development build has no commit: \(doc)")
    }
}
