import Foundation
import SandboxEmulator
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `flow run` end to end: the built binary against a real emulator.
@Suite struct FlowRunTests {
    @Test func builtinFlowPassesOnTheEmbeddedEmulator() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("environment: local (embedded emulator at http://127.0.0.1:"))
        for step in ["health", "create-order", "pay", "await-paid", "finally ledger"] {
            #expect(r.stdout.contains("✓ \(step)"), "missing \(step) in \(r.stdout)")
        }
        #expect(r.stdout.contains("passed: emulator-orders, 4 steps, 1 finally in "), "\(r.stdout)")
    }

    @Test func jsonFormatIsOneDocumentWithTheEnvironment() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--format", "json"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(doc["environment"] as? String == "local")
        #expect(doc["passed"] as? Bool == true)
        #expect((doc["steps"] as? [[String: Any]])?.count == 5)
        #expect((doc["captures"] as? [String: Any])?["order_id"] as? String != nil)
        #expect(!r.stderr.contains("environment:"))  // JSON mode: the field replaces the stderr line
    }

    @Test func jsonLinesIsOneEventPerLine() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--format", "jsonl"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let lines = r.stdout.split(separator: "\n")
        let events = try lines.map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(events.first?["event"] as? String == "flow_started")
        #expect(events.last?["event"] as? String == "flow_finished")
        #expect(events.last?["environment"] as? String == "local")
        #expect(events.filter { $0["event"] as? String == "exchange" }.count >= 5)
        #expect(events.filter { $0["event"] as? String == "step_finished" }.count == 5)
    }

    @Test func failingExpectationExitsOneAndStillRunsFinally() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "fail.json",
            """
            {"name": "fail", "steps": [
              {"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "expect": {"equals": {"status": "down"}}},
              {"name": "never", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}
            ], "finally": [{"name": "cleanup", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", flow], home: s.path)
        #expect(r.status == 1)
        #expect(r.stderr.contains("error: step 'health': expected $.status to equal \"down\", found \"ok\""))
        #expect(r.stdout.contains("- never  skipped"))
        #expect(r.stdout.contains("✓ finally cleanup"))
        #expect(r.stdout.contains(/failed: fail, 1 of 2 steps ran, 1 finally in \d+ ms, 1 failed\n/), "\(r.stdout)")

        // -q: the failed step, the verdict and the error; nothing that passed, no header, no environment line.
        let quiet = try await BinaryRunner.run(["flow", "run", flow, "-q"], home: s.path)
        #expect(quiet.status == 1)
        let lines = quiet.stdout.split(separator: "\n")
        #expect(
            lines.count == 2 && lines[0].hasPrefix("✗ health")
                && lines[1].hasPrefix("failed: fail, 1 of 2 steps ran, 1 finally"), "\(quiet.stdout)")
        #expect(quiet.stderr.hasPrefix("error: step 'health'") && quiet.stderr.contains("\nhint: "), "\(quiet.stderr)")
    }

    @Test func countsReadRightAndQuietPassingFlowsSayNothing() async throws {
        let s = try Scratch()
        let one = try s.write(
            "one.json",
            """
            {"name": "one", "steps": [{"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", one], home: s.path)
        #expect(r.status == 0)
        #expect(r.stdout.contains("flow one (1 step)\n"))
        #expect(r.stdout.contains(/passed: one, 1 step in \d+ ms\n/), "\(r.stdout)")
        let optional = try s.write(
            "optional.json",
            """
            {"name": "opt", "steps": [
              {"name": "health", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}},
              {"name": "maybe", "optional": true, "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "expect": {"status": [500]}}
            ]}
            """)
        let o = try await BinaryRunner.run(["flow", "run", optional], home: s.path)
        #expect(o.status == 0, "\(o.all)")
        #expect(o.stdout.contains(/passed: opt, 2 steps in \d+ ms, 1 optional failed\n/), "\(o.stdout)")
        let quiet = try await BinaryRunner.run(["flow", "run", one, "-q"], home: s.path)
        #expect(quiet.status == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty, "\(quiet.all)")
    }

    @Test func malformedFlowFileNamesTheJSONPath() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "bad.json",
            """
            {"name": "bad", "steps": [{"name": "a", "request": {"url": "http://x"}, "expect": {"status": "200"}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", flow], home: s.path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("$.steps[0].expect.status: expected a status code"))
        let notJSON = try s.write("nojson.json", "{name: bad")
        let r2 = try await BinaryRunner.run(["flow", "validate", notJSON], home: s.path)
        #expect(r2.status == 65)
        #expect(r2.stderr.contains("not valid JSON"))
    }

    @Test func missingCredentialStopsBeforeAnyRequestWithExit78() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let flow = try s.write(
            "f.json",
            """
            {"name": "needs-key", "steps": [
              {"name": "first", "request": {"url": "\(emulator.baseURL)/_sandbox/health"}},
              {"name": "second", "request": {"url": "\(emulator.baseURL)/_sandbox/echo", "headers": {"Bn-Api-Key": "${env.BAHN_API_KEY}"}}}
            ]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", flow, "--env", "sandbox"], home: s.path)
        #expect(r.status == 78)
        #expect(r.stderr.contains("BAHN_API_KEY is not set for environment 'sandbox'"))
        #expect(r.stderr.contains("environment: sandbox"))
        #expect(emulator.receivedRequests().isEmpty)  // not even the first step's request
    }

    @Test func unreachableServiceExits69() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox", "--timeout", "2"], home: s.path,
            environment: ["EMULATOR_URL": "http://127.0.0.1:9"])
        #expect(r.status == 69)
        #expect(r.stderr.contains("cannot connect"))
    }

    @Test func deadlineExits69() async throws {
        let s = try Scratch()
        let emulator = try Emulator(faults: FaultSpec(parsing: "GET /_sandbox/health => latency=4000ms @*"))
        emulator.start()
        defer { emulator.shutdown() }
        let start = Date()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox", "--deadline", "300ms"], home: s.path,
            environment: ["EMULATOR_URL": emulator.baseURL])
        #expect(r.status == 69)
        #expect(r.stderr.contains("deadline of 0.3s passed during step 'health'"))
        #expect(Date().timeIntervalSince(start) < 3.0)  // well before the 4 s the server would take
    }

    @Test func dotEnvAndProfilesConfigureSandbox() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        // .env in the working directory
        try s.write(".env", "# test\nexport EMULATOR_URL=\"\(emulator.baseURL)\"\n")
        let a = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--env", "sandbox"], home: s.path)
        #expect(a.status == 0, "\(a.all)")
        // the process environment beats .env, and --set beats both
        let dead = "http://127.0.0.1:9"
        let overridden = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox", "--timeout", "2"], home: s.path,
            environment: ["EMULATOR_URL": dead])
        #expect(overridden.status == 69)
        let flagged = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox", "--set", "EMULATOR_URL=\(emulator.baseURL)"],
            home: s.path, environment: ["EMULATOR_URL": dead])
        #expect(flagged.status == 0, "\(flagged.all)")
        // a named profile from --config
        let other = try Scratch()
        let config = try other.write(
            "config.json",
            """
            {"profiles": {"staging": {"environment": "sandbox", "variables": {"EMULATOR_URL": "\(emulator.baseURL)"}}}}
            """)
        let b = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "staging", "--config", config, "--format", "json"],
            home: other.path)
        #expect(b.status == 0, "\(b.all)")
        #expect(b.stdout.contains("\"environment\": \"staging\""))
        let d = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "stagign", "--config", config], home: other.path)
        #expect(d.status == 78, "an unknown environment is a configuration problem: \(d.all)")
        #expect(d.stderr.contains("did you mean 'staging'?"))
        let e = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders"], home: other.path,
            environment: ["CHECKOUT_DRIVER_ENV": "nowhere"])
        #expect(e.status == 78, "\(e.all)")
        try other.write(".env", "THIS IS NOT AN ASSIGNMENT\n")
        let f = try await BinaryRunner.run(["flow", "run", "emulator-orders"], home: other.path)
        #expect(f.status == 65)
        #expect(f.stderr.contains(".env:1: expected KEY=value"))
    }

    @Test func junitAndHARParseBackWithTheirRequiredFields() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--junit", s.path + "/report.xml", "--record", s.path + "/run.har"],
            home: s.path)
        #expect(r.status == 0, "\(r.all)")

        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/report.xml"))
        let suites = try xml.nodes(forXPath: "/testsuites/testsuite")
        #expect(suites.count == 1)
        let suite = try #require(suites.first as? XMLElement)
        #expect(suite.attribute(forName: "name")?.stringValue == "emulator-orders")
        #expect(suite.attribute(forName: "tests")?.stringValue == "5")
        #expect(suite.attribute(forName: "failures")?.stringValue == "0")
        let cases = try xml.nodes(forXPath: "//testcase")
        #expect(cases.count == 5)
        #expect(cases.allSatisfy { Double(($0 as? XMLElement)?.attribute(forName: "time")?.stringValue ?? "") != nil })

        let har = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: s.path + "/run.har")))
                as? [String: Any])
        let log = try #require(har["log"] as? [String: Any])
        #expect(log["version"] as? String == "1.2")
        #expect((log["creator"] as? [String: Any])?["name"] as? String == "checkout-driver")
        let entries = try #require(log["entries"] as? [[String: Any]])
        #expect(entries.count == 5)
        for entry in entries {
            for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
                #expect(entry[key] != nil, "\(key)")
            }
            let request = try #require(entry["request"] as? [String: Any])
            for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"]
            {
                #expect(request[key] != nil, "request.\(key)")
            }
            let response = try #require(entry["response"] as? [String: Any])
            for key in [
                "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize",
                "bodySize",
            ] {
                #expect(response[key] != nil, "response.\(key)")
            }
            let timings = try #require(entry["timings"] as? [String: Any])
            for key in ["send", "wait", "receive"] {
                #expect((timings[key] as? Double).map { $0 >= 0 } == true, "timings.\(key)")
            }
        }
    }

    @Test func failureIsReportedInJUnit() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "fail.json",
            """
            {"name": "fail", "steps": [{"name": "nope", "request": {"url": "${env.EMULATOR_URL}/_sandbox/nowhere"}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", flow, "--junit", s.path + "/j.xml"], home: s.path)
        #expect(r.status == 1)
        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/j.xml"))
        let failure = try #require(try xml.nodes(forXPath: "//testcase[@name='nope']/failure").first as? XMLElement)
        #expect(failure.attribute(forName: "message")?.stringValue?.contains("expected status 2xx, got 404") == true)
    }

    /// A failed step shows the HTTP status of its last answer, in text and in JSON.
    @Test func aFailedStepShowsItsStatus() async throws {
        let text = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--var", "amount=5100"])
        #expect(text.status == 1 && text.stdout.contains("✗ confirm  402"), "\(text.all)")
        let json = try await BinaryRunner.run([
            "flow", "run", "bahn-apple-pay", "--var", "amount=5100", "--format", "json",
        ])
        let steps = try #require(
            (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])?["steps"]
                as? [[String: Any]])
        #expect(steps.first { $0["name"] as? String == "confirm" }?["status"] as? Int == 402, "\(json.stdout)")
    }
}
