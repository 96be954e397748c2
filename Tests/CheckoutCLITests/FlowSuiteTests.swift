import CheckoutKit
import Foundation
import LoopbackHTTP
import TestSupport
import Testing

@testable import CheckoutCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `flow run` with several flows: one process, one report, one summary, the suite's exit code.
@Suite struct FlowSuiteTests {
    static let passing = """
        {"name": "health-%@", "steps": [{"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}]}
        """
    static let failing = """
        {"name": "down", "steps": [{"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"},
                                    "expect": {"equals": {"status": "down"}}}]}
        """

    /// A directory of flow files (taken in name order) after a built-in flow.
    static func suiteDirectory(_ s: Scratch) throws -> String {
        _ = try s.write("suite/b-down.json", failing)
        _ = try s.write("suite/a-health.json", passing.replacingOccurrences(of: "%@", with: "a"))
        _ = try s.write("suite/notes.txt", "not a flow")
        return s.path + "/suite"
    }

    @Test func builtinsAndADirectoryRunAsOneSuiteWithOneReport() async throws {
        let s = try Scratch()
        let directory = try Self.suiteDirectory(s)
        let r = try await BinaryRunner.run(
            [
                "flow", "run", "emulator-orders", directory, "--junit", s.path + "/suite.xml",
                "--record", s.path + "/hars/",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        // Each flow's own output, its failure explained where it happened, then the table.
        #expect(r.stdout.contains("passed: emulator-orders, 4 steps, 1 finally"))
        #expect(r.stdout.contains("failed: down, 1 step"))
        #expect(r.stderr.contains("error: step 'health': expected $.status to equal \"down\", found \"ok\""))
        #expect(r.stdout.contains(/flow\s+result\s+duration\s+requests\s+retries\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/emulator-orders\s+passed\s+\d+ ms\s+\d+\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/health-a\s+passed\s+\d+ ms\s+1\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/down\s+failed\s+\d+ ms\s+1\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/3 flows: 2 passed, 1 failed, 0 unknown in \d+ ms\n/), "\(r.stdout)")

        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/suite.xml"))
        let suites = try xml.nodes(forXPath: "/testsuites/testsuite").compactMap {
            ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue
        }
        #expect(suites == ["emulator-orders", "health-a", "down"])
        #expect(try xml.nodes(forXPath: "/testsuites/testsuite[@name='down']/testcase/failure").count == 1)
        #expect(try xml.nodes(forXPath: "//testcase").count == 7)

        let hars = try FileManager.default.contentsOfDirectory(atPath: s.path + "/hars").sorted()
        #expect(hars == ["001-emulator-orders.har", "002-health-a.har", "003-down.har"])
        let har = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: s.path + "/hars/002-health-a.har"))) as? [String: Any])
        let entries = try #require((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])
        #expect(entries.count == 1)  // that flow's exchange only
    }

    @Test func failFastStopsAtTheFirstFlowThatDoesNotPass() async throws {
        let s = try Scratch()
        let down = try s.write("down.json", Self.failing)
        let r = try await BinaryRunner.run(["flow", "run", down, "emulator-orders", "--fail-fast"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(!r.stdout.contains("emulator-orders"))
        #expect(r.stdout.contains(/1 flow: 0 passed, 1 failed, 0 unknown, 1 not run in \d+ ms\n/), "\(r.stdout)")
    }

    @Test func aQuotedGlobAndTheSuitesVariables() async throws {
        let s = try Scratch()
        _ = try s.write("smoke/one.json", Self.passing.replacingOccurrences(of: "%@", with: "1"))
        _ = try s.write(
            "smoke/two.json",
            """
            {"name": "two", "vars": {"path": "health"}, "steps": [{"name": "get", "request": {"url": "${env.EMULATOR_URL}/_sandbox/${vars.path}"}}]}
            """)
        let r = try await BinaryRunner.run(
            ["flow", "run", s.path + "/smoke/*.json", "--var", "path=ledger", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let flows = try #require(doc["flows"] as? [[String: Any]])
        #expect(flows.map { $0["flow"] as? String } == ["health-1", "two"])
        #expect(flows.allSatisfy { $0["passed"] as? Bool == true })

        let unknown = try await BinaryRunner.run(
            ["flow", "run", s.path + "/smoke/*.json", "--var", "paht=ledger"], home: s.path)
        #expect(unknown.status == 64)
        #expect(
            unknown.stderr.contains(
                "error: --var paht: no flow of the suite has a variable 'paht'; did you mean 'path'?"),
            "\(unknown.stderr)")
        let none = try await BinaryRunner.run(["flow", "run", s.path + "/smoke/*.yaml"], home: s.path)
        #expect(none.status == 64)
        #expect(none.stderr.contains("no flow file matches"))
    }

    @Test func oneRecordingFileForSeveralFlowsIsRefusedBeforeAnythingRuns() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "emulator-orders", "--record", s.path + "/one.har"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("--record DIR/") || r.stderr.contains("--record runs/"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: s.path + "/one.har"))
        let neither = try await BinaryRunner.run(["flow", "run"], home: s.path)
        #expect(neither.status == 64)
        #expect(neither.stderr.contains("give a built-in flow, a flow file or a directory, or --all"))
    }

    /// Every built-in flow runs unattended on the embedded emulator, in one process.
    @Test func allRunsEveryBuiltinFlow() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "--all", "--junit", s.path + "/all.xml"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let count = BuiltinFlows.all.count
        #expect(r.stdout.contains("\(count) flows: \(count) passed, 0 failed, 0 unknown"), "\(r.stdout)")
        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/all.xml"))
        let names = try xml.nodes(forXPath: "/testsuites/testsuite").compactMap {
            ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue
        }
        #expect(names == BuiltinFlows.all.map(\.name))
    }

    /// Outside the local emulator, --all leaves out the flows a person must act in (Cash App approval, 3DS pages).
    @Test func allOutsideLocalLeavesOutTheFlowsAPersonMustActIn() {
        #expect(BuiltinFlows.unattended(local: true).map(\.name) == BuiltinFlows.all.map(\.name))
        let elsewhere = Set(BuiltinFlows.unattended(local: false).map(\.name))
        for name in [
            "cashapp-server", "cashapp-server-auth", "cashapp-button", "cashapp-declined",
            "centra-express-3ds-redirect", "centra-express-3ds-native",
        ] {
            #expect(!elsewhere.contains(name), "\(name) needs a person outside --env local")
        }
        for name in ["bahn-apple-pay", "centra-express", "braintree-apple-pay", "emulator-orders"] {
            #expect(elsewhere.contains(name), "\(name) runs unattended")
        }
    }

    /// Money first: an unknown outcome anywhere makes the suite 75, whatever else failed.
    @Test func theSuitesExitCode() {
        #expect(FlowSuite.exitCode([.ok, .ok]) == .ok)
        #expect(FlowSuite.exitCode([.ok, .failure]) == .failure)
        #expect(FlowSuite.exitCode([.configuration, .ok]) == .failure)
        #expect(FlowSuite.exitCode([.failure, .outcomeUnknown, .ok]) == .outcomeUnknown)
        #expect(FlowSuite.exitCode([.ok, .interrupted]) == .interrupted)
        #expect(FlowSuite.exitCode([.interrupted, .outcomeUnknown]) == .outcomeUnknown)
    }

    // MARK: Batch

    /// Runs in order in the report whatever order they finished in; the counts add up.
    @Test func aBatchCountsEveryRunAndReportsThemInOrder() async throws {
        let s = try Scratch()
        let down = try s.write("down.json", Self.failing)
        let r = try await BinaryRunner.run(
            [
                "flow", "run", "emulator-orders", down, "--repeat", "3", "--parallel", "2",
                "--format", "json", "--junit", s.path + "/batch.xml",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let flows = try #require(doc["flows"] as? [[String: Any]])
        #expect(
            flows.map { $0["flow"] as? String } == Array(repeating: "emulator-orders", count: 3)
                + Array(repeating: "down", count: 3))
        let summary = try #require(doc["summary"] as? [String: Any])
        #expect(summary["runs"] as? Int == 6)
        #expect(summary["passed"] as? Int == 3)
        #expect(summary["failed"] as? Int == 3)
        #expect(summary["unknown"] as? Int == 0)
        #expect(summary["notRun"] as? Int == 0)
        #expect((summary["flowsPerSecond"] as? Double ?? 0) > 0)
        let p50 = try #require(summary["p50Ms"] as? Double)
        let p95 = try #require(summary["p95Ms"] as? Double)
        let longest = try #require(summary["maxMs"] as? Double)
        #expect(p50 <= p95 && p95 <= longest)
        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/batch.xml"))
        #expect(try xml.nodes(forXPath: "/testsuites/testsuite").count == 6)

        let text = try await BinaryRunner.run(["flow", "run", "emulator-orders", down, "--repeat", "2"], home: s.path)
        #expect(text.status == 1)
        #expect(!text.stdout.contains("✓ health"))  // a batch shows no steps, only the summary
        #expect(text.stdout.contains(/emulator-orders\s+2\s+2\s+0\s+0\s+\d+ ms\s+\d+ ms\s+\d+ ms\n/), "\(text.stdout)")
        #expect(text.stdout.contains(/down\s+2\s+0\s+2\s+0\s+/), "\(text.stdout)")
        #expect(
            text.stdout.contains(
                #/4 runs: 2 passed, 2 failed, 0 unknown in [\d.]+ m?s \([\d.]+ flows\/s\); duration p50 \d/#),
            "\(text.stdout)")
    }

    /// A batch says on the console why each run that did not pass failed, as a single flow run does — its error and
    /// hint under the table, the first ten and a count of the rest — and names each repetition (`down#3`) there, in its
    /// JUnit testsuite and in its JSON; `-q` leaves a batch that passed quiet.
    @Test func aBatchSaysWhyEachRunFailedAndNamesItsRepetitions() async throws {
        let s = try Scratch()
        let down = try s.write("down.json", Self.failing)
        let r = try await BinaryRunner.run(
            [
                "flow", "run", down, "emulator-orders", "--repeat", "12", "--parallel", "4",
                "--junit", s.path + "/batch.xml",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        let told = r.stdout.split(separator: "\n").filter { $0.hasPrefix("failed: down#") }
        #expect(
            told.count == 10
                && told.first == #"failed: down#1: step 'health': expected $.status to equal "down", found "ok""#,
            "\(r.stdout)")
        #expect(r.stdout.contains("\n  hint: see the response with -v, or --format json\n"), "\(r.stdout)")
        #expect(
            r.stdout.hasSuffix("… and 2 more that did not pass: every one is in --junit FILE and --format json\n"),
            "\(r.stdout)")
        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/batch.xml"))
        let names = try xml.nodes(forXPath: "/testsuites/testsuite/@name").compactMap(\.stringValue)
        #expect(names == (1...12).map { "down#\($0)" } + (1...12).map { "emulator-orders#\($0)" }, "\(names)")
        #expect(
            try xml.nodes(
                forXPath: "/testsuites/testsuite[@name='down#3']/properties/property[@name='repetition']/@value"
            ).first?.stringValue == "3")

        let json = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--repeat", "3", "--format", "json"], home: s.path)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect((doc["flows"] as? [[String: Any]])?.map { $0["repetition"] as? Int } == [1, 2, 3])

        let quiet = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--repeat", "3", "-q"], home: s.path)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.all)")
        let quietSuite = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "emulator-orders", "-q"], home: s.path)
        #expect(quietSuite.status == 0 && quietSuite.stdout.isEmpty && quietSuite.stderr.isEmpty, "\(quietSuite.all)")
    }

    /// A suite says it too, under its table, though each flow's error came as it ran.
    @Test func aSuiteSaysWhyAFlowFailedUnderItsTable() async throws {
        let s = try Scratch()
        let down = try s.write("down.json", Self.failing)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", down], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        #expect(r.stdout.contains(#"2 flows: 1 passed, 1 failed, 0 unknown in"#), "\(r.stdout)")
        #expect(
            r.stdout.contains(
                #"failed: down: step 'health': expected $.status to equal "down", found "ok""# + "\n  hint: "),
            "\(r.stdout)")
        #expect(!r.stdout.contains("failed: emulator-orders"))
    }

    /// Faults in some runs fail those runs only: the others pass, and the counts say which.
    @Test func faultsInSomeRunsFailOnlyThose() async throws {
        let s = try Scratch()
        // The 2nd and 4th health checks the emulator sees are refused; every run makes one.
        let server = try ServeProcess(home: s.path, arguments: ["--faults", "GET /_sandbox/health => status=500 @2,4"])
        defer { server.stop() }
        let flow = try s.write(
            "health.json",
            """
            {"name": "health", "steps": [{"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"},
              "retry": {"attempts": 1}, "expect": {"status": 200}}]}
            """)
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--repeat", "6", "--parallel", "3", "--format", "json"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let summary = try #require(doc["summary"] as? [String: Any])
        #expect(summary["runs"] as? Int == 6)
        #expect(summary["passed"] as? Int == 4)
        #expect(summary["failed"] as? Int == 2)
    }

    /// Parallel runs of a whole checkout each make their own intent, receive their own webhook, and charge once each.
    @Test func parallelRunsShareNothing() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--repeat", "6", "--parallel", "3", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let flows = try #require(doc["flows"] as? [[String: Any]])
        #expect(flows.count == 6)
        let intents = flows.compactMap { ($0["captures"] as? [String: Any])?["intent"] as? String }
        #expect(Set(intents).count == 6, "\(intents)")
        // Each run awaited a webhook for its own intent.
        let awaited = flows.compactMap { flow -> String? in
            let steps = flow["steps"] as? [[String: Any]] ?? []
            return (steps.first { $0["name"] as? String == "webhook" }?["output"] as? [String: Any])?["intent"]
                as? String
        }
        #expect(awaited == intents, "\(awaited) vs \(intents)")
        let ledger = try #require(
            try JSONSerialization.jsonObject(with: Data(try curl(["-s", server.url + "/_sandbox/ledger"]).utf8))
                as? [String: Any])
        let entries = try #require(ledger["entries"] as? [[String: Any]])
        let captures = entries.filter { $0["kind"] as? String == "capture" }.compactMap { $0["reference"] as? String }
        #expect(captures.sorted() == intents.sorted())  // one capture per run, for its own intent
        // Every run removed its webhook target.
        let targets = try #require(
            try JSONSerialization.jsonObject(
                with: Data(try curl(["-s", server.url + "/_sandbox/bahn/webhook-targets"]).utf8)) as? [String: Any])
        #expect((targets["targets"] as? [Any])?.isEmpty == true)
    }

    /// A run that cannot even start (its webhook listener's port is taken) is that run's failure; the batch still
    /// reports every run.
    @Test func aRunThatCannotStartFailsAloneAndTheBatchStillReports() async throws {
        let s = try Scratch()
        let taken = try HTTPServer(host: "127.0.0.1", port: 0) { _ in .respond(HTTPResponse(status: 200)) }
        defer { taken.shutdown() }
        let r = try await BinaryRunner.run(
            [
                "flow", "run", "bahn-apple-pay", "emulator-orders", "--parallel", "2", "--format", "json",
                "--set", "BAHN_WEBHOOK_PORT=\(taken.port)",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let flows = try #require(doc["flows"] as? [[String: Any]])
        #expect(flows.map { $0["flow"] as? String } == ["bahn-apple-pay", "emulator-orders"])
        #expect(flows.map { $0["passed"] as? Bool } == [false, true])
        let error = try #require(flows.first?["error"] as? [String: Any])
        #expect((error["message"] as? String)?.contains("cannot listen for webhooks") == true, "\(error)")
        #expect((doc["summary"] as? [String: Any])?["failed"] as? Int == 1)
    }

    /// Shards recording into one directory never overwrite each other: a run's file is numbered by its place in the
    /// whole suite.
    @Test func shardsNumberTheirRecordingsByTheRunsPlaceInTheSuite() async throws {
        let s = try Scratch()
        for i in 1...3 {
            let r = try await BinaryRunner.run(
                [
                    "flow", "run", "emulator-orders", "--repeat", "6", "--shard", "\(i)/3", "--record",
                    s.path + "/hars/",
                ],
                home: s.path)
            #expect(r.status == 0, "\(r.all)")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: s.path + "/hars").sorted()
        #expect(files == (1...6).map { String(format: "%03d-emulator-orders.har", $0) })
    }

    @Test func batchOptionsAreChecked() async throws {
        let s = try Scratch()
        let parallelChain = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--repeat", "2", "--parallel", "2", "--continue"],
            home: s.path)
        #expect(parallelChain.status == 64)
        #expect(parallelChain.stderr.contains("--continue makes every run work on one checkout"))
        // Refused every time, whatever the number of runs.
        for chain in [["--continue"], ["--run", "r1"]] {
            let one = try await BinaryRunner.run(
                ["flow", "run", "emulator-orders", "--parallel", "2"] + chain, home: s.path)
            #expect(
                one.status == 64
                    && one.stderr.contains("makes every run work on one checkout, and --parallel runs them at once"),
                "\(chain): \(one.all)")
        }
        let zero = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--repeat", "0"], home: s.path)
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("--repeat expects an integer in 1…1000000, got '0'"))
        let many = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--parallel", "1000"], home: s.path)
        #expect(many.status == 64)
        #expect(many.stderr.contains("--parallel expects an integer in 1…256"))
    }

    @Test func percentilesAreNearestRank() {
        let p = FlowSuite.Summary.percentiles((1...100).map(Double.init))
        #expect(p.p50 == 50)
        #expect(p.p95 == 95)
        #expect(p.max == 100)
        #expect(FlowSuite.Summary.percentiles([3]).p95 == 3)
        #expect(FlowSuite.Summary.percentiles([]).max == 0)
    }

    /// A recording names what a replay needs: the flow, its variables (redacted), the environment, each step's outcome
    /// and output, and the driver's version.
    @Test func aRecordingKeepsTheFlowItsVariablesAndItsSteps() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "vars.json",
            """
            {"name": "vars", "vars": {"path": "health", "password": "none"}, "steps": [
              {"name": "get", "request": {"url": "${env.EMULATOR_URL}/_sandbox/${vars.path}", "headers": {"X-Pass": "${vars.password}"}}}]}
            """)
        let r = try await BinaryRunner.run(
            [
                "flow", "run", flow, "--var", "path=ledger", "--var", "password=hunter2-secret",
                "--record", s.path + "/run.har",
            ], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let text = try String(contentsOfFile: s.path + "/run.har", encoding: .utf8)
        #expect(!text.contains("hunter2-secret"))
        let log = try #require(
            (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["log"] as? [String: Any])
        #expect((log["comment"] as? String)?.hasPrefix("checkout-driver ") == true)
        let run = try #require(log["_run"] as? [String: Any])
        #expect(run["flow"] as? String == "vars")
        #expect(run["environment"] as? String == "local")
        let vars = try #require(run["vars"] as? [String: Any])
        #expect(vars["path"] as? String == "ledger")
        #expect(vars["password"] as? String == "[REDACTED]")
        let steps = try #require(run["steps"] as? [[String: Any]])
        #expect(steps.map { $0["name"] as? String } == ["get"])
        #expect(steps.first?["outcome"] as? String == "passed")
        #expect(((steps.first?["output"] as? [String: Any])?["entries"]) != nil)
    }
}
