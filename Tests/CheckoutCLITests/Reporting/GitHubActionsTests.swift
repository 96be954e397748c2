import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// `--ci github`: the workflow commands and job summary GitHub Actions' runner reads, as its documentation spells them.
@Suite struct GitHubActionsTests {
    static let started = Date()

    static func step(_ name: String, _ outcome: StepResult.Outcome, money: [MoneyMovement] = []) -> StepResult {
        StepResult(
            name: name, isFinally: false, optional: false, outcome: outcome, startedAt: started, duration: 0.01,
            requests: 1, polls: 0, status: outcome == .failed ? 404 : 200, message: nil, output: nil, money: money)
    }

    static func outcome(
        _ name: String, steps: [StepResult], failure: Diagnostic? = nil, retries: Int = 0, flow: Flow? = nil
    ) -> FlowSuite.Outcome {
        var o = FlowSuite.Outcome(
            result: FlowResult(
                name: name, environment: "local", startedAt: started, duration: 0.02, steps: steps, failure: failure,
                captures: [:]),
            retries: retries)
        o.flow = flow
        return o
    }

    static var unknownCharge: MoneyMovement {
        var m = MoneyMovement(
            provider: "bahn", kind: .charge, outcome: .unknown, amount: 8000, currency: "704", reference: "pi_1",
            status: "unknown")
        m.settle = [
            "read it: `checkout-driver bahn intent pi_1`", "re-send it: `checkout-driver bahn confirm --run r1`",
        ]
        return m
    }

    @Test func messagesAndPropertiesAreEscapedAsTheRunnerReadsThem() {
        #expect(GitHubActions.escapedData("50% off\nnext\r\nlast") == "50%25 off%0Anext%0D%0Alast")
        #expect(GitHubActions.escapedProperty("a: b, c%") == "a%3A b%2C c%25")
        #expect(
            GitHubActions.command("error", [("file", "x,y.json"), ("title", "f › s: t")], "one\ntwo")
                == "::error file=x%2Cy.json,title=f › s%3A t::one%0Atwo")
        #expect(GitHubActions.command("warning", [], "w") == "::warning::w")
    }

    /// A failed flow's error points at its failing step's line in its file; an unknown one is an error too, and its
    /// open outcome a warning carrying the settle commands; a retry storm is a warning; a secret never shows.
    @Test func eachFlowThatDidNotPassIsAnErrorAtItsStepAndOpenOutcomesAndStormsAreWarnings() throws {
        let s = try Scratch()
        let path = s.path + "/smoke.json"
        try Data(
            """
            {
              "name": "smoke",
              "steps": [
                { "name": "first", "request": { "url": "http://127.0.0.1:9/a" } },
                {
                  "name": "second",
                  "request": { "url": "http://127.0.0.1:9/b" }
                }
              ]
            }
            """.utf8
        ).write(to: URL(fileURLWithPath: path))
        let flow = try FlowFile.load(path: path, registry: Operations.registry)
        let failed = Self.outcome(
            "smoke", steps: [Self.step("first", .passed), Self.step("second", .failed)],
            failure: Diagnostic(.failure, "step 'second': got 404 for tok_secret123", hint: "look\nhere"), flow: flow)
        let unknown = Self.outcome(
            "bahn-apple-pay", steps: [Self.step("confirm", .failed, money: [Self.unknownCharge])],
            failure: Diagnostic(.outcomeUnknown, "the answer to confirm was lost", hint: "settle it"))
        let stormy = Self.outcome("calm", steps: [Self.step("read", .passed)], retries: GitHubActions.retryStorm)
        let fine = Self.outcome("fine", steps: [Self.step("read", .passed)], retries: GitHubActions.retryStorm - 1)
        let lines = GitHubActions(redactor: Redactor(secrets: ["tok_secret123"])).annotations([
            failed, unknown, stormy, fine,
        ])
        #expect(lines.count == 4, "\(lines)")
        #expect(
            lines[0]
                == "::error file=\(path),line=5,title=smoke › second::failed: step 'second': got 404 for [REDACTED]%0Ahint: look%0Ahere",
            "\(lines[0])")
        #expect(lines[1].hasPrefix("::error title=bahn-apple-pay › confirm::unknown: the answer to confirm was lost"))
        #expect(
            lines[2]
                == "::warning title=bahn-apple-pay › confirm%3A open outcome::the charge of 8000 VND is unknown: money may have moved%0Aread it: `checkout-driver bahn intent pi_1`%0Are-send it: `checkout-driver bahn confirm --run r1`"
        )
        #expect(lines[3].hasPrefix("::warning title=calm%3A 3 retries::calm retried 3 times over 1 requests"))
    }

    /// The runner shows ten annotations of a kind a step: past that the tenth says how many more there are.
    @Test(arguments: [(9, 9, false), (10, 10, false), (11, 10, true), (250, 10, true)])
    func annotationsStayUnderWhatTheRunnerShows(failures: Int, shown: Int, counted: Bool) {
        let outcomes = (0..<failures).map {
            Self.outcome("f\($0)", steps: [Self.step("s", .failed)], failure: Diagnostic(.failure, "no"))
        }
        let lines = GitHubActions(redactor: Redactor()).annotations(outcomes)
        #expect(lines.count == shown)
        #expect(lines.allSatisfy { $0.hasPrefix("::error ") })
        #expect(lines.last?.contains("\(failures - 9) more flows that did not pass") == counted, "\(lines.last ?? "")")
    }

    /// The summary has the totals, the table, every money row and the settle commands, and is cut to stay under the
    /// runner's limit, saying so.
    @Test func theSummaryHasTheTotalsTheTableTheMoneyAndHowToSettle() {
        let outcomes = [
            Self.outcome(
                "bahn-apple-pay", steps: [Self.step("confirm", .failed, money: [Self.unknownCharge])],
                failure: Diagnostic(.outcomeUnknown, "lost | answer")),
            Self.outcome(
                "centra-express",
                steps: [
                    Self.step(
                        "pay", .passed,
                        money: [MoneyMovement(provider: "centra", kind: .charge, amount: 1000, currency: "EUR")])
                ]),
        ]
        let table = [["flow", "result"], ["bahn-apple-pay", "unknown"], ["centra-express", "passed"]]
        let summary = GitHubActions(redactor: Redactor()).summary(
            outcomes, line: "2 flows: 1 passed, 0 failed, 1 unknown in 1 ms", table: table)
        #expect(summary.contains("**2 flows: 1 passed, 0 failed, 1 unknown in 1 ms**"))
        #expect(
            summary.contains(
                "| flow | result |\n|---|---|\n| bahn-apple-pay | unknown |\n| centra-express | passed |\n"))
        #expect(summary.contains("| bahn-apple-pay | confirm | charge | 8000 VND | unknown | pi_1 |"))
        #expect(summary.contains("| centra-express | pay | charge | 10.00 EUR |"), "\(summary)")
        #expect(summary.contains("### Settle what is unknown"))
        #expect(summary.contains("  - read it: `checkout-driver bahn intent pi_1`"))
        #expect(summary.contains("unknown: bahn-apple-pay: lost | answer"))

        // Thousands of unknown outcomes: cut, each part saying what it left out, under the limit.
        let many = (0..<20_000).map { i in
            Self.outcome(
                "run-\(i)", steps: [Self.step("confirm", .failed, money: [Self.unknownCharge])],
                failure: Diagnostic(.outcomeUnknown, "lost"))
        }
        let big = GitHubActions(redactor: Redactor()).summary(many, line: "20000 runs", table: table)
        #expect(big.utf8.count <= GitHubActions.summaryLimit)
        #expect(big.utf8.count > GitHubActions.summaryLimit / 2)
        #expect(big.contains("more lines left out"))
        let small = GitHubActions(redactor: Redactor()).summary(many, line: "20000 runs", table: table, limit: 4000)
        #expect(small.utf8.count <= 4000 && small.contains("### Money") && small.contains("more lines left out"))
    }
}

/// `--ci github` end to end: the binary as a GitHub Actions step runs it.
@Suite struct GitHubActionsRunTests {
    static let failing = """
        {
          "name": "bad-flow",
          "steps": [
            { "name": "health", "request": { "url": "${env.EMULATOR_URL}/_sandbox/health" } },
            {
              "name": "missing",
              "request": { "url": "${env.EMULATOR_URL}/_sandbox/nothing-here" },
              "expect": { "status": 200 }
            }
          ]
        }
        """

    /// Under --parallel each run's group is whole (its lines between its own ::group:: and ::endgroup::), the failing
    /// flow's error points at its file and line, and the summary file gets the suite's Markdown.
    @Test func aBatchIsGroupedAnnotatedAndSummed() async throws {
        let s = try Scratch()
        try Data(Self.failing.utf8).write(to: URL(fileURLWithPath: s.path + "/bad.json"))
        let r = try await BinaryRunner.run(
            ["flow", "run", "bad.json", "emulator-orders", "--repeat", "3", "--parallel", "4"], home: s.path,
            environment: ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": s.path + "/summary.md"], directory: s.path)
        #expect(r.status == 1, "\(r.all)")
        var open: String?
        var groups: [String] = []
        for line in r.stdout.split(separator: "\n").map(String.init) {
            if line.hasPrefix("::group::") {
                #expect(open == nil, "a group opened inside \(open ?? "")")
                open = String(line.dropFirst("::group::".count))
                groups.append(open!)
            } else if line == "::endgroup::" {
                #expect(open != nil)
                open = nil
            } else if let group = open, line.hasPrefix("✓") || line.hasPrefix("✗") {
                // A step line inside a group is that run's: only bad-flow has `missing`, only emulator-orders `pay`.
                if line.contains("missing") { #expect(group.hasPrefix("bad-flow"), "\(line) in \(group)") }
                if line.contains(" pay ") { #expect(group.hasPrefix("emulator-orders"), "\(line) in \(group)") }
            }
        }
        #expect(
            groups.sorted() == (1...3).flatMap { ["bad-flow#\($0): failed", "emulator-orders#\($0): passed"] }.sorted())
        let errors = r.stdout.split(separator: "\n").filter { $0.hasPrefix("::error") }
        #expect(errors.count == 3)
        #expect(
            errors.allSatisfy {
                $0.hasPrefix("::error file=bad.json,line=5,title=bad-flow#") && $0.contains(" › missing::failed:")
            })
        let summary = try String(contentsOfFile: s.path + "/summary.md", encoding: .utf8)
        #expect(summary.contains("**6 runs: 3 passed, 3 failed, 0 unknown in "))
        #expect(summary.contains("| bad-flow | 3 | 0 | 3 | 0 |"), "\(summary)")
        #expect(summary.contains("### Did not pass"))

        // --ci none: GitHub's runner, but none of its commands.
        let plain = try await BinaryRunner.run(
            ["flow", "run", "bad.json", "--ci", "none"], home: s.path, environment: ["GITHUB_ACTIONS": "true"],
            directory: s.path)
        #expect(plain.status == 1)
        #expect(!plain.all.contains("::"), "\(plain.all)")
    }

    /// One flow in GitHub Actions gets its group, annotation and summary; with --format json stdout stays one document
    /// and the annotations go to stderr; a command that fails before any flow is one annotation too.
    @Test func oneFlowJSONOutputAndACommandError() async throws {
        let s = try Scratch()
        try Data(Self.failing.utf8).write(to: URL(fileURLWithPath: s.path + "/bad.json"))
        let env = ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": s.path + "/summary.md"]
        let one = try await BinaryRunner.run(
            ["flow", "run", "bad.json"], home: s.path, environment: env, directory: s.path)
        #expect(one.status == 1)
        #expect(one.stdout.hasPrefix("::group::bad-flow\n"), "\(one.stdout)")
        #expect(one.stdout.contains("::endgroup::\n"))
        #expect(one.stdout.contains("::error file=bad.json,line=5,title=bad-flow › missing::"))

        let json = try await BinaryRunner.run(
            ["flow", "run", "bad.json", "--format", "json"], home: s.path, environment: env, directory: s.path)
        #expect(json.status == 1)
        #expect((try? JSONSerialization.jsonObject(with: Data(json.stdout.utf8))) != nil, "\(json.stdout)")
        #expect(json.stderr.contains("::error file=bad.json,line=5,title=bad-flow › missing::"))
        let summary = try String(contentsOfFile: s.path + "/summary.md", encoding: .utf8)
        #expect(summary.components(separatedBy: "## checkout-driver").count == 3, "appended twice: \(summary)")

        // One flow exits with its own code in GitHub Actions too: a service that does not answer is 69, not 1.
        try Data(
            #"{"name": "down", "steps": [{"name": "get", "request": {"url": "http://127.0.0.1:9/x"}}]}"#.utf8
        ).write(to: URL(fileURLWithPath: s.path + "/down.json"))
        let down = try await BinaryRunner.run(
            ["flow", "run", "down.json", "--env", "sandbox"], home: s.path, environment: env, directory: s.path)
        #expect(down.status == 69, "\(down.all)")
        #expect(down.stdout.contains("::error file=down.json,line=1,title=down › get::failed: "), "\(down.stdout)")

        let missing = try await BinaryRunner.run(["flow", "run", "nothere.json"], home: s.path, environment: env)
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("::error title=checkout-driver%3A exit 65::cannot read flow file nothere.json"))
        // A summary that cannot be written is exit 74, named.
        let unwritable = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders"], home: s.path,
            environment: ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": s.path + "/no/such/dir/summary.md"])
        #expect(unwritable.status == 74, "\(unwritable.all)")
        #expect(unwritable.stderr.contains("GITHUB_STEP_SUMMARY"))
    }

    /// A payment whose answer was lost: exit 75, an error for the flow, a warning with the settle commands, and the
    /// summary's settle section names them.
    @Test func anOpenOutcomeIsAWarningWithItsSettleCommands() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /api/payment_intents/*/confirm => drop @1-3; GET /api/payment_intents/* => status=503 @1-3",
            ])
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay"], home: s.path,
            environment: ["GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": s.path + "/summary.md"])
        #expect(r.status == 75, "\(r.all)")
        #expect(r.stdout.contains("::error title=bahn-apple-pay › "), "\(r.stdout)")
        let warning = r.stdout.split(separator: "\n").first { $0.hasPrefix("::warning title=bahn-apple-pay › ") }
        #expect(warning?.contains("open outcome::the charge of ") == true, "\(r.stdout)")
        #expect(warning?.contains("checkout-driver bahn intent pi_") == true)
        let summary = try String(contentsOfFile: s.path + "/summary.md", encoding: .utf8)
        #expect(summary.contains("### Settle what is unknown"))
        #expect(summary.contains("checkout-driver bahn intent pi_"), "\(summary)")
    }
}
