import CheckoutKit
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
import TestSupport
@testable import CheckoutCLI

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
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", directory, "--junit", s.path + "/suite.xml",
                                            "--record", s.path + "/hars/"], home: s.path)
        #expect(r.status == 1, "\(r.all)")
        // Each flow's own output, its failure explained where it happened, then the table.
        #expect(r.stdout.contains("passed: emulator-orders, 5 steps"))
        #expect(r.stdout.contains("failed: down, 1 step"))
        #expect(r.stderr.contains("error: step 'health': expected $.status to equal \"down\", found \"ok\""))
        #expect(r.stdout.contains(/flow\s+result\s+duration\s+requests\s+retries\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/emulator-orders\s+passed\s+\d+ ms\s+\d+\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/health-a\s+passed\s+\d+ ms\s+1\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/down\s+failed\s+\d+ ms\s+1\s+0\n/), "\(r.stdout)")
        #expect(r.stdout.contains(/3 flows: 2 passed, 1 failed, 0 unknown in \d+ ms\n/), "\(r.stdout)")

        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/suite.xml"))
        let suites = try xml.nodes(forXPath: "/testsuites/testsuite").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        #expect(suites == ["emulator-orders", "health-a", "down"])
        #expect(try xml.nodes(forXPath: "/testsuites/testsuite[@name='down']/testcase/failure").count == 1)
        #expect(try xml.nodes(forXPath: "//testcase").count == 7)

        let hars = try FileManager.default.contentsOfDirectory(atPath: s.path + "/hars").sorted()
        #expect(hars == ["001-emulator-orders.har", "002-health-a.har", "003-down.har"])
        let har = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path + "/hars/002-health-a.har"))) as? [String: Any])
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
        _ = try s.write("smoke/two.json", """
            {"name": "two", "vars": {"path": "health"}, "steps": [{"name": "get", "request": {"url": "${env.EMULATOR_URL}/_sandbox/${vars.path}"}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", s.path + "/smoke/*.json", "--var", "path=ledger", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let flows = try #require(doc["flows"] as? [[String: Any]])
        #expect(flows.map { $0["flow"] as? String } == ["health-1", "two"])
        #expect(flows.allSatisfy { $0["passed"] as? Bool == true })

        let unknown = try await BinaryRunner.run(["flow", "run", s.path + "/smoke/*.json", "--var", "paht=ledger"], home: s.path)
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("error: --var paht: no flow of the suite has a variable 'paht'; did you mean 'path'?"), "\(unknown.stderr)")
        let none = try await BinaryRunner.run(["flow", "run", s.path + "/smoke/*.yaml"], home: s.path)
        #expect(none.status == 64)
        #expect(none.stderr.contains("no flow file matches"))
    }

    @Test func oneRecordingFileForSeveralFlowsIsRefusedBeforeAnythingRuns() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "emulator-orders", "--record", s.path + "/one.har"], home: s.path)
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
        let names = try xml.nodes(forXPath: "/testsuites/testsuite").compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        #expect(names == BuiltinFlows.all.map(\.name))
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
}
