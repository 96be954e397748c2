import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// `checkout-driver monitor`: flows on a schedule, scraped by a real Prometheus server (Debian's `prometheus`,
/// installed by Scripts/bootstrap) whose HTTP API is then asked for the series.
@Suite(.serialized) struct MonitorTests {
    /// The URL the monitor printed on its first line.
    static func metricsURL(_ monitor: LiveProcess) throws -> String {
        #expect(monitor.waitFor("/metrics\n"), "\(monitor.stdout)\(monitor.stderr)")
        let line = try #require(monitor.stdout.split(separator: "\n").first { $0.hasPrefix("monitor: ") })
        return String(try #require(line.split(separator: " ").last))
    }

    /// Prometheus scrapes the monitor every second; its query API then has every flow's runs and last success, the
    /// monitor's /metrics passes promtool, and SIGTERM stops the monitor with 0.
    @Test func prometheusScrapesAMonitorOnLoopback() async throws {
        let s = try Scratch()
        let monitor = try LiveProcess(
            ["monitor", "emulator-orders", "bahn-apple-pay", "--every", "1s", "--listen", "127.0.0.1:0"], home: s.path)
        let url = try Self.metricsURL(monitor)
        let target = url.replacingOccurrences(of: "http://", with: "").replacingOccurrences(of: "/metrics", with: "")
        #expect(try curl(["-s", url.replacingOccurrences(of: "/metrics", with: "/healthz")]) == "ok\n")
        #expect(try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", url + "x"]) == "404")

        let port = try FreePort.take()
        let config = s.path + "/prometheus.yml"
        try Data(
            """
            global:
              scrape_interval: 1s
            scrape_configs:
              - job_name: checkout-driver
                static_configs:
                  - targets: ["\(target)"]
            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        let prometheus = try TestProcess(
            "/usr/bin/prometheus",
            [
                "--config.file=\(config)", "--storage.tsdb.path=\(s.path)/tsdb",
                "--web.listen-address=127.0.0.1:\(port)",
            ], standardError: .file(FileHandle(forWritingAtPath: "/dev/null")!))
        defer { _ = prometheus.stop() }
        func query(_ expression: String) throws -> [[String: Any]] {
            let body = try curl(
                ["-s", "--get", "--data-urlencode", "query=\(expression)", "http://127.0.0.1:\(port)/api/v1/query"])
            let answer = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return ((answer?["data"] as? [String: Any])?["result"] as? [[String: Any]]) ?? []
        }
        let scraped = await eventually(timeout: 30) {
            let runs = (try? query("checkout_driver_runs_total{result=\"passed\"}")) ?? []
            return Set(runs.compactMap { ($0["metric"] as? [String: String])?["flow"] })
                == ["emulator-orders", "bahn-apple-pay"]
        }
        #expect(scraped, "prometheus never saw both flows' runs:\n\(monitor.stdout)")
        let success = try query("checkout_driver_last_success_timestamp_seconds")
        #expect(success.count == 2)
        for sample in success {
            let value = Double(((sample["value"] as? [Any])?.last as? String) ?? "") ?? 0
            #expect(abs(value - Date().timeIntervalSince1970) < 60, "\(sample)")
        }
        #expect(try query("checkout_driver_schedule_stopped == 0").count == 2)
        #expect(try query("up{job=\"checkout-driver\"} == 1").count == 1)

        let exposition = try curl(["-s", url])
        let checked = try MetricsTests.promtool(exposition, scratch: s)
        #expect(checked.status == 0, "\(checked.output)")

        monitor.send(SIGTERM)
        #expect(monitor.exitStatus(within: 15) == 0, "\(monitor.stderr)")
        #expect(monitor.stderr.contains("monitor: stopped (SIGTERM)"))
        // A run a line, each flow's runs one after another (never two of a flow at once).
        let lines = monitor.stdout.split(separator: "\n").filter { $0.contains(" passed in ") }
        #expect(lines.filter { $0.contains(" bahn-apple-pay ") }.count >= 2, "\(monitor.stdout)")
    }

    /// A run that leaves a money outcome open stops its flow's schedule (and says so in a metric); the other flows go
    /// on, one that fails among them, and the monitor ends with 75.
    @Test func anOpenOutcomeStopsItsFlowsScheduleOnly() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path,
            arguments: [
                "--faults",
                "POST /api/payment_intents/*/confirm => drop @*; GET /api/payment_intents/* => status=503 @*",
            ])
        defer { server.stop() }
        try Data(GitHubActionsRunTests.failing.utf8).write(to: URL(fileURLWithPath: s.path + "/bad.json"))
        let monitor = try LiveProcess(
            [
                "monitor", "bahn-apple-pay", "emulator-orders", s.path + "/bad.json", "--every", "1s", "--listen",
                "127.0.0.1:0",
            ], home: s.path)
        let url = try Self.metricsURL(monitor)
        #expect(monitor.waitFor("bahn-apple-pay's schedule stopped", on: .stderr, timeout: 60), "\(monitor.stderr)")
        let ordersRan = await eventually(timeout: 20) {
            monitor.stdout.split(separator: "\n").filter { $0.contains(" emulator-orders passed") }.count >= 3
        }
        #expect(ordersRan, "\(monitor.stdout)")
        let metrics = try curl(["-s", url])
        #expect(metrics.contains("checkout_driver_schedule_stopped{flow=\"bahn-apple-pay\"} 1\n"), "\(metrics)")
        #expect(metrics.contains("checkout_driver_schedule_stopped{flow=\"emulator-orders\"} 0\n"))
        #expect(metrics.contains("checkout_driver_runs_total{flow=\"bahn-apple-pay\",result=\"unknown\"} 1\n"))
        // The flow that fails each time keeps its schedule, and has no last success.
        #expect(monitor.stdout.split(separator: "\n").filter { $0.contains(" bad-flow failed in ") }.count >= 2)
        #expect(metrics.contains("checkout_driver_schedule_stopped{flow=\"bad-flow\"} 0\n"))
        #expect(!metrics.contains("checkout_driver_last_success_timestamp_seconds{flow=\"bad-flow\"}"))
        #expect(metrics.contains("checkout_driver_last_run_timestamp_seconds{flow=\"bad-flow\"}"))
        #expect(monitor.stdout.split(separator: "\n").filter { $0.contains(" bahn-apple-pay ") }.count == 1)
        #expect(monitor.stderr.contains("checkout-driver bahn intent pi_"), "the settle commands: \(monitor.stderr)")
        monitor.send(SIGINT)
        #expect(monitor.exitStatus(within: 15) == 75)
    }

    @Test func aBadCommandLineIsRefused() async throws {
        let s = try Scratch()
        let noEvery = try await BinaryRunner.run(["monitor", "emulator-orders"], home: s.path)
        #expect(noEvery.status == 64 && noEvery.stderr.contains("--every"), "\(noEvery.all)")
        let forever = try await BinaryRunner.run(["monitor", "emulator-orders", "--every", "1e300"], home: s.path)
        #expect(forever.status == 64 && forever.stderr.contains("from a second to a day"), "\(forever.all)")
        let badListen = try await BinaryRunner.run(
            ["monitor", "emulator-orders", "--every", "1m", "--listen", "nowhere"], home: s.path)
        #expect(badListen.status == 64 && badListen.stderr.contains("HOST:PORT"), "\(badListen.all)")
    }
}
