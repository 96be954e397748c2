import Foundation
import SandboxEmulator
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Ctrl-C and SIGTERM during a flow: the step stops, `finally` runs, the reports are written, 130 / 143.
@Suite struct InterruptTests {
    /// A flow that polls for ever (the demo order is paid, never shipped), with a cleanup in `finally`.
    static let pollingFlow = """
        {"name": "interrupt-me", "steps": [
          {"name": "create", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/orders",
                                         "json": {"amount": 100, "currency": "VND"}}, "capture": {"id": "order.id"}},
          {"name": "wait", "request": {"url": "${env.EMULATOR_URL}/_sandbox/orders/${vars.id}"},
           "until": {"path": "order.status", "equals": "shipped", "interval": "200ms", "timeout": "60s"}},
          {"name": "after", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}],
         "finally": [{"name": "cleanup", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
                                                     "json": {"cleanup": "${vars.id}"}}}]}
        """

    func start(_ flow: String, _ extra: [String], emulator: Emulator, scratch s: Scratch) throws -> LiveProcess {
        let file = try s.write("flow.json", flow)
        return try LiveProcess(
            ["flow", "run", file, "--env", "sandbox", "--format", "jsonl"] + extra, home: s.path,
            environment: ["EMULATOR_URL": emulator.baseURL])
    }

    func cleanupRan(_ emulator: Emulator) -> Bool {
        emulator.receivedRequests().contains {
            $0.path == "/_sandbox/echo" && String(decoding: $0.body, as: UTF8.self).contains("cleanup")
        }
    }

    /// One Ctrl-C stops every run of a batch in flight (each runs its finally steps), starts no more, and the
    /// summary still comes — counting them interrupted, in its table too.
    @Test(arguments: ["jsonl", "text"])
    func sigintStopsEveryRunOfABatch(format: String) async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let file = try s.write("flow.json", Self.pollingFlow)
        let run = try LiveProcess(
            ["flow", "run", file, "--env", "sandbox", "--repeat", "6", "--parallel", "3", "--format", format],
            home: s.path, environment: ["EMULATOR_URL": emulator.baseURL])
        // Three runs polling at once.
        let polling = {
            emulator.receivedRequests().filter { $0.method == "GET" && $0.path.hasPrefix("/_sandbox/orders/") }.map(
                \.path)
        }
        for _ in 0..<200 where Set(polling()).count < 3 { usleep(20_000) }
        #expect(Set(polling()).count == 3)
        run.send(SIGINT)
        #expect(run.exitStatus(within: 5) == 130, "\(run.stderr)")
        let cleanups = emulator.receivedRequests().filter {
            $0.path == "/_sandbox/echo" && String(decoding: $0.body, as: UTF8.self).contains("cleanup")
        }
        #expect(cleanups.count == 3, "every run in flight ran its finally")
        #expect(
            emulator.receivedRequests().filter { $0.method == "POST" && $0.path == "/_sandbox/orders" }.count == 3,
            "no run started after it")
        if format == "text" {
            let lines = run.stdout.split(separator: "\n").map {
                $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            }
            #expect(lines.contains { $0.hasPrefix("flow runs passed failed unknown interrupted p50") }, "\(run.stdout)")
            #expect(lines.contains { $0.hasPrefix("interrupt-me 3 0 0 0 3 ") }, "\(run.stdout)")
            #expect(
                run.stdout.contains("3 runs: 0 passed, 0 failed, 0 unknown, 3 interrupted, 3 not run"), "\(run.stdout)")
            return
        }
        let summary = try #require(run.stdout.split(separator: "\n").last)
        #expect(summary.contains(#""event":"summary""#))
        #expect(summary.contains(#""notRun":3"#), "\(summary)")
        #expect(
            summary.contains(#""interrupted":3"#) && summary.contains(#""failed":0"#), "stopped, not failed: \(summary)"
        )
    }

    @Test func sigintMidPollRunsFinallyWritesEveryReportAndExits130() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let run = try start(
            Self.pollingFlow, ["--junit", s.path + "/run.xml", "--record", s.path + "/run.har"], emulator: emulator,
            scratch: s)
        #expect(run.waitFor(#""event":"poll""#), "it polls: \(run.stdout)")
        let interrupted = ContinuousClock.now
        run.send(SIGINT)
        let status = run.exitStatus(within: 5)
        #expect(status == 130, "\(run.stderr)")
        #expect(ContinuousClock.now - interrupted < .seconds(3))
        #expect(run.stderr.contains("interrupted (SIGINT)"))
        #expect(run.stderr.contains("error: interrupted during step 'wait'"))
        #expect(cleanupRan(emulator), "finally ran")

        // JSONL: the last event says how the flow ended.
        let last = try #require(run.stdout.split(separator: "\n").last)
        let finished = try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])
        #expect(finished["event"] as? String == "flow_finished")
        #expect(finished["exitCode"] as? Int == 130)

        // JUnit: the interrupted step failed, the one after it did not run, the cleanup passed.
        let junit = try XMLDocument(data: Data(contentsOf: URL(fileURLWithPath: s.path + "/run.xml")))
        let cases = try junit.nodes(forXPath: "//testcase").compactMap { $0 as? XMLElement }
        func testcase(_ name: String) -> XMLElement? {
            cases.first { $0.attribute(forName: "name")?.stringValue == name }
        }
        #expect(
            testcase("wait")?.elements(forName: "failure").first?.attribute(forName: "message")?.stringValue?.contains(
                "interrupted") == true)
        #expect(testcase("after")?.elements(forName: "skipped").isEmpty == false)
        #expect(testcase("finally cleanup")?.children?.isEmpty ?? true, "the cleanup passed")

        // HAR: the exchanges so far, the cleanup's among them.
        let har = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path + "/run.har")))
                as? [String: Any])
        let entries = ((har["log"] as? [String: Any])?["entries"] as? [[String: Any]]) ?? []
        let urls = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(urls.contains { $0.hasSuffix("/_sandbox/orders") })
        #expect(urls.filter { $0.contains("/_sandbox/orders/ord_") }.count >= 1)
        #expect(urls.last?.hasSuffix("/_sandbox/echo") == true)
    }

    /// SIGTERM stops a request in flight (here one the server holds for 4 s) at once, and the run ends with 143.
    @Test func sigtermAbortsTheRequestInFlightAndExits143() async throws {
        let s = try Scratch()
        let emulator = try Emulator(faults: try FaultSpec(parsing: "GET /_sandbox/orders/* => latency=4000ms @*"))
        emulator.start()
        defer { emulator.shutdown() }
        let run = try start(Self.pollingFlow, [], emulator: emulator, scratch: s)
        #expect(run.waitFor(#""step":"wait""#), "\(run.stdout)")
        #expect(
            await eventually { emulator.receivedRequests().contains { $0.path.hasPrefix("/_sandbox/orders/ord_") } })
        let terminated = ContinuousClock.now
        run.send(SIGTERM)
        #expect(run.exitStatus(within: 5) == 143, "\(run.stderr)")
        #expect(
            ContinuousClock.now - terminated < .milliseconds(2500),
            "well before the held request would have been answered")
        #expect(run.stderr.contains("interrupted (SIGTERM)"))
        #expect(cleanupRan(emulator))
    }

    /// A flow Ctrl-C stopped says so — `interrupted:`, not `failed:` — as a suite counts it.
    @Test func aStoppedFlowSaysInterruptedNotFailed() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let file = try s.write("flow.json", Self.pollingFlow)
        let run = try LiveProcess(
            ["flow", "run", file, "--env", "sandbox"], home: s.path, environment: ["EMULATOR_URL": emulator.baseURL])
        #expect(
            await eventually { emulator.receivedRequests().contains { $0.path.hasPrefix("/_sandbox/orders/ord_") } })
        run.send(SIGINT)
        #expect(run.exitStatus(within: 5) == 130, "\(run.stderr)")
        #expect(run.stdout.contains("\ninterrupted: "), "\(run.stdout)")
        #expect(!run.stdout.contains("\nfailed: "), "\(run.stdout)")
    }

    /// A second Ctrl-C does not wait for `finally`.
    @Test func aSecondSigintExitsAtOnce() async throws {
        let s = try Scratch()
        let emulator = try Emulator(faults: try FaultSpec(parsing: "POST /_sandbox/echo => latency=4000ms @*"))
        emulator.start()
        defer { emulator.shutdown() }
        let run = try start(Self.pollingFlow, [], emulator: emulator, scratch: s)
        #expect(run.waitFor(#""event":"poll""#), "\(run.stdout)")
        run.send(SIGINT)
        #expect(run.waitFor(#""step":"cleanup""#), "the cleanup started: \(run.stdout)")
        let again = ContinuousClock.now
        run.send(SIGINT)
        #expect(run.exitStatus(within: 5) == 130)
        #expect(ContinuousClock.now - again < .seconds(1))
    }

    /// Interrupted while it waits, `bahn confirm --wait` still says where the payment stands.
    @Test func anInterruptedConfirmWaitStillPrintsTheIntentItsStatusAndKey() async throws {
        let s = try Scratch()
        let token = try await BahnCommandTests.makeToken(s, amount: 5200)
        let run = try LiveProcess(
            [
                "bahn", "confirm", "--order-id", "w-1", "--amount", "5200", "--currency", "704",
                "--token-file", token, "--wait",
            ], home: s.path)
        #expect(run.waitFor("Bahn returned processing", on: .stderr), "\(run.stderr)")
        #expect(run.waitFor("✓ confirm"), "the confirm finished and the wait began: \(run.stdout)")
        run.send(SIGINT)
        #expect(run.exitStatus(within: 5) == 130, "\(run.stderr)")
        let intentLine = try #require(
            run.stdout.split(separator: "\n").first { $0.hasPrefix("payment_intent pi_") }, "\(run.stdout)")
        #expect(intentLine.hasSuffix("processing"))
        #expect(run.stdout.contains("idempotency key order-w-1-applepay"))
        #expect(run.stderr.contains("interrupted during step 'wait'"))
    }

    /// Ctrl-C while only the finally steps are left: they get a few seconds, not their full timeouts, and the run
    /// still ends as interrupted.
    @Test func aSigintDuringFinallyGivesItAFewSecondsThenExits130() async throws {
        let s = try Scratch()
        let emulator = try Emulator(faults: try FaultSpec(parsing: "POST /_sandbox/echo => latency=20000ms @*"))
        emulator.start()
        defer { emulator.shutdown() }
        let flow = """
            {"name": "slow-cleanup", "steps": [{"name": "quick", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}],
             "finally": [{"name": "cleanup", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "json": {}}}]}
            """
        let run = try start(flow, [], emulator: emulator, scratch: s)
        #expect(run.waitFor(#""step":"cleanup""#), "\(run.stdout)")
        let interrupted = ContinuousClock.now
        run.send(SIGINT)
        #expect(run.exitStatus(within: 10) == 130, "\(run.stderr)")
        let took = ContinuousClock.now - interrupted
        #expect(
            took > .seconds(4) && took < .seconds(7), "the finally steps' few seconds, not the 20 s request: \(took)")
        #expect(run.stderr.contains("interrupted during step 'cleanup'"), "\(run.stderr)")
    }
}
