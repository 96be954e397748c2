import Foundation
import TestSupport
import Testing

/// What the tool says under answers that are neither success nor a clear refusal, through the built binary against
/// `sandbox serve --faults`: a rate limit on every attempt, a garbled answer to a poll, a lost Button confirm, a
/// session that ended before the payment was sent, a deadline that cut a request short.
@Suite struct FaultAnswerTests {
    @Test(arguments: [
        (["flow", "run", "bahn-apple-pay"], "POST /api/payment_intents/*/confirm", "bahn"),
        (["cashapp", "pay"], "POST /afterpay/v2/payments/capture", "afterpay"),
        (["centra", "express", "--item", "1002-M"], "POST /centra/graphql", "centra"),
        (
            ["braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", "10.00"],
            "POST /braintree/graphql", "braintree"
        ),
    ])
    func aRateLimitOnEveryAttemptIsSaidAsSuchAndMovesNothing(
        command: [String], route: String, provider: String
    ) async throws {
        let s = try Scratch()
        // Centra's payment is its 8th request; the rule counts from there so the cart is built first.
        let attempts = provider == "centra" ? "@8-30" : "@*"
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "\(route) => status=429:Retry-After=0 \(attempts)"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(command, home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("rate limited (429) on all 3 attempts"), "\(r.stderr)")
        #expect(r.stderr.contains("hint: the service said not now (Retry-After: 0), so the last attempt did nothing"))
        #expect(
            !r.stderr.contains("check ") && !r.stderr.contains("outcome unknown"),
            "no configuration hint, no open outcome: \(r.stderr)")
        let moved = try OpenOutcomeTests.ledger(server, provider).filter {
            $0["kind"] as? String != "authorization" || provider == "centra"
        }
        #expect(moved.isEmpty)
    }

    @Test func aGarbledAnswerToTheApprovalPollIsAskedAgainNotTheEndOfTheRun() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "GET /cashapp/** => malformed @1-2"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["cashapp", "pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("status 200 with a body that is not JSON; attempt 2"), "\(r.stderr)")
        #expect(r.stdout.contains("APPROVED  CAPTURED  10.00 USD"))
    }

    @Test func aLostButtonConfirmIs75AndItsSettleCommandGetsTheCard() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /afterpay-plus/v3/button/confirm => drop @1"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["cashapp", "pay", "--flow", "button"], home: s.path)
        #expect(r.status == 75, "\(r.all)")
        #expect(
            r.stderr.contains("outcome unknown: the confirm that issues the virtual card may have gone through"),
            "\(r.stderr)")
        var settle = try OpenOutcomeTests.settleCommand(r.stderr)
        #expect(settle.starts(with: ["cashapp", "confirm", "--card-out", "NEW_FILE"]), "\(settle)")
        settle[3] = s.path + "/card.json"
        let settled = try await BinaryRunner.run(settle, home: s.path)
        #expect(settled.status == 0, "the replay is not refused: \(settled.all)")
        #expect(FileManager.default.fileExists(atPath: s.path + "/card.json"))
        #expect(try OpenOutcomeTests.openOutcomes(s.path).isEmpty, "the repeated confirm settled it")
    }

    @Test func aSessionThatEndedBeforeThePaymentWasSentSaysNothingWasPaid() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        #expect(try await BinaryRunner.run(["centra", "selection"], home: s.path).status == 0)
        _ = try curl(["-s", "-X", "POST", server.url + "/_sandbox/centra/expire-sessions"])
        let (token, contact) = try await CentraCommandTests.paymentFiles(s)
        let r = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("the session has ended, so CentraBeforePayment was not done"), "\(r.stderr)")
        #expect(r.stderr.contains("nothing was paid") && !r.stderr.contains("may be pending"), "\(r.stderr)")
    }

    @Test func aRequestTheDeadlineCutShortNamesTheDeadline() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "GET /api/payment_intents/* => latency=3000ms @*"])
        defer { server.stop() }
        let created = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "8000", "--currency", "704"], home: s.path)
        let intent = String(try #require(created.stdout.firstMatch(of: /payment_intent (pi_\w+)/)).1)
        let r = try await BinaryRunner.run(["--deadline", "1", "bahn", "intent", intent], home: s.path)
        #expect(r.status == 69, "\(r.all)")
        #expect(r.stderr.contains("the flow's deadline of 1.0s passed during step"), "\(r.stderr)")
        #expect(!r.stderr.contains("within 0") && !r.stderr.contains("raise --timeout"), "\(r.stderr)")
    }

    /// A deferred capture whose answer was lost and could not be read back: its settle command re-sends it (the same
    /// requestId) and, finding the order captured, says there is nothing more to do.
    @Test func aSettledDeferredCaptureThatFindsItDoneSaysNothingMoreToDo() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /afterpay/v2/payments/*/capture => drop @1-3; GET /afterpay/v2/payments/* => status=503 @2-4",
            ])
        defer { server.stop() }
        #expect(try await BinaryRunner.run(["cashapp", "pay", "--auth"], home: s.path).status == 0)
        let lost = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(lost.status == 75, "\(lost.all)")
        let settle = try OpenOutcomeTests.settleCommand(lost.stderr)
        #expect(settle.starts(with: ["cashapp", "capture"]), "\(settle)")
        let settled = try await BinaryRunner.run(settle, home: s.path)
        #expect(settled.status == 0, "\(settled.all)")
        #expect(settled.stderr.contains("already captured — nothing more to do"), "\(settled.stderr)")
        #expect(
            try OpenOutcomeTests.ledger(server, "afterpay").filter { $0["kind"] as? String == "capture" }.count == 1)
        #expect(try OpenOutcomeTests.openOutcomes(s.path).isEmpty)
    }

    /// The driver's own housekeeping request (registering its webhook listener) is retried like any safe request when
    /// it times out under --timeout, and no message speaks of a --deadline nobody set.
    @Test func aHousekeepingRequestThatTimedOutIsRetried() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "PUT /_sandbox/bahn/webhook-targets/* => latency=1500ms @1"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["--timeout", "1", "flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(!r.all.contains("deadline"), "\(r.all)")
    }
}
