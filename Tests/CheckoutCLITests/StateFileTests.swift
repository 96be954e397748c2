import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// The state file across processes: chaining, corruption, and concurrent writers.
@Suite struct StateFileTests {
    @Test func laterInvocationsReadWhatEarlierOnesCaptured() async throws {
        let s = try Scratch()
        let first = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--session", s.path + "/state.json"], home: s.path)
        #expect(first.status == 0, "\(first.all)")
        let follow = try s.write(
            "follow.json",
            """
            {"name": "follow", "steps": [{"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
              "json": {"previous": "${state.captures.emulator-orders.order_id}"}}, "expect": {"matches": {"json.previous": "^ord_"}}}]}
            """)
        let second = try await BinaryRunner.run(
            ["flow", "run", follow, "--session", s.path + "/state.json"], home: s.path)
        #expect(second.status == 0, "\(second.all)")
        let fresh = try await BinaryRunner.run(
            ["flow", "run", follow, "--session", s.path + "/other.json"], home: s.path)
        #expect(fresh.status == 65)
        #expect(fresh.stderr.contains("is not in the state file"))
    }

    /// Captures are kept per flow: a second flow that captures the same name leaves the first one's value alone, and a
    /// later run reads either by the flow's name.
    @Test func twoFlowsCapturingOneNameKeepBoth() async throws {
        let s = try Scratch()
        let state = s.path + "/state.json"
        for flow in ["one", "two"] {
            let file = try s.write(
                "\(flow).json",
                """
                {"name": "\(flow)", "steps": [{"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
                  "json": {"v": "from-\(flow)"}}, "capture": {"id": "json.v"}}]}
                """)
            let r = try await BinaryRunner.run(["flow", "run", file, "--session", state], home: s.path)
            #expect(r.status == 0, "\(r.all)")
        }
        let reader = try s.write(
            "reader.json",
            """
            {"name": "reader", "steps": [{"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
              "json": {"a": "${state.captures.one.id}", "b": "${state.captures.two.id}"}},
              "expect": {"equals": {"json.a": "from-one", "json.b": "from-two"}}}]}
            """)
        let r = try await BinaryRunner.run(["flow", "run", reader, "--session", state], home: s.path)
        #expect(r.status == 0, "\(r.all)")
    }

    /// A captures section of the old flat layout (a name straight under `captures`) is 65 naming the entry and the
    /// layout, never silently misread as a flow.
    @Test func aFlatCaptureIs65NamingTheLayout() async throws {
        let s = try Scratch()
        let content = #"{"captures": {"order_id": "ord_1"}}"#
        let state = try s.write("state.json", content)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--session", state], home: s.path)
        #expect(r.status == 65, "\(r.all)")
        #expect(
            r.stderr.contains(
                "$.captures.order_id: expected an object (the captures of flow 'order_id'), found a string"),
            "\(r.stderr)")
        #expect(r.stderr.contains("captures.<flow>.<name>"), "\(r.stderr)")
        #expect(try s.read("state.json") == content)
    }

    @Test func corruptStateIsAnErrorAndIsLeftAlone() async throws {
        let s = try Scratch()
        let path = try s.write("state.json", "{\"captures\": {\"order_id\": ")
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--session", path], home: s.path)
        #expect(r.status == 65)
        // Where it ends, as for every file cut short.
        #expect(
            r.stderr.contains(
                "state file \(path) is corrupt: not valid JSON: expected a value at line 1, column 27 (the text ends early — truncated?)"
            ), "\(r.stderr)")
        #expect(try s.read("state.json") == "{\"captures\": {\"order_id\": ")
    }

    @Test func concurrentProcessesNeverLoseAnUpdate() async throws {
        let s = try Scratch()
        // Each flow captures under its own name; two processes run ten flows each at the same time.
        // Every capture must be in the file afterwards: a lost read-modify-write would drop one.
        var files: [[String]] = [[], []]
        for worker in 0..<2 {
            for i in 0..<10 {
                let name = "w\(worker)_\(i)"
                files[worker].append(
                    try s.write(
                        "\(name).json",
                        """
                        {"name": "\(name)", "steps": [{"name": "echo", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo",
                          "json": {"v": "\(name)"}}, "capture": {"\(name)": "json.v"}}]}
                        """))
            }
        }
        let state = s.path + "/shared-state.json"
        let home = s.path
        let plan = files
        let group = DispatchGroup()
        let failures = NSLock()
        nonisolated(unsafe) var failed: [String] = []
        for worker in 0..<2 {
            group.enter()
            DispatchQueue.global().async {
                for file in plan[worker] {
                    let r = try? BinaryRunner.runBlocking(["flow", "run", file, "--session", state, "-q"], home: home)
                    if r?.status != 0 { failures.withLock { failed.append(file + ": " + (r?.all ?? "did not run")) } }
                }
                group.leave()
            }
        }
        group.wait()
        #expect(failed.isEmpty, "\(failed)")
        let doc = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any])
        let captures = try #require(doc["captures"] as? [String: [String: Any]])
        #expect(captures.count == 20, "\(captures.keys.sorted())")
        #expect(captures.allSatisfy { flow, values in values[flow] as? String == flow }, "\(captures)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: s.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
    }
}

@Suite struct StateFileSchemaTests {
    /// A captures section that is not an object stops the run before its first request, and is left as it is.
    @Test(arguments: [#"{"captures": "x"}"#, #"{"captures": [1, 2]}"#])
    func aWrongTypedCapturesSectionIs65BeforeAnythingIsSent(content: String) async throws {
        let s = try Scratch()
        let state = try s.write("state.json", content)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--session", state], home: s.path)
        #expect(r.status == 65, "\(r.all)")
        #expect(r.stderr.contains("state file \(state): $.captures: expected an object"), "\(r.stderr)")
        #expect(!r.stdout.contains("✓"), "no step ran")
        #expect(try s.read("state.json") == content)
    }

    /// Every Bahn command decodes its section before its first request, not after one it then cannot record; and
    /// `flow validate` says the same.
    @Test(arguments: [
        ["bahn", "create-intent", "--amount", "8000", "--currency", "VND"], ["bahn", "intent", "pi_1"],
        ["flow", "validate", "bahn-apple-pay"],
    ])
    func aWrongTypedBahnSectionIs65BeforeAnythingIsSent(command: [String]) async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let content = #"{"bahn": {"tokens": {"ab": "x"}}}"#
        let state = try s.write("state.json", content)
        let r = try await BinaryRunner.run(
            command + ["--env", "sandbox", "--session", state], home: s.path,
            environment: try BahnCommandTests.sandboxEnvironment(emulator, scratch: s))
        #expect(r.status == 65, "\(r.all)")
        #expect(
            r.stderr.contains("state file \(state): $.bahn.tokens.ab: expected an object, found a string"),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty, "nothing was sent")
        #expect(try s.read("state.json") == content)
    }

    /// A capture never points at a file the run made for itself in its scratch directory (gone when the run ends).
    @Test func aCaptureOfAScratchFileIsNotKept() async throws {
        let s = try Scratch()
        let state = s.path + "/state.json"
        let r = try await BinaryRunner.run(["flow", "run", "bahn-apple-pay", "--session", state], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let document =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state))) as? [String: Any]
        let captures = (document?["captures"] as? [String: [String: Any]])?["bahn-apple-pay"] ?? [:]
        #expect(captures["token_file"] == nil, "the made token's path is not kept: \(captures)")
        #expect(captures["intent"] != nil, "a lasting value is: \(captures)")
    }
}
