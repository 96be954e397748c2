import Foundation
import Spawn
import Synchronization

/// A process a test starts: started as a shell starts one (`ChildProcess`: default signals, nothing blocked, no
/// stray descriptors), reaped by a thread of its own, and never outliving the test — `stop()` ends it and what it
/// started with SIGTERM, then SIGKILL, and letting go of it (the test returned, threw or failed) stops it too.
public final class TestProcess: Sendable {
    /// Where one of its standard streams goes. A pipe's other end stays with the test; the child's end is closed here
    /// once the child holds it, so the test's read sees the end of the stream when the child exits.
    public enum Stream {
        case null
        case pipe(Pipe)
        case file(FileHandle)
    }

    public let child: ChildProcess
    /// The variable Scripts/test marks its run with (see Scripts/leftover-processes).
    public static let runMark = "CHECKOUT_DRIVER_TEST_RUN"
    private let ending: Ending
    /// The pipes and files it was given, kept for its life as Foundation's `Process` keeps them: a read end closed
    /// when the test's last mention of it passed would hand the child EPIPE on its next line.
    private nonisolated(unsafe) let streams: [Any]

    /// How it ended, once it has: set by the reaper thread, awaited by the test.
    private final class Ending: Sendable {
        struct State {
            /// It has ended and is about to be reaped: its pid may be another process's from now on, so no signal.
            var ended = false
            var termination: ChildProcess.Termination?
            var waiting: [CheckedContinuation<ChildProcess.Termination, Never>] = []
        }
        let state = Mutex(State())
        let condition = NSCondition()

        func finish(_ termination: ChildProcess.Termination) {
            condition.lock()
            let waiting = state.withLock { s in
                s.termination = termination
                defer { s.waiting = [] }
                return s.waiting
            }
            condition.broadcast()
            condition.unlock()
            for continuation in waiting { continuation.resume(returning: termination) }
        }

        /// Waits up to `deadline` for the end (for ever without one); how it ended, or nil if it had not by then.
        func wait(until deadline: Date? = nil) -> ChildProcess.Termination? {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let termination = state.withLock({ $0.termination }) { return termination }
                if let deadline {
                    if !condition.wait(until: deadline) { return state.withLock { $0.termination } }
                } else {
                    condition.wait()
                }
            }
        }
    }

    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil,
        standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .null
    ) throws {
        func childEnd(_ stream: Stream, reading: Bool) -> ChildProcess.Stream {
            switch stream {
            case .null: .null
            case .pipe(let pipe):
                .descriptor((reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor)
            case .file(let handle): .descriptor(handle.fileDescriptor)
            }
        }
        // Scripts/test's mark goes to every process a test starts, explicit environments included, so that
        // Scripts/leftover-processes finds whatever outlives the run.
        var environment = environment
        if let mark = ProcessInfo.processInfo.environment[Self.runMark] { environment?[Self.runMark] = mark }
        child = try ChildProcess.start(
            executable, arguments, environment: environment, directory: directory,
            standardInput: childEnd(standardInput, reading: true),
            standardOutput: childEnd(standardOutput, reading: false),
            standardError: childEnd(standardError, reading: false))
        var closed = Set<Int32>()
        var kept: [Any] = []
        for (stream, reading) in [(standardInput, true), (standardOutput, false), (standardError, false)] {
            switch stream {
            case .null: continue
            case .file(let handle): kept.append(handle)
            case .pipe(let pipe):
                kept.append(pipe)
                let handle = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
                if closed.insert(handle.fileDescriptor).inserted { try? handle.close() }
            }
        }
        streams = kept
        let (child, ending) = (child, Ending())
        self.ending = ending
        // The thread holds the child and its ending, not this object, so letting go of the object still stops it.
        Thread {
            child.waitForEnd()
            ending.state.withLock { $0.ended = true }
            guard let termination = child.wait() else {
                preconditionFailure("pid \(child.pid) was reaped by someone else")
            }
            ending.finish(termination)
        }.start()
    }

    deinit { stop() }

    public var pid: pid_t { child.pid }
    public var isRunning: Bool { termination == nil }
    /// How it ended; nil while it runs.
    public var termination: ChildProcess.Termination? { ending.state.withLock { $0.termination } }

    /// Its exit status once it has ended (nil before) — or minus the signal that ended it, so that a process killed
    /// by SIGINT never passes for one that exited with 130.
    public var status: Int32? {
        termination.map {
            switch $0 {
            case .exited(let status): status
            case .signaled(let sig): -sig
            }
        }
    }

    /// Sends `sig` while it has not ended: never to a pid it may no longer own.
    public func signal(_ sig: Int32) {
        ending.state.withLock { if !$0.ended { child.signal(sig) } }
    }

    /// Blocks until it ends.
    @discardableResult
    public func waitUntilExit() -> ChildProcess.Termination { ending.wait()! }

    /// Waits for its end without holding a thread.
    @discardableResult
    public func exited() async -> ChildProcess.Termination {
        await withCheckedContinuation { continuation in
            let ended = ending.state.withLock { s -> ChildProcess.Termination? in
                if s.termination == nil { s.waiting.append(continuation) }
                return s.termination
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Whether it ends within `seconds`: a process that hangs is a failed expectation, not a test that never returns.
    public func exits(within seconds: Double) -> Bool {
        ending.wait(until: Date().addingTimeInterval(seconds)) != nil
    }

    /// Ends it for good and reaps it: SIGTERM, then SIGKILL if it has not ended after `grace` seconds. What it
    /// started (a shell's pipeline, a browser script's curl) is killed too, even where it outlived its parent.
    @discardableResult
    public func stop(grace: Double = 5) -> ChildProcess.Termination {
        // Looked up before it ends: an orphan is no longer anyone's descendant.
        let started = isRunning ? Self.descendants(of: pid) : []
        signal(SIGTERM)
        if !exits(within: grace) { signal(SIGKILL) }
        let termination = waitUntilExit()
        // Only a process that is still the one found (same start time): its pid may have been given out again.
        for process in started where Self.startTime(of: process.pid) == process.start { kill(process.pid, SIGKILL) }
        return termination
    }

    /// Every process below `pid` (as Linux lists each thread's children), with its start time.
    static func descendants(of pid: pid_t) -> [(pid: pid_t, start: String)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return children.compactMap { child in startTime(of: child).map { (child, $0) } }
            + children.flatMap { descendants(of: $0) }
    }

    /// Field 22 of /proc/PID/stat, counted after the command name (which may hold spaces and parentheses).
    static func startTime(of pid: pid_t) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil
    }
}
