import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `--metrics FILE.prom`: Prometheus' text exposition format, judged by Prometheus' own `promtool` (Debian's
/// `prometheus` package, installed by Scripts/bootstrap) and held against the same run's JUnit report.
@Suite struct MetricsTests {
    static func promtool(_ text: String, scratch: Scratch) throws -> (status: Int32, output: String) {
        let path = scratch.path + "/check-\(UUID()).prom"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let run = try runTool("/bin/sh", ["-c", "/usr/bin/promtool check metrics < '\(path)'"], mergingErrors: true)
        return (run.status, run.output)
    }

    /// Label values are escaped as the format says; a histogram's buckets count what fell at or under each bound.
    @Test func labelsAreEscapedAndBucketsAreCumulative() throws {
        var metrics = Metrics()
        let steps = [0.004, 0.02, 0.02, 3.0].map { d in
            StepResult(
                name: "pay \"now\"\\\nfast", isFinally: false, optional: false, outcome: .passed, startedAt: Date(),
                duration: d, requests: 1, polls: 0, status: 200, message: nil, output: nil)
        }
        var outcome = FlowSuite.Outcome(
            result: FlowResult(
                name: "f", environment: "local", startedAt: Date(), duration: 3, steps: steps, failure: nil,
                captures: [:]),
            retries: 2)
        outcome.statuses = ["200": 3, "error": 1]
        metrics.add(outcome)
        metrics.add(outcome)
        let text = metrics.text
        let step = #"{flow="f",step="pay \"now\"\\\nfast""#
        #expect(text.contains("checkout_driver_step_duration_seconds_bucket\(step),le=\"0.005\"} 2\n"), "\(text)")
        #expect(text.contains("checkout_driver_step_duration_seconds_bucket\(step),le=\"0.025\"} 6\n"))
        #expect(text.contains("checkout_driver_step_duration_seconds_bucket\(step),le=\"2.5\"} 6\n"))
        #expect(text.contains("checkout_driver_step_duration_seconds_bucket\(step),le=\"5\"} 8\n"))
        #expect(text.contains("checkout_driver_step_duration_seconds_bucket\(step),le=\"+Inf\"} 8\n"))
        #expect(text.contains("checkout_driver_step_duration_seconds_count\(step)} 8\n"))
        #expect(text.contains("checkout_driver_runs_total{flow=\"f\",result=\"passed\"} 2\n"))
        #expect(text.contains("checkout_driver_http_responses_total{flow=\"f\",status=\"200\"} 6\n"))
        #expect(text.contains("checkout_driver_http_responses_total{flow=\"f\",status=\"error\"} 2\n"))
        #expect(text.contains("checkout_driver_retries_total{flow=\"f\"} 4\n"))
        for series in Metrics.Series.allCases where ![.lastRun, .lastSuccess, .stopped].contains(series) {
            #expect(
                text.contains("# HELP \(series.rawValue) \(series.help)\n# TYPE \(series.rawValue) \(series.type)\n"))
        }
        let s = try Scratch()
        let checked = try Self.promtool(text, scratch: s)
        #expect(checked.status == 0, "\(checked.output)")
        // promtool is a real judge: it refuses what the format does not allow.
        #expect(try Self.promtool("checkout_driver_runs_total{flow=\"x} 1\n", scratch: s).status != 0)
    }

    /// A batch's metrics file passes promtool, and its figures are the same run's JUnit and JSON figures.
    @Test func aBatchsMetricsAgreeWithItsJUnit() async throws {
        let s = try Scratch()
        let data = s.path + "/rows.csv"
        try Data("id,amount,outcome\nok,8000,passed\nno,5100,passed\n".utf8).write(to: URL(fileURLWithPath: data))
        let r = try await BinaryRunner.run(
            [
                "flow", "run", "bahn-apple-pay", "--data", data, "--repeat", "3", "--parallel", "4", "--junit",
                s.path + "/junit.xml", "--metrics", s.path + "/run.prom", "--format", "json",
            ], home: s.path)
        #expect(r.status == 1, "\(r.all)")  // the row without its outcome declined
        let text = try String(contentsOfFile: s.path + "/run.prom", encoding: .utf8)
        let checked = try Self.promtool(text, scratch: s)
        #expect(checked.status == 0, "\(checked.output)")
        let info = try FileManager.default.attributesOfItem(atPath: s.path + "/run.prom")
        #expect((info[.posixPermissions] as? Int) == 0o644)

        func sum(_ prefix: String) -> Int {
            text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.reduce(0) {
                $0 + (Int($1.split(separator: " ").last!) ?? 0)
            }
        }
        let junit = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/junit.xml"))
        let suites = try junit.nodes(forXPath: "/testsuites/testsuite").compactMap { $0 as? XMLElement }
        let failedSuites = suites.filter { $0.attribute(forName: "failures")?.stringValue != "0" }.count
        #expect(
            sum("checkout_driver_runs_total{flow=\"bahn-apple-pay\",result=\"passed\"}") == suites.count - failedSuites)
        #expect(sum("checkout_driver_runs_total{flow=\"bahn-apple-pay\",result=\"failed\"}") == failedSuites)
        #expect(failedSuites == 3 && suites.count == 6)
        let ran = try junit.nodes(forXPath: "//testcase[not(skipped)]").count
        #expect(sum("checkout_driver_step_duration_seconds_count{") == ran)
        let flows = try #require(
            (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])?["flows"]
                as? [[String: Any]])
        let requests = flows.flatMap { ($0["steps"] as? [[String: Any]]) ?? [] }.reduce(0) {
            $0 + (($1["requests"] as? Int) ?? 0)
        }
        #expect(sum("checkout_driver_http_responses_total{") == requests)
        #expect(sum("checkout_driver_http_responses_total{flow=\"bahn-apple-pay\",status=\"402\"}") == 3)
        // Three charges done and three refused: what money did, by provider.
        #expect(sum("checkout_driver_money_outcomes_total{provider=\"bahn\",kind=\"charge\",outcome=\"done\"}") == 3)
        #expect(sum("checkout_driver_money_outcomes_total{provider=\"bahn\",kind=\"charge\",outcome=\"refused\"}") == 3)
    }
}
