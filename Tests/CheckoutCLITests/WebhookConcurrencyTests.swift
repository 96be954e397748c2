import Foundation
import TestSupport
import Testing

/// Webhooks with parallel runs: every run's listener is one more target of `sandbox serve`, so no run steals or
/// strands another's deliveries, and a `bahn listen` beside them receives every event.
@Suite struct WebhookConcurrencyTests {
    func targets(_ server: ServeProcess) throws -> [[String: Any]] {
        let listed = try JSONSerialization.jsonObject(
            with: Data(curl(["-s", server.url + "/_sandbox/bahn/webhook-targets"]).utf8))
        return ((listed as? [String: Any])?["targets"] as? [[String: Any]]) ?? []
    }

    @Test func tenParallelFlowsAndAListenerAllGetTheirEvents() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let listener = try LiveProcess(["bahn", "listen"], home: s.path)
        defer { listener.process.stop() }
        #expect(listener.waitFor("listening for Bahn webhooks", on: .stderr), "\(listener.stderr)")
        #expect(try targets(server).count == 1, "the listener registered itself")

        let home = s.path
        let runs = try await withThrowingTaskGroup(of: BinaryRunner.Result.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--format", "json"], home: home)
                }
            }
            var all: [BinaryRunner.Result] = []
            for try await r in group { all.append(r) }
            return all
        }
        for r in runs { #expect(r.status == 0, "\(r.all)") }
        let intents = try runs.map { r -> String in
            let document = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            return try #require((document["captures"] as? [String: Any])?["intent"] as? String)
        }
        #expect(Set(intents).count == 10, "\(intents)")

        // The listener saw every event the emulator emitted (each run's success among them), and only the listener's
        // target is left.
        #expect(
            await eventually(timeout: 10) {
                intents.allSatisfy { listener.stdout.contains("payment_intent.status.succeeded  \($0)") }
            },
            "\(listener.stdout)")
        let emitted = try #require(
            try JSONSerialization.jsonObject(with: Data(curl(["-s", server.url + "/_sandbox/bahn/events"]).utf8))
                as? [String: Any])
        let ids = ((emitted["events"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }
        #expect(ids.count >= 10)
        #expect(
            await eventually(timeout: 10) { ids.allSatisfy { listener.stdout.contains($0) } },
            "every event reached the listener")
        let left = try targets(server)
        #expect(left.count == 1 && (left.first?["id"] as? String)?.hasPrefix("run-") == true, "\(left)")
        listener.send(SIGINT)
        #expect(listener.exitStatus(within: 5) == 0)
        #expect(try targets(server).isEmpty, "bahn listen removed its own target")
    }

    /// Runs one after another share the batch's inbox: a batch at --parallel 1 registers one webhook target for all its
    /// runs and removes it once, when the batch is over — not a target registered and removed for each run.
    @Test func aSequentialBatchRegistersOneTargetForAllItsRuns() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let r = try await BinaryRunner.run(
            ["flow", "run", "bahn-apple-pay", "--repeat", "3", "--parallel", "1", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let log = try JSONSerialization.jsonObject(
            with: Data(curl(["-s", server.url + "/_sandbox/requests?limit=1000"]).utf8))
        let calls = (((log as? [String: Any])?["requests"] as? [[String: Any]]) ?? []).compactMap { request in
            (request["method"] as? String).flatMap { method in (request["target"] as? String).map { method + " " + $0 }
            }
        }
        #expect(calls.filter { $0.hasPrefix("POST /api/payment_intents/") && $0.hasSuffix("/confirm") }.count == 3)
        #expect(calls.filter { $0.hasPrefix("PUT /_sandbox/bahn/webhook-targets/") }.count == 1, "\(calls)")
        #expect(calls.filter { $0.hasPrefix("DELETE /_sandbox/bahn/webhook-targets/") }.count == 1, "\(calls)")
        #expect(try targets(server).isEmpty, "removed when the batch was over")
    }

    @Test func aRunThatCannotRegisterItsListenerFailsFastAndSaysWhy() async throws {
        let s = try Scratch()
        // An announced sandbox serve that answers its control route with a 404: it is not the emulator it claims to be.
        let impostor = try ServeProcess(
            home: s.path, arguments: ["--faults", "PUT /_sandbox/bahn/webhook-targets/* => status=404 @*"])
        defer { impostor.stop() }
        let started = ContinuousClock.now
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--timeout", "2"], home: s.path)
        #expect(r.status == 69, "\(r.all)")
        #expect(r.stderr.contains("cannot register this run's webhook listener with sandbox serve"), "\(r.stderr)")
        #expect(r.stderr.contains("it answered 404"))
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// A control route that never answers is retried like any safe request, each attempt within --timeout: the run
    /// ends after the policy's attempts, never waiting for ever, and says nothing of a deadline nobody set.
    @Test func aRegistrationThatHangsFailsWithinItsAttempts() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "PUT /_sandbox/bahn/webhook-targets/* => latency=20000ms @*"])
        defer { server.stop() }
        let started = ContinuousClock.now
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--timeout", "1"], home: s.path)
        #expect(r.status == 69, "\(r.all)")
        #expect(r.stderr.contains("cannot register this run's webhook listener"), "\(r.stderr)")
        let took = ContinuousClock.now - started
        #expect(took > .seconds(2) && took < .seconds(6), "three attempts of one --timeout each: \(took)")
        #expect(!r.stderr.contains("deadline"), "\(r.stderr)")
    }

    @Test func aTargetThatCannotBeRemovedIsAWarningNotAFailure() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "DELETE /_sandbox/bahn/webhook-targets/* => status=500 @*"])
        defer { server.stop() }
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("warning: could not remove webhook target run-"), "\(r.stderr)")
        #expect(r.stderr.contains("it answered 500"))
        #expect(try targets(server).count == 1, "the target it could not remove is still there")
    }

    /// `bahn listen` removes its target before it closes its listener: while the removal is on its way (slowed here),
    /// a delivery still finds the listener answering, so the emulator never marks one failed at a closed port.
    @Test func bahnListenAnswersUntilItsTargetIsGone() async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--faults", "DELETE /_sandbox/bahn/webhook-targets/* => latency=2000ms @*"])
        defer { server.stop() }
        let listener = try LiveProcess(["bahn", "listen"], home: s.path)
        defer { listener.process.stop() }
        #expect(listener.waitFor("listening for Bahn webhooks at ", on: .stderr), "\(listener.stderr)")
        let line = try #require(
            listener.stderr.split(separator: "\n").first { $0.contains("listening for Bahn webhooks at ") })
        let url = try #require(line.split(separator: " ").last.map(String.init))
        listener.send(SIGINT)
        usleep(700_000)
        // Unsigned, so refused with 400 — but answered: the listener is still open while its target is being removed.
        let code = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "--data-binary", "{}", url])
        #expect(code == "400", "the listener closed before its target was removed: \(code)")
        #expect(listener.exitStatus(within: 8) == 0, "\(listener.stderr)")
        #expect(try targets(server).isEmpty, "bahn listen removed its own target")
    }
}
