import Foundation
import TestSupport
import Testing

/// `sandbox serve` as a process: prints its URL, serves, and stops cleanly on SIGTERM and SIGINT.
@Suite struct SandboxServeTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func servesUntilSignalled(signal: Int32) async throws {
        let s = try Scratch()
        let server = try ServeProcess(
            home: s.path, arguments: ["--port", "0", "--faults", "GET /_sandbox/health => status=503:Retry-After=1 @1"])
        defer { server.stop() }
        let url = server.url
        #expect(url.hasPrefix("http://127.0.0.1:"))

        let first = try curl(["-s", "-i", "--max-time", "5", url + "/_sandbox/health"])
        #expect(first.contains("HTTP/1.1 503"))  // the injected fault, first attempt only
        #expect(first.lowercased().contains("retry-after: 1"))
        let second = try curl(["-s", "-i", "--max-time", "5", url + "/_sandbox/health"])
        #expect(second.contains("HTTP/1.1 200"))
        #expect(second.contains("\"status\":\"ok\""))

        // While it serves, it announces itself for --env local runs; a clean stop withdraws the announcement.
        let announcement = s.path + "/state/checkout-driver/local/emulator.json"
        #expect(try s.read("state/checkout-driver/local/emulator.json").contains(url))

        server.process.signal(signal)
        #expect(server.process.exits(within: 3), "a clean shutdown takes well under 3 s")
        server.stop()
        #expect(server.process.termination == .exited(0))
        #expect(!FileManager.default.fileExists(atPath: announcement))
    }

    @Test func badFaultSpecIsAUsageError() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["sandbox", "serve", "--faults", "GET /x => explode"], home: s.path)
        #expect(r.status == 64)
        #expect(r.stderr.contains("--faults"))
    }

    @Test func portInUseIsReported() async throws {
        let s = try Scratch()
        let holder = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { holder.stop() }
        let port = try #require(
            holder.url.split(separator: ":").last.map { String($0).trimmingCharacters(in: .whitespacesAndNewlines) })
        let r = try await BinaryRunner.run(["sandbox", "serve", "--port", port], home: s.path)
        #expect(r.status == 69)
        #expect(r.stderr.contains("in use"))
    }

    @Test func aStaleAnnouncementIsIgnored() async throws {
        let s = try Scratch()
        // A live pid (this test process) but a port nobody listens on: what a SIGKILLed serve can leave behind.
        try s.write(
            "state/checkout-driver/local/emulator.json", "{\"url\": \"http://127.0.0.1:9\", \"pid\": \(getpid())}")
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("environment: local (embedded emulator at"))
    }

    /// Two announced emulators would leave --env local runs guessing which one chains: the second refuses.
    @Test func aSecondAnnouncedServeRefusesWhileTheFirstIsAlive() async throws {
        let s = try Scratch()
        let first = try ServeProcess(home: s.path)
        defer { first.stop() }
        let second = try await BinaryRunner.run(["sandbox", "serve"], home: s.path, timeout: 10)
        #expect(second.status == 69, "\(second.all)")
        #expect(
            second.stderr.contains("another sandbox serve is announced for --env local runs: \(first.url)"),
            "\(second.stderr)")
        #expect(second.stderr.contains("--no-announce"))
        // Unannounced, a second one is fine.
        let quiet = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { quiet.stop() }
        #expect(quiet.url != first.url)
        #expect(
            try s.read("state/checkout-driver/local/emulator.json").contains(first.url),
            "the first keeps its announcement")
    }

    @Test func jsonFormatAnnouncesWithAJSONLine() async throws {
        let s = try Scratch()
        let server = try LiveProcess(["sandbox", "serve", "--no-announce", "--format", "json"], home: s.path)
        defer { server.process.stop() }
        #expect(server.waitFor("\"event\":\"serving\""), "\(server.stdout)")
        let line = try #require(server.stdout.split(separator: "\n").first)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((doc["url"] as? String)?.hasPrefix("http://127.0.0.1:") == true)
        #expect(doc["announced"] as? Bool == false)
        #expect(doc["pid"] as? Int == Int(server.process.pid))
    }
}

/// Measured from outside: the resident memory of a `sandbox serve` fed hundreds of megabytes stays within a modest
/// budget (its request log keeps at most a few MiB, each body cut to 16 KiB).
@Suite struct SandboxServeMemoryTests {
    static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }

    @Test func memoryStaysBoundedUnderAbuse() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path, arguments: ["--no-announce"])
        defer { server.stop() }
        let pid = server.process.pid
        // Warm up (first requests allocate the emulator's lazy parts), then measure.
        _ = try curl(["-s", "-o", "/dev/null", server.url + "/_sandbox/health"])
        let before = try #require(Self.residentKiB(pid))
        try Data(repeating: 0x61, count: 1 << 20).write(to: URL(fileURLWithPath: s.path + "/big"))
        try Data(repeating: 0x62, count: 16 << 10).write(to: URL(fileURLWithPath: s.path + "/mid"))
        // 300 bodies of 1 MiB and 2,000 of 16 KiB: 348 MiB that an unbounded log would keep.
        for (file, count) in [("big", 300), ("mid", 2000)] {
            // One curl, one keep-alive connection; `next` starts each request afresh (without it the bodies join).
            let request =
                "url = \"\(server.url)/abuse\"\noutput = \"/dev/null\"\ndata-binary = \"@\(s.path)/\(file)\"\n"
            let config = Array(repeating: request, count: count).joined(separator: "next\n")
            try Data(config.utf8).write(to: URL(fileURLWithPath: s.path + "/\(file).cfg"))
            _ = try curl(["-s", "-K", s.path + "/\(file).cfg"])
        }
        let log = try #require(
            try JSONSerialization.jsonObject(with: Data(curl(["-s", server.url + "/_sandbox/requests"]).utf8))
                as? [String: Any])
        let requests = try #require(log["requests"] as? [[String: Any]])
        #expect(requests.contains { $0["bodyLength"] as? Int == 16 << 10 && $0["bodyTruncated"] as? Bool == false })
        let after = try #require(Self.residentKiB(pid))
        #expect(after - before < 48 * 1024, "resident memory grew by \((after - before) / 1024) MiB")
    }

    /// An announcement whose `sandbox serve` is gone is said, not silently replaced: by a command (which then gets an
    /// embedded emulator) and by a new `sandbox serve`.
    @Test func aStaleAnnouncementIsDetectedAndSaid() async throws {
        let s = try Scratch()
        let dir = s.path + "/state/checkout-driver/local"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // A pid that is not running (the highest one Linux hands out, plus one), on a port nobody listens on.
        try #"{"url": "http://127.0.0.1:1", "pid": 4194305}"#.write(
            toFile: dir + "/emulator.json", atomically: true, encoding: .utf8)
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            r.stderr.contains("warning: the sandbox serve announced at http://127.0.0.1:1 (pid 4194305) is gone"),
            "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/emulator.json"), "the stale announcement is removed")
        try #"{"url": "http://127.0.0.1:1", "pid": 4194305}"#.write(
            toFile: dir + "/emulator.json", atomically: true, encoding: .utf8)
        let server = try LiveProcess(["sandbox", "serve"], home: s.path)
        #expect(
            await eventually(timeout: 10) {
                server.stderr.contains("replacing the announcement of a sandbox serve that is gone")
            }, "\(server.stderr)")
        server.send(SIGTERM)
        _ = server.exitStatus(within: 5)
    }
}
