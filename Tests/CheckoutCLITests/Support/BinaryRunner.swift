import Foundation
import TestSupport
import Testing

/// Runs the built `checkout-driver` binary the way a user would, capturing what it prints.
struct BinaryRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
        /// The exact stdout bytes, for checks where a single byte matters.
        var stdoutData: Data
        var all: String { stdout + stderr }
    }

    /// `CHECKOUT_DRIVER_BINARY`, else the debug build next to this package.
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["CHECKOUT_DRIVER_BINARY"], !path.isEmpty { return path }
        // This file is <root>/Tests/CheckoutCLITests/Support/BinaryRunner.swift.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/checkout-driver").path
    }

    /// A clean environment: HOME and XDG folders point into `home`, so no test reads the developer's
    /// configuration or writes into their state.
    static func environment(home: String, extra: [String: String] = [:]) -> [String: String] {
        var env: [String: String] = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": home,
            "XDG_CONFIG_HOME": home + "/config",
            "XDG_STATE_HOME": home + "/state",
            "NO_COLOR": "1",
        ]
        for (k, v) in extra { env[k] = v }
        return env
    }

    /// Runs the binary with `home` as its home and working directory (a fresh temporary one when nil),
    /// awaiting its exit without holding a thread: tests run in parallel on a small cooperative pool, and a
    /// test blocked in `waitUntilExit` would stall the timing-sensitive ones beside it.
    /// A run that has not ended after `timeout` seconds is killed (its status is then -9), so a hang fails
    /// the test that caused it instead of stalling the suite.
    /// `under`, when given, is a command that runs the binary (`["/usr/bin/strace", "-o", FILE]`): the binary and its
    /// arguments follow it.
    static func run(
        _ arguments: [String], home: String? = nil, environment extra: [String: String] = [:],
        directory: String? = nil, timeout: Double = 60, under wrapper: [String] = []
    ) async throws -> Result {
        let process = try start(arguments, home: home, environment: extra, directory: directory, under: wrapper)
        let watchdog = Task.detached { [child = process.process] in
            try await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
            child.signal(SIGKILL)
        }
        defer { watchdog.cancel() }
        await process.process.exited()
        let result = try process.result()
        expectEveryErrorHasAHint(result.stderr, arguments)
        return result
    }

    /// The driver's rule for every error, checked on every run of every test: one `error:` line naming the problem,
    /// then a `hint:` line naming the fix.
    static func expectEveryErrorHasAHint(
        _ stderr: String, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let lines = stderr.split(separator: "\n", omittingEmptySubsequences: false)
        for (i, line) in lines.enumerated() where line.hasPrefix("error: ") {
            #expect(
                i + 1 < lines.count && lines[i + 1].hasPrefix("hint: "),
                "\(arguments): an error without a hint: \(line)",
                sourceLocation: sourceLocation)
        }
    }

    /// The binary with a standard output whose reader is already gone (`… | head -1` once head has ended), so that its
    /// first write meets EPIPE — every time, where a real `head` races the writer. Its exit status (as an exit, not a
    /// signal) and what it printed on stderr.
    static func runWithItsReaderGone(_ arguments: [String], home: String) throws -> (status: Int32, stderr: String) {
        let out = Pipe()
        let err = Pipe()
        try out.fileHandleForReading.close()  // nobody will ever read
        let process = try TestProcess(
            binary, arguments, environment: environment(home: home), standardOutput: .pipe(out),
            standardError: .pipe(err))
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let termination = process.waitUntilExit()
        guard case .exited(let status) = termination else {
            Issue.record("\(arguments) \(termination)")
            return (termination.shellStatus, text)
        }
        return (status, text)
    }

    /// The same, blocking the calling thread: for tests that drive several processes from their own threads.
    static func runBlocking(
        _ arguments: [String], home: String? = nil, environment extra: [String: String] = [:],
        directory: String? = nil, timeout: Double = 60
    ) throws -> Result {
        let process = try start(arguments, home: home, environment: extra, directory: directory)
        // As `run`'s watchdog: a hang fails the test that caused it instead of stalling the suite.
        if !process.process.exits(within: timeout) { process.process.signal(SIGKILL) }
        process.process.waitUntilExit()
        return try process.result()
    }

    /// A started process whose output goes to files rather than pipes: nothing can fill up and deadlock, and no
    /// reader thread is needed.
    struct Started {
        let process: TestProcess
        let scratch: Scratch

        /// What it printed, once it has ended; its status is minus the signal if one ended it (a watchdog's SIGKILL).
        func result() throws -> Result {
            let stdoutData = try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/.stdout"))
            let stderrData = try Data(contentsOf: URL(fileURLWithPath: scratch.path + "/.stderr"))
            return Result(
                status: process.status!, stdout: String(decoding: stdoutData, as: UTF8.self),
                stderr: String(decoding: stderrData, as: UTF8.self), stdoutData: stdoutData)
        }
    }

    private static func start(
        _ arguments: [String], home: String?, environment extra: [String: String],
        directory: String?, under wrapper: [String] = []
    ) throws -> Started {
        let scratch = try Scratch()
        let home = home ?? scratch.path
        let outURL = URL(fileURLWithPath: scratch.path + "/.stdout")
        let errURL = URL(fileURLWithPath: scratch.path + "/.stderr")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }  // the child has its own copies
        let process = try TestProcess(
            wrapper.first ?? binary, wrapper.isEmpty ? arguments : Array(wrapper.dropFirst()) + [binary] + arguments,
            environment: environment(home: home, extra: extra), directory: directory ?? home,
            standardOutput: .file(out), standardError: .file(err))
        return Started(process: process, scratch: scratch)
    }
}
