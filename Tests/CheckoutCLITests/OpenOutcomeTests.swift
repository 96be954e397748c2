import Foundation
import TestSupport
import Testing

/// Money outcomes across invocations, through the built binary against `sandbox serve` with faults: a garbled answer
/// to a payment is read back, an open outcome stays in the state file and refuses the provider's next payment before
/// anything is sent (until a settle command reads it, or `--force`), the session of an open Centra payment is never
/// replaced, and what the state file saw used up — a token, a nonce, a captured checkout — is never sent again.
@Suite struct OpenOutcomeTests {
    static func ledger(_ server: ServeProcess, _ provider: String) throws -> [[String: Any]] {
        let json =
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
            as? [String: Any]
        return ((json?["entries"] as? [[String: Any]]) ?? []).filter { $0["provider"] as? String == provider }
    }

    static func state(_ home: String) throws -> [String: Any] {
        let path = home + "/state/checkout-driver/local/state.json"
        return try stateFileObject(path)  // empty: nothing was kept
    }

    static func openOutcomes(_ home: String) throws -> [String: Any] {
        (try state(home)["openOutcomes"] as? [String: Any]) ?? [:]
    }

    /// The section a run kept of a provider (a run with an open outcome keeps it to itself).
    static func runSection(_ home: String, _ provider: String) throws -> [String: Any]? {
        let runs = (try state(home)["runs"] as? [String: Any]) ?? [:]
        return runs.values.compactMap { ($0 as? [String: Any])?[provider] as? [String: Any] }.first
    }

    /// The first settle command a run printed (in its `hint:` line), as words after `checkout-driver`.
    static func settleCommand(_ stderr: String) throws -> [String] {
        let hint = try #require(
            stderr.split(separator: "\n").first { $0.hasPrefix("hint: settle it") }.map(String.init))
        return try #require(UnknownOutcomeTests.commands(in: hint).first)
    }

    // Requests to /centra/graphql in `centra express --item 1002-M`: 1–2 express-config, 3 add-item, 4 shipping,
    // 5–6 shipping-method, 7 the order before the payment, 8 paymentInstructions, 9–11 the read-back's attempts.

    @Test(arguments: ["malformed @8", "truncate=20 @8", "status=500 @8"])
    func aGarbledCentraPaymentAnswerIsReadBackNotCalledAWrongURL(fault: String) async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /centra/graphql => \(fault)"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        let placed = try Self.ledger(server, "centra").count
        if fault.hasPrefix("status") {
            // The 500 never ran the payment: the read-back finds no new order, so the outcome is open, not a failure.
            #expect(r.status == 75, "\(r.all)")
            #expect(placed == 0)
        } else {
            #expect(r.status == 0, "\(r.all)")
            #expect(r.stderr.contains("reading the session's latest order back: order"), "\(r.stderr)")
            #expect(placed == 1)
        }
        #expect(!r.stderr.contains("check CENTRA_API_URL"), "the endpoint answered well before: \(r.stderr)")
    }

    @Test func anOpenCentraPaymentKeepsItsSessionAndRefusesTheNextPaymentUntilSettled() async throws {
        let s = try Scratch()
        // 502 answers never reach the store: nothing is paid and the session stays valid, but nothing can tell that.
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /centra/graphql => status=502 @8-11"])
        defer { server.stop() }
        let open = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        #expect(open.status == 75, "\(open.all)")
        let settleCommand = try Self.settleCommand(open.stderr)
        #expect(settleCommand.starts(with: ["centra", "order", "--run"]), "\(settleCommand)")
        #expect(try Self.openOutcomes(s.path).count == 1)
        #expect(try Self.state(s.path)["centra"] == nil, "the session of an open payment stays with its run")

        let again = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        #expect(again.status == 75, "\(again.all)")
        #expect(again.stderr.contains("refused before sending: the payment of session"), "\(again.stderr)")
        #expect(
            again.stderr.contains("`checkout-driver centra order --run centra-express-")
                && again.stderr.contains("--force"), "\(again.stderr)")
        #expect(try Self.ledger(server, "centra").isEmpty, "nothing was paid twice, or at all")

        let settle = try await BinaryRunner.run(settleCommand, home: s.path)
        #expect(settle.stderr.contains("settled: the payment of session"), "\(settle.all)")
        #expect(settle.stderr.contains("has not gone through"))
        #expect(try Self.openOutcomes(s.path).isEmpty)

        let paid = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        #expect(paid.status == 0, "\(paid.all)")
        #expect(try Self.ledger(server, "centra").count == 1)
    }

    @Test func aDeadSessionOfAnOpenCentraPaymentIsNeverReplacedButForce() async throws {
        let s = try Scratch()
        // Every answer from the payment on is lost after it took effect: the token rotates four times unseen.
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /centra/graphql => drop @8-11"])
        defer { server.stop() }
        let open = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        #expect(open.status == 75, "\(open.all)")
        let session = try Self.runSection(s.path, "centra")?["session"] as? String
        #expect(session != nil)

        let order = try await BinaryRunner.run(try Self.settleCommand(open.stderr), home: s.path)
        #expect(order.status == 75, "\(order.all)")
        #expect(order.stderr.contains("Centra no longer accepts the session"), "\(order.stderr)")
        #expect(!order.stderr.contains("no order yet"))
        #expect(try Self.runSection(s.path, "centra")?["session"] as? String == session, "the paid session is kept")

        let again = try await BinaryRunner.run(["centra", "express", "--item", "1002-M"], home: s.path)
        #expect(again.status == 75, "\(again.all)")
        #expect(try Self.ledger(server, "centra").count == 1, "the advice never charges twice")

        let setAside = try await BinaryRunner.run(["--force"] + (try Self.settleCommand(open.stderr)), home: s.path)
        #expect(setAside.stderr.contains("--force: going ahead although the payment of session"), "\(setAside.all)")
        #expect(
            setAside.stderr.contains("is not settled") && !setAside.stderr.contains("has not gone through"),
            "a new session's order tells nothing of the open payment: \(setAside.stderr)")
        #expect(try Self.openOutcomes(s.path).isEmpty)
        let forced = try await BinaryRunner.run(["--force", "centra", "express", "--item", "1002-M"], home: s.path)
        #expect(forced.status == 0, "\(forced.all)")
        #expect(try Self.ledger(server, "centra").count == 2)
        #expect(try Self.openOutcomes(s.path).isEmpty)
    }

    @Test(arguments: ["status=502 @1", "malformed @1", "drop @1-4"])
    func anOpenBraintreeChargeRefusesTheNextOneUntilTheOrderIsLookedUp(fault: String) async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /braintree/graphql => \(fault)"])
        defer { server.stop() }
        let pay = ["braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", "10.00"]
        let first = try await BinaryRunner.run(pay, home: s.path)
        let charged = try Self.ledger(server, "braintree").count
        if fault == "malformed @1" {
            #expect(first.status == 0, "read back: \(first.all)")
            #expect(charged == 1)
            return
        }
        #expect(first.status == 75, "\(first.all)")
        let refused = try await BinaryRunner.run(pay, home: s.path)
        #expect(refused.status == 75, "\(refused.all)")
        #expect(refused.stderr.contains("refused before sending: the charge of order cd-"), "\(refused.stderr)")
        #expect(try Self.ledger(server, "braintree").count == charged, "nothing sent")

        let order = try #require(refused.stderr.firstMatch(of: /--order-id (cd-[0-9a-f]+)/)).1
        // Typed as a person would, without the run the printed command names: an order id is the file's to settle.
        let look = try await BinaryRunner.run(["braintree", "transaction", "--order-id", String(order)], home: s.path)
        #expect(look.stderr.contains("settled: the charge of order \(order)"), "\(look.all)")
        #expect(try Self.openOutcomes(s.path).isEmpty)
        let next = try await BinaryRunner.run(pay, home: s.path)
        #expect(next.status == 0, "\(next.all)")
    }

    @Test func aCheckoutTheStateSawCapturedAndATokenThatPaidAreRefusedBeforeSending() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        #expect(try await BinaryRunner.run(["cashapp", "pay", "--auth"], home: s.path).status == 0)
        #expect(try await BinaryRunner.run(["cashapp", "capture"], home: s.path).status == 0)
        let again = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(again.status == 1, "\(again.all)")
        #expect(
            again.stderr.contains("refused before sending: order") && again.stderr.contains("is already CAPTURED"),
            "\(again.stderr)")
        #expect(try Self.ledger(server, "afterpay").filter { $0["kind"] as? String == "capture" }.count == 1)

        let (token, contact) = try await CentraCommandTests.paymentFiles(s)
        let paid = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token], home: s.path)
        #expect(paid.status == 0, "\(paid.all)")
        let twice = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token], home: s.path)
        #expect(twice.status == 1, "\(twice.all)")
        #expect(
            twice.stderr.contains(
                "refused before sending: this Apple Pay token was already used by Centra paymentInstructions"),
            "\(twice.stderr)")
        #expect(twice.stderr.contains("checkout-driver applepay token"))
        #expect(try Self.ledger(server, "centra").count == 1)
    }

    /// Ten whole payments at once under one `sandbox serve`, on the default state file: each run works in its own
    /// scope, so each reports its own payment, and the ledger holds exactly what was reported.
    @Test(arguments: [
        (["cashapp", "pay"], "afterpay", "capture"),
        (["centra", "express", "--item", "1002-M"], "centra", "authorization"),
        (["flow", "run", "bahn-apple-pay"], "bahn", "capture"),
        (
            ["braintree", "apple-pay", "--nonce", "fake-apple-pay-visa-nonce", "--amount", "10.00"], "braintree",
            "capture"
        ),
    ])
    func parallelRunsOnOneStateFileNeverShareACheckout(command: [String], provider: String, kind: String) async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let home = s.path
        let results = try await withThrowingTaskGroup(of: BinaryRunner.Result.self) { group in
            for _ in 0..<10 { group.addTask { try await BinaryRunner.run(command, home: home) } }
            var all: [BinaryRunner.Result] = []
            for try await r in group { all.append(r) }
            return all
        }
        for r in results { #expect(r.status == 0, "\(r.all)") }
        let moved = try Self.ledger(server, provider).filter { $0["kind"] as? String == kind }
        #expect(moved.count == 10, "ten payments, each once: \(moved.count)")
        // What each run names as its payment is one of the ledger's, and no two runs name the same one.
        let pattern: Regex<(Substring, Substring)>? =
            switch provider {
            case "afterpay": /order (\d+)  APPROVED  CAPTURED/
            case "centra": /\((ord_[0-9a-f]+)\)/
            case "braintree": /transaction +(\S+)  SUBMITTED_FOR_SETTLEMENT/
            default: nil
            }
        if let pattern {
            let reported = results.compactMap { $0.stdout.firstMatch(of: pattern).map { String($0.1) } }
            #expect(Set(reported).count == 10, "each run reports a payment of its own: \(reported)")
            #expect(
                Set(moved.compactMap { $0["reference"] as? String }) == Set(reported),
                "the ledger holds exactly what was reported")
        }
        let runs = (try Self.state(s.path)["runs"] as? [String: Any]) ?? [:]
        // A Braintree run keeps nothing (a fixed fake nonce is not single-use); the others keep their own scope each.
        #expect(
            runs.count == (provider == "braintree" ? 0 : 10), "each run is recorded under its own id: \(runs.count)")
    }

    /// Single steps continue one chain, so a second one waits while the first holds it: the status read starts only
    /// when the confirm, held 1.5 s by the emulator, has ended.
    @Test func aSingleStepWaitsForAnotherHoldingTheChain() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /api/payment_intents/*/confirm => latency=1500ms @1"])
        defer { server.stop() }
        let created = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "8000", "--currency", "704", "--order-id", "w-1"], home: s.path)
        let intent = String(try #require(created.stdout.firstMatch(of: /payment_intent (pi_\w+)/)).1)
        let token = try await BahnCommandTests.makeToken(s)
        let confirm = try LiveProcess(["bahn", "confirm", "--intent", intent, "--token-file", token], home: s.path)
        #expect(
            await eventually(timeout: 10) {
                (try? curl(["-s", server.url + "/_sandbox/requests"]))?.contains("/confirm") == true
            }, "the confirm is in flight")
        let started = Date()
        let read = try await BinaryRunner.run(["bahn", "intent", intent], home: s.path)
        let waited = Date().timeIntervalSince(started)
        #expect(confirm.exitStatus(within: 10) == 0, "\(confirm.stderr)")
        #expect(read.status == 0, "\(read.all)")
        #expect(read.stdout.contains("succeeded"), "it read the intent after the confirm: \(read.stdout)")
        #expect(waited > 0.8, "it waited for the chain (\(waited) s)")
    }

    /// One record of spent tokens for every provider and every run: a token Bahn used up is refused by Centra, and by a
    /// new Bahn intent, before anything is sent; the confirm's own replay under its key still goes through.
    @Test func aTokenThatPaidOnOneProviderIsRefusedByEveryOther() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let (token, contact) = try await CentraCommandTests.paymentFiles(s)
        let paid = try await BinaryRunner.run(
            [
                "bahn", "confirm", "--order-id", "x-1", "--amount", "84800", "--currency", "752",
                "--token-file", token, "--idempotency-key", "k-x-1",
            ], home: s.path)
        #expect(paid.status == 0, "\(paid.all)")
        let replay = try await BinaryRunner.run(
            ["bahn", "confirm", "--order-id", "x-1", "--token-file", token, "--idempotency-key", "k-x-1"], home: s.path)
        #expect(replay.status == 0, "the replay under the same key is allowed: \(replay.all)")
        let centra = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token], home: s.path)
        #expect(centra.status == 1, "\(centra.all)")
        #expect(
            centra.stderr.contains(
                "refused before sending: this Apple Pay token was already used by Bahn's confirm of pi_"),
            "\(centra.stderr)")
        let another = try await BinaryRunner.run(
            ["bahn", "confirm", "--order-id", "x-2", "--amount", "84800", "--currency", "752", "--token-file", token],
            home: s.path)
        #expect(another.status != 0, "\(another.all)")
        #expect(try OpenOutcomeTests.ledger(server, "centra").isEmpty)
        #expect(try OpenOutcomeTests.ledger(server, "bahn").filter { $0["kind"] as? String == "capture" }.count == 1)
    }

    /// A replay that gets no answer — rate limited on every attempt — settles nothing: the outcome stays open.
    @Test func aReplayThatIsRateLimitedLeavesTheOutcomeOpen() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /api/payment_intents/*/confirm => drop @1-3; POST /api/payment_intents/*/confirm => status=429:Retry-After=0 @4-6; GET /api/payment_intents/* => status=503 @1-3",
            ])
        defer { server.stop() }
        let lost = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(lost.status == 75, "\(lost.all)")
        let resend = try Self.settleCommand(lost.stderr)
        #expect(resend.contains("--idempotency-key"), "\(resend)")
        let limited = try await BinaryRunner.run(resend, home: s.path)
        #expect(limited.status == 1 && limited.stderr.contains("rate limited (429)"), "\(limited.all)")
        #expect(try Self.openOutcomes(s.path).count == 1, "a rate limit answers nothing about the lost confirm")
        let settled = try await BinaryRunner.run(resend, home: s.path)
        #expect(settled.status == 0, "the replay gets the original answer: \(settled.all)")
        #expect(try Self.openOutcomes(s.path).isEmpty)
        #expect(try Self.ledger(server, "bahn").filter { $0["kind"] as? String == "capture" }.count == 1)
    }

    /// `cashapp approve` in another terminal reaches the request a running `cashapp pay` waits on (in its run's scope).
    @Test func approveFromAnotherTerminalReachesTheRunningPay() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--cashapp-approval", "manual"])
        defer { server.stop() }
        #expect(
            try await BinaryRunner.run(
                ["cashapp", "pay", "--amount", "1.00", "--approval-timeout", "0.5", "--poll-interval", "0.1"],
                home: s.path
            ).status == 1,
            "an earlier run leaves its request in the chain")
        let pay = try LiveProcess(["cashapp", "pay", "--amount", "3.00", "--poll-interval", "0.1"], home: s.path)
        #expect(
            await eventually(timeout: 10) {
                ((try? Self.state(s.path)["runs"] as? [String: Any]) ?? [:]).values.contains {
                    (($0 as? [String: Any])?["cashapp"] as? [String: Any])?["requestId"] != nil
                        && (($0 as? [String: Any])?["run"] == nil)
                }
            }, "the running pay has made its request")
        let approved = try await BinaryRunner.run(["cashapp", "approve"], home: s.path)
        #expect(approved.status == 0, "\(approved.all)")
        #expect(pay.exitStatus(within: 10) == 0, "\(pay.stderr)")
        #expect(try Self.ledger(server, "afterpay").compactMap { $0["amount"] as? Int } == [300])
    }
}
