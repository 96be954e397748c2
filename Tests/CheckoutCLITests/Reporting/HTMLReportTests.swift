import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutCLI

/// `--html FILE` read as a person reads it: headless Chromium (Debian's `chromium`, installed by Scripts/bootstrap)
/// loads the page with JavaScript disabled, and the test checks the DOM it rendered and that it took a screenshot.
@Suite struct HTMLReportTests {
    /// Chromium's `--dump-dom` or `--screenshot` of a file, in a profile of its own whose settings block JavaScript (as
    /// a reader's locked-down browser would).
    static func chromium(_ arguments: [String], page: String, scratch: Scratch) throws -> String {
        let profile = scratch.path + "/chromium-profile"
        try FileManager.default.createDirectory(atPath: profile + "/Default", withIntermediateDirectories: true)
        try Data(#"{"profile": {"default_content_setting_values": {"javascript": 2}}}"#.utf8)
            .write(to: URL(fileURLWithPath: profile + "/Default/Preferences"))
        let run = try runTool(
            "/usr/bin/chromium",
            [
                "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--user-data-dir=\(profile)",
            ] + arguments + ["file://" + page])
        #expect(run.status == 0, "chromium \(arguments)")
        return run.output
    }

    @Test func aSuitesPageRendersEveryFlowStepExchangeAndWhatMoneyDid() async throws {
        let s = try Scratch()
        let failing = try s.write(
            "failing.json",
            #"""
            {"name": "health-wants-201", "steps": [{"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "expect": {"status": 201}}]}
            """#)
        let page = s.path + "/report.html"
        let r = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "braintree-apple-pay-declined", failing, "--html", page], home: s.path)
        let refusals = s.path + "/refusals.html"
        let declined = try await BinaryRunner.run(
            [
                "flow", "run", "centra-express", "braintree-apple-pay-auth-capture", "cashapp-declined",
                "--var", "poll_interval=20ms", "--html", refusals,
            ], home: s.path)
        #expect(declined.status == 0, "\(declined.all)")
        #expect(r.status == 1, "\(r.all)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        // Self-contained and static: no script, nothing fetched.
        for outside in ["<script", "src=", "<link", "@import", "url("] {
            #expect(!html.contains(outside), "\(outside)")
        }
        #expect(!html.contains(TestCredentials.bahnAPIKey), "the Bahn API key is masked")
        #expect(try FileManager.default.attributesOfItem(atPath: page)[.posixPermissions] as? Int == 0o600)

        // JavaScript is off in that browser: a page that rewrites itself by script is shown as written.
        let probe = try s.write(
            "probe.html",
            #"<!DOCTYPE html><p id="x">static</p><script>document.getElementById("x").textContent = "scripted"</script>"#
        )
        #expect(try Self.chromium(["--dump-dom"], page: probe, scratch: s).contains(#"<p id="x">static</p>"#))

        let dom = try Self.chromium(["--dump-dom"], page: page, scratch: s)
        #expect(
            dom.contains("<p id=\"totals\" class=\"failed\">3 flows: 2 passed, 1 failed, 0 unknown</p>"),
            "\(dom.prefix(2000))")
        // The money table: a row per movement or refusal, amounts as money with the alphabetic currency, statuses in
        // words.
        #expect(
            dom.range(
                of:
                    #"<tr class="done"><td>bahn-apple-pay</td><td>confirm</td><td>charge</td><td>8000 VND</td><td>succeeded</td><td>ch_[0-9A-Z]+</td></tr>"#,
                options: .regularExpression) != nil, "\(dom)")
        #expect(
            dom.range(
                of:
                    #"<tr class="refused"><td>braintree-apple-pay-declined</td><td>charge</td><td>charge</td><td>2000.00 USD</td><td>refused: Do Not Honor</td><td>order cd-[0-9a-f]+</td></tr>"#,
                options: .regularExpression) != nil, "\(dom)")
        let money = try Self.chromium(["--dump-dom"], page: refusals, scratch: s)
        let rows = money.components(separatedBy: "<section id=\"money\">")[1].components(separatedBy: "</section>")[0]
            .components(separatedBy: "<tr class=").dropFirst().map {
                "<tr class=" + $0.components(separatedBy: "</tr>")[0] + "</tr>"
            }
        #expect(
            rows.count == 4,
            "Centra's payment once, Braintree's authorization and capture apart, Cash App's refusal: \(rows)")
        #expect(
            rows[0].range(
                of:
                    #"<td>centra-express</td><td>payment</td><td>authorization</td><td>848.00 SEK</td><td>order placed \(confirmed\)</td><td>order ord_"#,
                options: .regularExpression) != nil, "\(rows[0])")
        #expect(
            rows[1].contains("<td>authorize</td><td>authorization</td><td>10.00 USD</td><td>authorized</td>"),
            "\(rows[1])")
        #expect(
            rows[2].contains("<td>capture</td><td>capture</td><td>10.00 USD</td><td>submitted for settlement</td>"),
            "\(rows[2])")
        #expect(
            rows[3].contains(
                #"<tr class="refused"><td>cashapp-declined</td><td>approval</td><td>authorization</td><td>13.13 USD</td><td>declined by the customer in Cash App</td>"#
            ), "\(rows[3])")
        #expect(dom.contains("<span class=\"badge passed\">passed</span> bahn-apple-pay</h2>"))
        #expect(dom.contains("<span class=\"badge failed\">failed</span> health-wants-201</h2>"))
        #expect(dom.contains("step 'health': expected status 201, got 200"))
        // Every step has its row and its bar on the timeline; each exchange its details, its key masked.
        for step in [
            "make-token", "create-intent", "confirm", "poll", "webhook", "config", "tokenize", "charge", "health",
        ] {
            #expect(dom.contains("</td><td>\(step)</td>"), "\(step)")
        }
        #expect(dom.components(separatedBy: "class=\"bar\"").count - 1 == 5 + 4 + 1)
        #expect(dom.contains("create-intent · POST http://127.0.0.1:"))
        #expect(dom.contains("Bn-Api-Key: [REDACTED]"))

        let shot = s.path + "/report.png"
        _ = try Self.chromium(["--screenshot=\(shot)", "--window-size=1280,1600"], page: page, scratch: s)
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000, "a PNG of \(png.count) bytes")
    }

    /// An unknown outcome is counted as unknown, not as a failure; its row keeps its amount and reference, and each of
    /// its settle commands stands in a code block of its own under its flow; text from the run is escaped, never
    /// markup.
    @Test func anUnknownOutcomeIsItsOwnVerdictAndTextIsEscaped() {
        let started = Date()
        let ok = FlowResult(
            name: "fine", environment: "local", startedAt: started, duration: 0.1, steps: [], failure: nil,
            captures: [:])
        var movement = MoneyMovement(
            provider: "bahn", kind: .charge, outcome: .unknown, amount: 8000, currency: "704", reference: "pi_1",
            status: "unknown: the charge may have gone through")
        movement.settle = [
            "re-send it: `checkout-driver bahn confirm --intent pi_1 --idempotency-key k`",
            "read it: `checkout-driver bahn intent pi_1`",
        ]
        let step = StepResult(
            name: "confirm", isFinally: false, optional: false, outcome: .failed, startedAt: started, duration: 0.1,
            requests: 1, polls: 0, status: nil, message: "lost", output: nil, money: [movement])
        let open = FlowResult(
            name: "<b>lost</b>", environment: "local", startedAt: started, duration: 0.2, steps: [step],
            failure: Diagnostic(
                .outcomeUnknown, "the answer to confirm was lost; secret-123 unknown", hint: "settle it safely: …"),
            captures: [:])
        let page = HTMLReport.page(
            [.init(result: ok, exchanges: []), .init(result: open, exchanges: [])],
            redactor: Redactor(secrets: ["secret-123"]), generated: started)
        #expect(page.contains("<p id=\"totals\" class=\"unknown\">2 flows: 1 passed, 0 failed, 1 unknown</p>"))
        #expect(
            page.contains(
                "<tr class=\"unknown\"><td>&lt;b&gt;lost&lt;/b&gt;</td><td>confirm</td><td>charge</td><td>8000 VND</td><td>unknown: the charge may have gone through</td><td>pi_1</td></tr>"
            ), "\(page)")
        #expect(
            page.contains("<p class=\"error\">the answer to confirm was lost; [REDACTED] unknown</p>"),
            "the hint's sentence gives way to the blocks")
        #expect(
            page.contains(
                "<h3>Settle the unknown charge of 8000 VND</h3>\n<p>re-send it</p>\n<pre class=\"command\"><code>checkout-driver bahn confirm --intent pi_1 --idempotency-key k</code></pre>\n<p>read it</p>\n<pre class=\"command\"><code>checkout-driver bahn intent pi_1</code></pre>"
            ), "\(page)")
        #expect(page.contains("<span class=\"badge unknown\">unknown</span> &lt;b&gt;lost&lt;/b&gt;</h2>"))
        #expect(!page.contains("<b>lost</b>") && !page.contains("secret-123"))
        // An exchange that got no answer says why (the HAR keeps it as the response's `_error`).
        let lost: JSON = [
            "_step": "confirm", "time": 5, "request": ["method": "POST", "url": "http://127.0.0.1:9/x", "headers": []],
            "response": ["status": 0, "headers": [], "_error": "unreachable: Couldn't connect to server"],
        ]
        #expect(
            HTMLReport.exchange(lost).contains(
                "confirm · POST http://127.0.0.1:9/x → unreachable: Couldn&#39;t connect to server"),
            "\(HTMLReport.exchange(lost))")
    }

    /// A batch's page shows its figures and a histogram of its runs' times whose bins add up to the runs, and names
    /// each run by its repetition.
    @Test func aBatchsPageShowsItsFiguresAndAHistogramOfItsRuns() async throws {
        let s = try Scratch()
        let page = s.path + "/batch.html"
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "bahn-apple-pay", "--repeat", "7", "--parallel", "3", "--html", page],
            home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let dom = try Self.chromium(["--dump-dom"], page: page, scratch: s)
        #expect(dom.contains("<td id=\"batch-runs\">14 (14 passed, 0 failed, 0 unknown)</td>"), "\(dom.prefix(3000))")
        #expect(dom.range(of: #"<td id="batch-rate">[0-9.]+ flows/s</td>"#, options: .regularExpression) != nil)
        #expect(
            dom.range(
                of: #"<td id="batch-duration">p50 [0-9.]+ m?s, p95 [0-9.]+ m?s, max [0-9.]+ m?s</td>"#,
                options: .regularExpression) != nil)
        let bins = dom.matches(of: /<rect class="bin" data-runs="(\d+)"/).map { Int($0.1)! }
        #expect(!bins.isEmpty && bins.count <= 10 && bins.reduce(0, +) == 14, "\(bins)")
        for k in 1...7 { #expect(dom.contains("</span> bahn-apple-pay#\(k)</h2>"), "run \(k)") }
        #expect(
            dom.components(separatedBy: "<td>charge</td><td>8000 VND</td><td>succeeded</td>").count - 1 == 7,
            "one charge per Bahn run")
    }

    /// One flow (not a suite) writes its page too; a page that cannot be written stops the run before it sends
    /// anything.
    @Test func aSingleRunWritesItsPageAndAnUnwritablePathIsRefusedFirst() async throws {
        let s = try Scratch()
        let page = s.path + "/one.html"
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--html", page], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let html = try String(contentsOfFile: page, encoding: .utf8)
        #expect(html.contains("1 flow: 1 passed, 0 failed, 0 unknown"))
        #expect(html.contains("<p>No step moved money or was refused.</p>"))
        #expect(html.contains("finally ledger"))
        let refused = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--html", s.path + "/missing/dir/x.html"], home: s.path)
        #expect(refused.status == 74, "\(refused.all)")
        #expect(refused.stderr.contains("--html"), "\(refused.stderr)")
    }
}
