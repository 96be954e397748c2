import Foundation
import Spawn
import Synchronization

/// A process a test starts: started as a shell starts one (`ChildProcess`: default signals, nothing blocked, no
/// stray descriptors), reaped by a thread of its own, and never outliving the test — `stop()` ends it with SIGTERM,
/// then SIGKILL, and letting go of it (the test returned, threw or failed) stops it too.
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

    /// How it ended, once it has: set by the reaper thread, awaited by the test.
    private final class Ending: Sendable {
        struct State {
            var termination: ChildProcess.Termination?
            var waiting: [CheckedContinuation<ChildProcess.Termination, Never>] = []
        }
        let state = Mutex(State())
        let ended = DispatchSemaphore(value: 0)

        func finish(_ termination: ChildProcess.Termination) {
            let waiting = state.withLock { s in
                s.termination = termination
                defer { s.waiting = [] }
                return s.waiting
            }
            for continuation in waiting { continuation.resume(returning: termination) }
            ended.signal()
        }
    }

    public init(_ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil, directory: String? = nil,
                standardInput: Stream = .null, standardOutput: Stream = .null, standardError: Stream = .null) throws {
        func childEnd(_ stream: Stream, reading: Bool) -> ChildProcess.Stream {
            switch stream {
            case .null: .null
            case .pipe(let pipe): .descriptor((reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting).fileDescriptor)
            case .file(let handle): .descriptor(handle.fileDescriptor)
            }
        }
        // Scripts/test's mark goes to every process a test starts, explicit environments included, so that
        // Scripts/leftover-processes finds whatever outlives the run.
        var environment = environment
        if let mark = ProcessInfo.processInfo.environment[Self.runMark] { environment?[Self.runMark] = mark }
        child = try ChildProcess.start(executable, arguments, environment: environment, directory: directory,
                                       standardInput: childEnd(standardInput, reading: true),
                                       standardOutput: childEnd(standardOutput, reading: false),
                                       standardError: childEnd(standardError, reading: false))
        var closed = Set<Int32>()
        for (stream, reading) in [(standardInput, true), (standardOutput, false), (standardError, false)] {
            guard case .pipe(let pipe) = stream else { continue }
            let handle = reading ? pipe.fileHandleForReading : pipe.fileHandleForWriting
            if closed.insert(handle.fileDescriptor).inserted { try? handle.close() }
        }
        let (child, ending) = (child, Ending())
        self.ending = ending
        // The thread holds the child and its ending, not this object, so letting go of the object still stops it.
        Thread { ending.finish(child.wait()) }.start()
    }

    deinit { stop() }

    public var pid: pid_t { child.pid }
    public var isRunning: Bool { termination == nil }
    /// How it ended; nil while it runs.
    public var termination: ChildProcess.Termination? { ending.state.withLock { $0.termination } }
    /// Its status as a shell reports it (128 + the signal when one ended it), once it has ended; -1 before.
    public var status: Int32 { termination?.shellStatus ?? -1 }

    public func signal(_ sig: Int32) { if isRunning { child.signal(sig) } }

    /// Blocks until it ends.
    @discardableResult
    public func waitUntilExit() -> ChildProcess.Termination {
        ending.ended.wait()
        ending.ended.signal()  // for the next waiter
        return termination!
    }

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
        guard ending.ended.wait(timeout: .now() + seconds) == .success else { return false }
        ending.ended.signal()  // for the next waiter
        return true
    }

    /// Ends it for good and reaps it: SIGTERM, then SIGKILL if it has not ended after `grace` seconds.
    @discardableResult
    public func stop(grace: Double = 5) -> ChildProcess.Termination {
        signal(SIGTERM)
        if !exits(within: grace) { child.signal(SIGKILL) }
        return waitUntilExit()
    }
}
