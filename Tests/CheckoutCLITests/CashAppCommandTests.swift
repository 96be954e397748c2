import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// The Cash App commands through the built binary against the emulator: both flows end to end with no configuration,
/// every single step chained through the state file, the customer played from another invocation, the documented
/// failure paths (decline, no grant, timeout, failed or skipped validation) and secrets on every output.
@Suite struct CashAppCommandTests {
    static let fast = ["--poll-interval", "0.05"]

    static func ledger(_ server: ServeProcess) throws -> [[String: Any]] {
        let json =
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
            as? [String: Any]
        return ((json?["entries"] as? [[String: Any]]) ?? []).filter { $0["provider"] as? String == "afterpay" }
    }

    static func state(_ home: String) throws -> [String: Any] {
        (try stateFileObject(home + "/state/checkout-driver/local/state.json")["cashapp"] as? [String: Any]) ?? [:]
    }

    @Test func theServerCheckoutCapturesWithNoConfiguration() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["cashapp", "pay", "--amount", "19.99"] + Self.fast, home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for step in ["checkout", "sign", "request", "approval", "validate", "capture"] {
            #expect(r.stdout.contains("✓ \(step)"), "\(step)")
        }
        #expect(r.stdout.contains("checkout          19.99 USD  (1999 cents)"), "\(r.stdout)")
        #expect(r.stdout.contains(/payment           order \d+  APPROVED  CAPTURED  19.99 USD/), "\(r.stdout)")
        #expect(r.stdout.contains("validated         SUCCESS"))
        #expect(
            r.stderr.contains("request: approve in Cash App: http://127.0.0.1:"),
            "the approval link is shown: \(r.stderr)")
        #expect(
            r.stderr.components(separatedBy: "approve in Cash App:").count == 2, "once, though the wait offers it too")
    }

    @Test func authorisedThenCapturedLaterChainedThroughTheStateFile() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let authorised = try await BinaryRunner.run(
            ["cashapp", "pay", "--auth", "--amount", "0.07"] + Self.fast, home: s.path)
        #expect(authorised.status == 0, "\(authorised.all)")
        #expect(authorised.stdout.contains("AUTH_APPROVED  0.07 USD  (open to capture 0.07)"), "\(authorised.stdout)")
        let captured = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(captured.status == 0, "\(captured.all)")
        #expect(captured.stdout.contains("CAPTURED  0.07 USD  (open to capture 0.00)"), "\(captured.stdout)")
        let ledger = try Self.ledger(server)
        #expect(ledger.map { $0["kind"] as? String } == ["authorization", "capture"])
        #expect(ledger.map { $0["amount"] as? Int } == [7, 7], "exact cents")
        // Captured already: a second capture is refused by Afterpay, and moves nothing.
        let again = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(again.status == 1, "\(again.all)")
        #expect(try Self.ledger(server).count == 2)
    }

    @Test func theButtonFlowShowsTheVirtualCardMaskedOrWritesItToANewFile() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["cashapp", "pay", "--flow", "button", "--amount", "1000000.00"] + Self.fast, home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for step in ["button", "sign", "request", "approval", "confirm"] {
            #expect(r.stdout.contains("✓ \(step)"), "\(step)")
        }
        #expect(r.stdout.contains(/virtual card      \w+ •••• \d{4}  expires \S+/), "\(r.stdout)")
        #expect(r.stdout.contains(/authorise before  \S+  \(\d+ min \d+ s left\)/), "\(r.stdout)")
        let out = s.path + "/card.json"
        let written = try await BinaryRunner.run(
            ["cashapp", "pay", "--flow", "button", "--card-out", out] + Self.fast, home: s.path)
        #expect(written.status == 0, "\(written.all)")
        let card = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as? [String: Any]
        let number = try #require(
            ((card?["paymentDetails"] as? [String: Any])?["virtualCard"] as? [String: Any])?["cardNumber"] as? String)
        let cvc = try #require(
            ((card?["paymentDetails"] as? [String: Any])?["virtualCard"] as? [String: Any])?["cvc"] as? String)
        #expect(
            number.count >= 12 && !written.all.contains(number) && !r.all.contains(number),
            "the number is only in the file")
        // (As a word: the random ids printed, of lower-case letters and digits, hold "cvc" now and then.)
        #expect(!written.stdout.contains(/\bcvc\b/) && !written.all.contains("\"\(cvc)\""))
        #expect(try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int == 0o600)
        let refused = try await BinaryRunner.run(
            ["cashapp", "pay", "--flow", "button", "--card-out", out] + Self.fast, home: s.path)
        #expect(refused.status == 64, "\(refused.all)")
        #expect(refused.stderr.contains("already exists"))
        #expect(!refused.all.contains("environment:"), "refused before any emulator started or anything was sent")
    }

    @Test(arguments: [
        ("13.13", "the customer declined the payment in Cash App"),
        ("14.14", "Cash App approved customer request GRR_"),
        ("16.16", "Afterpay did not validate the Cash App order: status FAILED"),
    ])
    func eachFailureEndsWithExit1AndASentenceSayingWhich(amount: String, says: String) async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["cashapp", "pay", "--amount", amount] + Self.fast, home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stderr.contains("error: \(says)"), "\(r.stderr)")
        #expect(!r.stdout.contains("✓ capture"))
    }

    @Test func aCaptureAfterAFailedValidationIsRefusedAndMovesNothing() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let failed = try await BinaryRunner.run(["cashapp", "pay", "--amount", "16.16"] + Self.fast, home: s.path)
        #expect(failed.status == 1 && failed.stderr.contains("status FAILED"), "\(failed.all)")
        let capture = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(capture.status == 1, "\(capture.all)")
        #expect(
            capture.stderr.contains("capture refused: Afterpay has not validated this Cash App order"),
            "\(capture.stderr)")
        #expect(try Self.ledger(server).isEmpty)
    }

    @Test func theApprovalTimeoutEndsWithExit1() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["cashapp", "pay", "--amount", "15.15", "--approval-timeout", "0.5"] + Self.fast, home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(
            r.stderr.contains("error: no decision from the customer within 0.5s: customer request GRR_"), "\(r.stderr)")
        #expect(r.stderr.contains("--approval-timeout"))
    }

    @Test func theDeclinedFlowPassesWhenTheCustomerDeclines() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "cashapp-declined", "--var", "poll_interval=50ms"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.contains("passed: cashapp-declined, 4 steps"), "\(r.stdout)")
    }

    @Test func everySingleStepChainsThroughTheStateFileAndTheCustomerIsPlayedFromAnotherTerminal() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--cashapp-approval", "manual"])
        defer { server.stop() }
        for (arguments, shows) in [
            (["checkout", "--amount", "25.00"], "checkout          25.00 USD  (2500 cents)"),
            (["sign"], "signed            25.00 USD for MMI_"),
            (["request"], "customer request  GRR_"),
        ] {
            let r = try await BinaryRunner.run(["cashapp"] + arguments, home: s.path)
            #expect(r.status == 0, "\(arguments): \(r.all)")
            #expect(r.stdout.contains(shows), "\(arguments): \(r.stdout)")
        }
        // Still pending: no one approved it yet.
        let waiting = try await BinaryRunner.run(
            ["cashapp", "poll", "--approval-timeout", "0.3"] + Self.fast, home: s.path)
        #expect(waiting.status == 1 && waiting.stderr.contains("is still PENDING"), "\(waiting.all)")
        let skipped = try await BinaryRunner.run(["cashapp", "capture"], home: s.path)
        #expect(
            skipped.status == 1
                && skipped.stderr.contains("capture refused: Afterpay has not validated this Cash App order"),
            "\(skipped.all)")
        let approved = try await BinaryRunner.run(["cashapp", "approve"], home: s.path)
        #expect(approved.status == 0, "\(approved.all)")
        for (arguments, shows) in [
            (["poll"], "approved          by $"), (["validate"], "validated         SUCCESS"),
            (["capture"], "CAPTURED  25.00 USD"), (["payment"], "CAPTURED  25.00 USD"),
        ] {
            let r = try await BinaryRunner.run(
                ["cashapp"] + arguments + (arguments == ["poll"] ? Self.fast : []), home: s.path)
            #expect(r.status == 0, "\(arguments): \(r.all)")
            #expect(r.stdout.contains(shows), "\(arguments): \(r.stdout)")
        }
        #expect(try Self.ledger(server).map { $0["amount"] as? Int } == [2500])
        // A decided request cannot be decided again.
        let late = try await BinaryRunner.run(["cashapp", "decline"], home: s.path)
        #expect(late.status == 1 && late.stderr.contains("INVALID_STATE_TRANSITION"), "\(late.all)")
    }

    @Test func aRepeatedRequestReplaysItsKeyAndAChangedOneGetsANewRequest() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        for arguments in [["checkout", "--amount", "5.00"], ["sign"]] {
            #expect(try await BinaryRunner.run(["cashapp"] + arguments, home: s.path).status == 0)
        }
        func requestID(_ arguments: [String]) async throws -> String? {
            let r = try await BinaryRunner.run(["cashapp", "request"] + arguments, home: s.path)
            #expect(r.status == 0, "\(r.all)")
            return r.stdout.firstMatch(of: /GRR_\w+/).map { String($0.output) }
        }
        let first = try await requestID([])
        #expect(first != nil)
        #expect(try await requestID([]) == first, "the same body under the same key: the same request back")
        let merchant = try await requestID(["--scope", "merchant"])
        #expect(merchant != nil && merchant != first, "a changed body gets a new key, and a new request")
    }

    @Test func theApprovalLinkIsShownAgainWhenItsTriggersRotate() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        _ = try curl([
            "-s", "-X", "PUT", "-d", #"{"autoApproveAfterPolls":3,"triggerLifetimeSeconds":1}"#,
            server.url + "/_sandbox/cashapp/settings",
        ])
        // A poll interval far longer than the link lives: the wait re-reads the request right after refreshes_at
        // instead.
        let started = Date()
        let r = try await BinaryRunner.run(["cashapp", "pay", "--poll-interval", "30"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            Date().timeIntervalSince(started) < 20, "three reads, each right after the link's refresh, not 30 s apart")
        #expect(
            r.stderr.contains("approval: the approval link was refreshed: \(server.url)/cashapp/approve/GRR_"),
            "\(r.stderr)")
    }

    @Test func secretsNeverReachAnyOutput() async throws {
        let s = try Scratch()
        let har = s.path + "/run.har"
        let junit = s.path + "/junit.xml"
        let cardFile = s.path + "/card.json"
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let button = try await BinaryRunner.run(
            ["cashapp", "pay", "--flow", "button", "--card-out", cardFile, "-v", "--record", har, "--junit", junit]
                + Self.fast,
            home: s.path)
        #expect(button.status == 0, "\(button.all)")
        let buttonState = try Self.state(s.path)
        let serverHAR = s.path + "/server.har"
        let serverRun = try await BinaryRunner.run(
            ["cashapp", "pay", "-v", "--format", "jsonl", "--record", serverHAR] + Self.fast, home: s.path)
        #expect(serverRun.status == 0, "\(serverRun.all)")
        let jwts = [
            try #require(buttonState["jwt"] as? String),
            try #require(try Self.state(s.path)["jwt"] as? String, "the JWT is kept for validate"),
        ]
        let card = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: cardFile))) as? [String: Any])
        let virtual = try #require((card["paymentDetails"] as? [String: Any])?["virtualCard"] as? [String: Any])
        let number = try #require(virtual["cardNumber"] as? String)
        let cvc = try #require(virtual["cvc"] as? String)
        let outputs = [
            button.all, serverRun.all, try String(contentsOfFile: har, encoding: .utf8),
            try String(contentsOfFile: junit, encoding: .utf8),
            try String(contentsOfFile: serverHAR, encoding: .utf8),
        ]
        for output in outputs {
            #expect(!output.contains(TestCredentials.afterpaySecretKey))
            #expect(
                !output.contains(
                    Data("\(TestCredentials.afterpayMerchantID):\(TestCredentials.afterpaySecretKey)".utf8)
                        .base64EncodedString()))
            for jwt in jwts {
                #expect(
                    !output.contains(jwt) && !output.contains(String(jwt.split(separator: ".")[2])),
                    "no JWT or its signature")
            }
            #expect(!output.contains(number), "no card number")
            #expect(!output.contains("\"\(cvc)\""), "no CVC")
        }
        #expect(outputs[2].contains("button/confirm"), "the HAR has the confirm exchange (redacted)")
        #expect(
            outputs[4].contains("/v2/payments/capture") && outputs[4].contains("[REDACTED]"),
            "the server HAR has the Basic-auth capture, masked")
        let stateText = try String(contentsOfFile: s.path + "/state/checkout-driver/local/state.json", encoding: .utf8)
        #expect(!stateText.contains(TestCredentials.afterpaySecretKey) && !stateText.contains(number))
    }

    /// After a decline the hint names the real next step: a new payment, not a poll that can never bring a grant.
    @Test func validateAfterADeclineSaysToStartAgain() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let declined = try await BinaryRunner.run(["cashapp", "pay", "--amount", "13.13"] + Self.fast, home: s.path)
        #expect(declined.status == 1 && declined.stderr.contains("the customer declined"), "\(declined.all)")
        let r = try await BinaryRunner.run(["cashapp", "validate"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(
            r.stderr.contains("the customer declined the payment")
                && r.stderr.contains("hint: start again with `checkout-driver cashapp pay`"), "\(r.stderr)")
        #expect(!r.stderr.contains("cashapp poll"))
    }
}
