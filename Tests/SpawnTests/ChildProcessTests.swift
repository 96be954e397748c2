import Foundation
import Glibc
import Spawn
import TestSupport
import Testing

/// A child starts as a shell starts a program, whatever its parent has set; it ends in a way the parent can tell; and
/// one a test starts does not outlive the test.
@Suite struct ChildProcessTests {
    /// What `/bin/cat FILE` printed, started with `ChildProcess`.
    static func cat(_ file: String, environment: [String: String]? = nil) throws -> String {
        let out = Pipe()
        let child = try ChildProcess.start(
            "/bin/cat", [file], environment: environment,
            standardOutput: .descriptor(out.fileHandleForWriting.fileDescriptor))
        try out.fileHandleForWriting.close()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(child.wait() == .exited(0))
        return text
    }

    /// A parent that ignores SIGTERM and SIGPIPE (as the driver does, to catch one and see EPIPE for the other) and
    /// blocks SIGTERM and SIGUSR1 on the calling thread (as dispatch's signal sources leave threads) starts a child
    /// that ignores and blocks nothing: SIGTERM stops it.
    @Test func aChildStartsWithNoSignalIgnoredOrBlocked() throws {
        let previousTerm = signal(SIGTERM, SIG_IGN)
        let previousPipe = signal(SIGPIPE, SIG_IGN)
        var blocked = sigset_t()
        var previousMask = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        sigaddset(&blocked, SIGUSR1)
        pthread_sigmask(SIG_BLOCK, &blocked, &previousMask)
        defer {
            pthread_sigmask(SIG_SETMASK, &previousMask, nil)
            signal(SIGTERM, previousTerm)
            signal(SIGPIPE, previousPipe)
        }
        let status = try Self.cat("/proc/self/status")
        let lines = status.split(separator: "\n").filter { $0.hasPrefix("SigBlk:") || $0.hasPrefix("SigIgn:") }
        #expect(lines == ["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000"], "\(status)")

        let sleeper = try ChildProcess.start("/bin/sleep", ["30"])
        sleeper.signal(SIGTERM)
        #expect(sleeper.wait() == .signaled(SIGTERM))
    }

    /// A descriptor the parent opened without close-on-exec (a lock file, a listening socket) is not the child's.
    @Test func onlyTheStandardStreamsReachTheChild() throws {
        let s = try Scratch()
        let fd = open(s.path + "/held", O_CREAT | O_RDWR, 0o600)  // no O_CLOEXEC
        try #require(fd > 2)
        defer { close(fd) }
        let out = Pipe()
        let child = try ChildProcess.start(
            "/bin/sh", ["-c", "test -e /proc/$$/fd/\(fd) && echo open || echo closed"],
            standardOutput: .descriptor(out.fileHandleForWriting.fileDescriptor))
        try out.fileHandleForWriting.close()
        #expect(String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "closed\n")
        #expect(child.wait() == .exited(0))
    }

    @Test func itRunsWhereItIsToldWithTheEnvironmentItIsGiven() throws {
        let s = try Scratch()
        let (status, output) = try runTool(
            "/bin/sh", ["-c", "pwd; echo \"$GREETING\"; cat"], directory: s.path,
            environment: ["GREETING": "hej", "PATH": "/usr/bin:/bin"])
        #expect(status == 0)
        // Its standard input is /dev/null here: cat ends at once.
        #expect(output == URL(fileURLWithPath: s.path).resolvingSymlinksInPath().path + "\nhej\n")
        #expect(try Self.cat("/proc/self/environ", environment: ["ONLY": "this"]) == "ONLY=this\0")
    }

    @Test func howItEndedIsTold() throws {
        let exited = try ChildProcess.start("/bin/sh", ["-c", "exit 3"])
        #expect(exited.wait() == .exited(3))
        let killed = try ChildProcess.start("/bin/sh", ["-c", "kill -TERM $$"])
        let termination = try #require(killed.wait())
        #expect(termination == .signaled(SIGTERM) && termination.shellStatus == 143, "\(termination)")
        #expect(termination.description == "killed by signal 15")
        let running = try ChildProcess.start("/bin/sleep", ["30"])
        running.signal(SIGKILL)
        running.waitForEnd()
        #expect(kill(running.pid, 0) == 0, "ended, not yet reaped: the pid is still its own")
        #expect(running.wait() == .signaled(SIGKILL))
        #expect(running.wait() == nil, "nothing left to reap")
    }

    @Test func aProgramThatCannotStartIsAnErrorWithItsReason() {
        #expect { try ChildProcess.start("/nonexistent/browser", ["x"]) } throws: { error in
            (error as? ChildProcess.Failure)?.description
                == "cannot start /nonexistent/browser: No such file or directory"
        }
    }

    /// `stop()` ends even a process that ignores SIGTERM, with SIGKILL after the grace period.
    @Test func stopEndsAProcessThatIgnoresSIGTERM() throws {
        let out = Pipe()
        let stubborn = try TestProcess(
            "/bin/sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], standardOutput: .pipe(out))
        #expect(out.fileHandleForReading.readLine(containing: "ready") != nil)
        #expect(stubborn.stop(grace: 0.5) == .signaled(SIGKILL))
        #expect(!stubborn.isRunning)
    }

    /// A shell's background job outlives the shell; stopping the shell ends it too.
    @Test func stopEndsWhatTheProcessStarted() throws {
        let out = Pipe()
        let shell = try TestProcess("/bin/sh", ["-c", "sleep 60 & echo \"job $!\"; wait"], standardOutput: .pipe(out))
        let line = try #require(out.fileHandleForReading.readLine(containing: "job "))
        let job = try #require(pid_t(line.dropFirst(4)))
        #expect(shell.stop() == .signaled(SIGTERM))
        // Killed: gone, or a zombie until whoever adopted it reaps it.
        #expect(
            eventually {
                (try? String(contentsOfFile: "/proc/\(job)/stat", encoding: .utf8)).map { $0.contains(") Z ") } ?? true
            })
    }

    /// A signal's end is never mistaken for an exit code: SIGINT is -2, not 130.
    @Test func aSignalsEndIsNotAnExitStatus() throws {
        let interrupted = try TestProcess("/bin/sh", ["-c", "kill -INT $$"])
        interrupted.waitUntilExit()
        #expect(interrupted.status == -SIGINT)
        let exited = try TestProcess("/bin/sh", ["-c", "exit 130"])
        #expect(exited.exits(within: 10) && exited.status == 130)
    }

    /// The test that started a process let go of it — returned, threw, failed — and the process is gone.
    @Test func aProcessATestLetsGoOfIsStopped() throws {
        var pid: pid_t = 0
        do {
            let sleeper = try TestProcess("/bin/sleep", ["60"])
            pid = sleeper.pid
            withExtendedLifetime(sleeper) { #expect(kill(pid, 0) == 0, "running") }
        }
        #expect(kill(pid, 0) == -1 && errno == ESRCH, "stopped and reaped when the test let go of it")
    }

    /// Scripts/test's last word: a process that carries the run's mark after the tests is named, killed, and fails the
    /// run; with nothing left it passes.
    @Test func theRunsCheckNamesKillsAndFailsOnAProcessLeftBehind() throws {
        // This file is <root>/Tests/SpawnTests/ChildProcessTests.swift.
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/leftover-processes").path
        let mark = [TestProcess.runMark: "check-\(UUID().uuidString)", "PATH": "/usr/bin:/bin"]
        func check() throws -> (ChildProcess.Termination?, String) {
            let err = Pipe()
            let checker = try ChildProcess.start(
                "/usr/bin/python3", [script], environment: mark,
                standardError: .descriptor(err.fileHandleForWriting.fileDescriptor))
            try err.fileHandleForWriting.close()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (checker.wait(), text)
        }
        let left = try ChildProcess.start("/bin/sleep", ["60"], environment: mark)
        let (found, report) = try check()
        #expect(found == .exited(1), "\(report)")
        #expect(
            report.contains("error: the tests left 1 process running:\n  \(left.pid)  /bin/sleep 60\n"), "\(report)")
        #expect(left.wait() == .signaled(SIGKILL), "killed by the check")
        let (clean, quiet) = try check()
        #expect(clean == .exited(0) && quiet.isEmpty, "\(quiet)")
    }
}
