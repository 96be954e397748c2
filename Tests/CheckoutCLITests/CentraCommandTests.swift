import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// The Centra commands through the built binary: the whole express checkout (cart, PDP with rollback, 3DS by
/// redirect through the loopback listener and a $BROWSER that follows it, native 3DS, Ingrid), every callback alone
/// and chained through the state file against `sandbox serve`, sessions, errors, and secrets on every output.
@Suite struct CentraCommandTests {
    /// What `centra payment-instructions` takes: a token for the cart's 848.00 SEK and a test shopper's contact file.
    static func paymentFiles(_ s: Scratch) async throws -> (token: String, contact: String) {
        let token = s.path + "/token.json"
        _ = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "84800", "--currency", "SEK", "--out", token, "-q"], home: s.path)
        let contact = try s.write(
            "contact.json",
            #"{"country": "SE", "firstName": "Ada", "lastName": "Lovelace", "address1": "Storgatan 1", "city": "Stockholm", "zipCode": "11122"}"#
        )
        return (token, contact)
    }

    static func ledger(_ server: ServeProcess) throws -> [[String: Any]] {
        let json =
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
            as? [String: Any]
        return ((json?["entries"] as? [[String: Any]]) ?? []).filter { $0["provider"] as? String == "centra" }
    }

    @Test func theExpressCheckoutOfTheCartPlacesAnOrderWithNoConfiguration() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["centra", "express"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        for step in ["express-config", "shipping", "shipping-method", "make-token", "payment", "order"] {
            #expect(r.stdout.contains("✓ \(step)"), "\(step)")
        }
        #expect(r.stdout.contains(/order             \d+  CONFIRMED/), "\(r.stdout)")
        #expect(r.stdout.contains("total             848.00 SEK  (84800 minor units)"), "\(r.stdout)")
    }

    @Test func aPDPCheckoutRollsItsLineBackWhenCancelledOrFailed() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let cancelled = try await BinaryRunner.run(
            ["centra", "express", "--item", "1002-M", "--cancel-after", "shipping"], home: s.path)
        #expect(cancelled.status == 0, "\(cancelled.all)")
        #expect(cancelled.stdout.contains("✓ finally rollback"))
        #expect(!cancelled.stdout.contains("payment"), "a dismissed sheet pays nothing")
        #expect(
            cancelled.stdout.contains(
                "cancelled         after shipping, as a shopper dismissing the sheet: nothing was paid"),
            "\(cancelled.stdout)")
        #expect(
            cancelled.stdout.contains("rolled back       line_") && !cancelled.stdout.contains("Wool socks"),
            "the cart after the rollback: \(cancelled.stdout)")
        let after = try await BinaryRunner.run(["centra", "selection"], home: s.path)
        #expect(
            after.stdout.contains("Linen shirt") && !after.stdout.contains("Wool socks"),
            "the added line is gone: \(after.stdout)")
        // A declined payment rolls back too, and charges nothing.
        let declined = try await BinaryRunner.run(["centra", "express", "--item", "4001-M"], home: s.path)
        #expect(declined.status == 1, "\(declined.all)")
        #expect(
            declined.stderr.contains(
                "error: paymentInstructions failed: input.paymentMethodSpecificFields: Payment refused: Refused"))
        #expect(declined.stdout.contains("✓ finally rollback  200"))
        #expect(try Self.ledger(server).isEmpty)
    }

    @Test func aRedirectIsFollowedByTheBrowserAndItsReturnPlacesTheOrder() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        // A browser as a script: it follows the challenge page's redirect back to the driver's listener, having noted
        // how it was started — as a shell starts a program: no signal blocked or ignored (the driver ignores SIGPIPE,
        // SIGINT and SIGTERM; SIGTERM must still stop its browser), none of the driver's sockets open. Its own status
        // is read by the shell's builtins first: a shell waiting for a child blocks signals while it waits.
        let browser = try s.write(
            "browser.sh",
            """
            #!/bin/sh
            while read -r line; do case $line in SigBlk:*|SigIgn:*) echo "$line";; esac; done < /proc/$$/status > "$0.signals"
            ls -l /proc/$$/fd | grep -c 'socket:' > "$0.sockets"
            exec curl -sL "$1" -o /dev/null

            """)
        chmod(browser, 0o755)
        let r = try await BinaryRunner.run(
            ["centra", "express", "--item", "3001-M", "--open"], home: s.path, environment: ["BROWSER": browser])
        #expect(r.status == 0, "\(r.all)")
        #expect(try s.read("browser.sh.signals") == "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n")
        #expect(try s.read("browser.sh.sockets") == "0\n")
        #expect(r.stderr.contains("note: payment: 3DS: open \(server.url)/_sandbox/centra/3ds/"))
        #expect(r.stdout.contains(/order             \d+  CONFIRMED/))
        #expect(try Self.ledger(server).count == 1)
    }

    /// A FormPaymentAction: the listener serves the form; a browser (a script here) posts it to the return page, and
    /// its form fields go to paymentResult unchanged.
    @Test func aFormIsServedPostedBackAndPlacesTheOrder() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let browser = try s.write(
            "browser.sh",
            """
            #!/bin/sh
            # Fetch the form, then post its hidden fields to its action, as a browser running its script would.
            page=$(curl -s "$1")
            action=$(printf '%s' "$page" | sed -n 's/.*action="\\([^"]*\\)".*/\\1/p')
            md=$(printf '%s' "$page" | sed -n 's/.*name="MD" value="\\([^"]*\\)".*/\\1/p')
            pares=$(printf '%s' "$page" | sed -n 's/.*name="PaRes" value="\\([^"]*\\)".*/\\1/p')
            exec curl -s -o /dev/null --data-urlencode "MD=$md" --data-urlencode "PaRes=$pares" "$action"
            """)
        chmod(browser, 0o755)
        let r = try await BinaryRunner.run(
            ["centra", "express", "--item", "3003-M", "--open"], home: s.path, environment: ["BROWSER": browser])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("/form to complete the payment"), "\(r.stderr)")
        #expect(r.stdout.contains(/order             \d+  CONFIRMED/))
        #expect(try Self.ledger(server).count == 1)
    }

    @Test func aRedirectThatNeverComesBackTimesOutClearlyAndKeepsTheCart() async throws {
        let s = try Scratch()
        // A browser that opens nothing: the shopper never comes back.
        let r = try await BinaryRunner.run(
            ["centra", "express", "--item", "3001-M", "--deadline", "4", "--open"], home: s.path,
            environment: ["BROWSER": "/bin/true"])
        #expect(r.status == 69, "\(r.all)")
        #expect(
            r.stderr.contains("no 3DS return came back before the flow's deadline of 4.0s"),
            "the budget that was set: \(r.stderr)")
        // The challenge is still open at Centra: the cart stays for it, and the note says how to roll back by hand.
        #expect(r.stderr.contains("not rolling back line"), "\(r.stderr)")
        #expect(r.stdout.contains("✓ finally rollback"))
    }

    /// Under --env local the emulator's challenge passes at once, so the built-in flows run unattended: the driver
    /// answers it as the shopper's browser would (follows the redirect, posts the form) unless --open is given.
    @Test(arguments: [["flow", "run", "centra-express-3ds-redirect"], ["centra", "express", "--item", "3003-M"]])
    func theEmulatorsChallengeIsAnsweredWithoutABrowser(command: [String]) async throws {
        let s = try Scratch()
        let started = Date()
        let r = try await BinaryRunner.run(command, home: s.path, environment: ["BROWSER": "/bin/false"])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("3DS: answering the emulator's challenge at"), "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 20, "no wait for a browser")
    }

    /// Checked before the checkout's first request (the flow's preflight), not when the payment comes.
    @Test func openWithNoBrowserSaysSoBeforeThePayment() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["centra", "express", "--item", "3001-M", "--open"], home: s.path,
            environment: ["BROWSER": "", "PATH": "/nonexistent"])
        #expect(r.status == 64, "\(r.all)")
        #expect(
            r.stderr.contains("error: --open found no browser: $BROWSER is not set and xdg-open is not on PATH"),
            "\(r.stderr)")
        #expect(try Self.ledger(server).isEmpty)
        let requests = try curl(["-s", server.url + "/_sandbox/requests"])
        #expect(!requests.contains("applePayToken"), "the final payment was never sent")
        #expect(!requests.contains("/centra/graphql"), "nor anything else of the checkout: \(requests.prefix(300))")
        #expect(!r.stdout.contains("✓"), "no step ran: \(r.stdout)")
    }

    /// When two things fail — a decline, then the rollback — text mode explains both.
    @Test func aDeclineAndAFailedRollbackAreBothExplained() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "POST /centra/graphql => status=429:Retry-After=0 @9-30"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["centra", "express", "--item", "4001-M"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(
            r.stderr.contains("also failed: finally rollback: POST") && r.stderr.contains("rate limited (429)"),
            "\(r.stderr)")
        #expect(
            r.stderr.contains("error: paymentInstructions failed: input.paymentMethodSpecificFields: Payment refused"),
            "\(r.stderr)")
    }

    @Test func expressConfigShowsShippingPricesAsMoney() async throws {
        let r = try await BinaryRunner.run(["centra", "express-config"])
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.contains("shipping method   1  Standard  49.00 SEK"), "\(r.stdout)")
        #expect(!r.stdout.contains("{"), "no raw JSON: \(r.stdout)")
    }

    @Test func aNativeChallengeIsCompletedWithItsDetails() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["centra", "express", "--item", "3002-M"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("3DS: native challenge (Adyen action threeDS2 challenge)"))
        // Outside the emulator the details come from a file; a wrong one fails the payment.
        let details = try s.write("details.json", #"{"threeDSResult": "not-the-right-one"}"#)
        let wrong = try await BinaryRunner.run(
            ["centra", "express", "--item", "3002-M", "--3ds-details", details], home: s.path)
        #expect(wrong.status == 1, "\(wrong.all)")
        #expect(wrong.stderr.contains("No payment in this session is waiting for that 3DS result"))
    }

    @Test func ingridNeedsTheWidgetEventFirst() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        _ = try curl(["-s", "-X", "PUT", "--data", #"{"ingrid": true}"#, server.url + "/_sandbox/centra/store"])
        let blocked = try await BinaryRunner.run(["centra", "express"], home: s.path)
        #expect(blocked.status == 1)
        #expect(blocked.stderr.contains("Ingrid delivery options are not set"))
        let passed = try await BinaryRunner.run(["centra", "express", "--ingrid"], home: s.path)
        #expect(passed.status == 0, "\(passed.all)")
        #expect(passed.stdout.contains("✓ widget-event"))
    }

    @Test func everyCallbackAloneChainedThroughTheStateFile() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        func run(_ args: [String]) async throws -> BinaryRunner.Result {
            try await BinaryRunner.run(["centra"] + args, home: s.path)
        }
        let config = try await run(["express-config"])
        #expect(config.status == 0, "\(config.all)")
        #expect(config.stdout.contains("adyen client key  \(CentraRules.adyenClientKey)"))
        #expect(config.stdout.contains("context           test (Adyen environment test)"))
        #expect(config.stdout.contains("apple pay         offered"))
        let added = try await run(["add-item", "1002-M", "--quantity", "2"])
        #expect(added.status == 0 && added.stdout.contains("2 × Wool socks"), "\(added.all)")
        let shipping = try await run(["shipping", "--country", "no", "--city", "Oslo", "--zip", "0150"])
        #expect(shipping.stdout.contains("shipping method   1  Standard  99.00 SEK  (selected)"), "\(shipping.stdout)")
        let method = try await run(["shipping-method", "2"])
        // 799.00 + 2 × 149.50 + 149.00 express to Norway.
        #expect(method.stdout.contains("grand total       1247.00 SEK  (124700 minor units)"), "\(method.stdout)")
        let token = s.path + "/token.json"
        let made = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "124700", "--currency", "SEK", "--out", token, "-q"], home: s.path)
        #expect(made.status == 0, "\(made.all)")
        let contact = try s.write(
            "contact.json",
            #"{"name": {"givenName": "Kari", "familyName": "Nordmann"}, "postalAddress": {"street": "Karl Johans gate 1", "city": "Oslo", "postalCode": "0150", "isoCountryCode": "no"}, "emailAddress": "kari@example.com"}"#
        )
        let paid = try await run(["payment-instructions", "--contact", contact, "--token-file", token])
        #expect(paid.status == 0, "\(paid.all)")
        #expect(paid.stdout.contains("total             1247.00 SEK  (124700 minor units)"), "\(paid.stdout)")
        let order = try await run(["order", "--format", "json"])
        #expect(order.stdout.contains("\"status\": \"CONFIRMED\""), "\(order.stdout)")
        #expect(try Self.ledger(server).first?["amount"] as? Int == 124700)
        // The same token again is refused: single use, nothing charged twice.
        _ = try await run(["add-item", "1001-M"])
        let again = try await run(["payment-instructions", "--contact", contact, "--token-file", token])
        #expect(again.status == 1)
        #expect(try Self.ledger(server).count == 1)
        // The rollback removes the line add-item remembered.
        let rolledBack = try await run(["rollback"])
        #expect(rolledBack.status == 0 && rolledBack.stdout.contains("rolled back"), "\(rolledBack.all)")
        // The shared secret went on expressCheckoutWidgets and on nothing else; every call named its operation.
        let log =
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/requests"]).utf8))
            as? [String: Any]
        let calls = ((log?["requests"] as? [[String: Any]]) ?? []).filter {
            $0["target"] as? String == CentraRules.endpointPath
        }
        #expect(calls.count > 8)
        for call in calls {
            let headers = (call["headers"] as? [[String]]) ?? []
            let body = try #require(
                try JSONSerialization.jsonObject(with: Data((call["body"] as? String ?? "").utf8)) as? [String: Any])
            let operation = try #require(body["operationName"] as? String)
            let hasSecret = headers.contains { $0.first?.lowercased() == "x-shared-secret" }
            #expect(hasSecret == (operation == "CentraExpressCheckoutWidgets"), "\(operation)")
        }
    }

    /// The final payment's answer is lost after Centra placed the order: the driver reads the latest order back and
    /// reports the payment as made — never sending it again (there are no idempotency keys). When the read fails too,
    /// the outcome is unknown (75) and the hint says how to look.
    @Test func aLostPaymentAnswerIsReadBackFromTheLatestOrderNeverResent() async throws {
        let s = try Scratch()
        // Requests to the endpoint, in order: 1 the order before (a new session), 2 paymentInstructions (dropped after
        // it took effect), 3 the read-back.
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "POST /centra/graphql => drop @2"])
        defer { server.stop() }
        let (token, contact) = try await Self.paymentFiles(s)
        let r = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("paymentInstructions got no trustworthy answer"), "\(r.stderr)")
        #expect(r.stderr.contains("was placed: the payment went through"))
        #expect(r.stdout.contains(/order             \d+  CONFIRMED/))
        #expect(try Self.ledger(server).count == 1, "one payment, not two")

        let lost = try Scratch()
        let failing = try ServeProcess(home: lost.path, arguments: ["--faults", "POST /centra/graphql => drop @2-9"])
        defer { failing.stop() }
        let token2 = lost.path + "/token.json"
        _ = try await BinaryRunner.run(
            ["applepay", "token", "--amount", "84800", "--currency", "SEK", "--out", token2, "-q"], home: lost.path)
        let unknown = try await BinaryRunner.run(
            ["centra", "payment-instructions", "--contact", contact, "--token-file", token2], home: lost.path)
        #expect(unknown.status == 75, "\(unknown.all)")
        #expect(unknown.stderr.contains("outcome unknown: the payment may have gone through"))
        #expect(unknown.stderr.contains("`checkout-driver centra order`"))
        #expect(try Self.ledger(failing).count == 1, "the one attempt took effect; nothing was sent again")
    }

    @Test func anExpiredSessionIsReplacedOnceAndUserErrorsShowTheirPaths() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let first = try await BinaryRunner.run(["centra", "selection"], home: s.path)
        #expect(first.status == 0)
        _ = try curl(["-s", "-X", "POST", server.url + "/_sandbox/centra/expire-sessions"])
        let again = try await BinaryRunner.run(["centra", "selection"], home: s.path)
        #expect(again.status == 0, "\(again.all)")
        #expect(
            again.stderr.contains(
                "Centra refused the session token (Unauthorized): starting a new session with the plugin token"))
        let missing = try await BinaryRunner.run(["centra", "add-item", "9999-X"], home: s.path)
        #expect(missing.status == 1)
        #expect(
            missing.stderr.contains("error: addItem 9999-X failed: item: Item 9999-X does not exist"),
            "\(missing.stderr)")
    }

    @Test func aWrongSharedSecretIsATopLevelErrorAndAMissingOneIs78() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { server.stop() }
        let env = ["CENTRA_API_URL": server.url + CentraRules.endpointPath, "CENTRA_TOKEN": CentraRules.pluginToken]
        let missing = try await BinaryRunner.run(
            ["centra", "express-config", "--env", "sandbox"], home: s.path, environment: env)
        #expect(missing.status == 78, "\(missing.all)")
        #expect(missing.stderr.contains("CENTRA_SHARED_SECRET"))
        var wrong = env
        wrong["CENTRA_SHARED_SECRET"] = "not-the-secret"
        let refused = try await BinaryRunner.run(
            ["centra", "express-config", "--env", "sandbox"], home: s.path, environment: wrong)
        #expect(refused.status == 1, "\(refused.all)")
        #expect(
            refused.stderr.contains("Centra answered with errors: expressCheckoutWidgets: Access denied"),
            "\(refused.stderr)")
    }

    @Test(arguments: [
        (#"[1, 2]"#, "holds an array, not an object"),
        (#"{"street": "x"}"#, "$.street is not an AddressInput field"),
        (#"{"city": "Oslo"}"#, "$.country is missing"),
        (
            #"{"name": {"givenName": "A"}, "postalAddress": {"city": "Oslo"}}"#,
            "$.postalAddress.isoCountryCode is missing"
        ),
        (
            #"{"name": {"givenName": 5}, "postalAddress": {"isoCountryCode": "no"}}"#,
            "$.name.givenName: expected a string"
        ),
    ])
    func aContactFileThatIsNeitherShapeIs65NamingTheField(content: String, expected: String) async throws {
        let s = try Scratch()
        let file = try s.write("contact.json", content)
        let r = try await BinaryRunner.run(["centra", "shipping", "--contact", file], home: s.path)
        #expect(r.status == 65, "\(r.all)")
        #expect(r.stderr.contains(expected), "\(r.stderr)")
    }

    @Test func noSecretOrSessionTokenReachesAnyOutput() async throws {
        let s = try Scratch()
        let har = s.path + "/run.har"
        let junit = s.path + "/junit.xml"
        let state = s.path + "/state.json"
        let r = try await BinaryRunner.run(
            [
                "centra", "express", "--item", "3002-M", "-v", "--record", har, "--junit", junit,
                "--session", state, "--format", "jsonl",
            ], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let session =
            try #require(
                (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])?[
                    "centra"] as? [String: Any])["session"] as? String
        #expect(session?.hasPrefix("cst_") == true, "the state file carries the session for the next invocation")
        let outputs = [
            r.stdout, r.stderr, try String(contentsOfFile: har, encoding: .utf8),
            try String(contentsOfFile: junit, encoding: .utf8),
        ]
        for secret in [CentraRules.sharedSecret, CentraRules.pluginToken, session ?? "cst_"] {
            for (i, text) in outputs.enumerated() {
                #expect(!text.contains(secret), "output \(i) holds \(secret.prefix(8))…")
            }
        }
    }
}
