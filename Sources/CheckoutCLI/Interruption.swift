import CheckoutKit
import Dispatch
import Foundation
import Glibc
import Synchronization

/// SIGINT and SIGTERM while a flow runs. The first cancels the flow's task — the current step stops, `finally` steps
/// still run, every report is written — and the run ends with 130 or 143; a second exits at once, as people expect
/// of a second Ctrl-C.
final class Interruption: Sendable {
    private struct State {
        var caught: Int32?
        /// The runs it stops: one, or a batch's runs in flight.
        var tasks: [UUID: Task<FlowResult, Never>] = [:]
        var sources: [any DispatchSourceSignal] = []
    }
    private let state = Mutex(State())
    private let onFirst: @Sendable (Int32) -> Void

    /// Starts watching; `onFirst` runs once, for the first signal (to say what happens now).
    init(onFirst: @escaping @Sendable (Int32) -> Void) {
        self.onFirst = onFirst
        for sig in [SIGINT, SIGTERM] {
            // The default disposition would end the process before the dispatch source saw the signal.
            Glibc.signal(sig, SIG_IGN)
            state.withLock { s in
                let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
                source.setEventHandler { [weak self] in self?.handle(sig) }
                source.resume()
                s.sources.append(source)
            }
        }
    }

    /// The signal that interrupted the run, if one did.
    var caught: Int32? { state.withLock { $0.caught } }

    /// Runs `body` as a task the first signal cancels (at once, if a signal already came); several may run at once.
    /// The task runs on `executor` when given (the thread the caller's run works on), not on the cooperative pool, from
    /// where its steps would hop back to that thread.
    func run(
        on executor: (any TaskExecutor)? = nil, _ body: @escaping @Sendable () async -> FlowResult
    ) async -> FlowResult {
        let task = Task(executorPreference: executor) { await body() }
        let id = UUID.random()
        let early = state.withLock { s -> Bool in
            s.tasks[id] = task
            return s.caught != nil
        }
        if early { task.cancel() }
        let result = await task.value
        state.withLock { _ = $0.tasks.removeValue(forKey: id) }
        return result
    }

    /// Stops watching and gives the signals back their default meaning.
    func stop() {
        state.withLock { s in
            for source in s.sources { source.cancel() }
            s.sources = []
            s.tasks = [:]
        }
        for sig in [SIGINT, SIGTERM] { Glibc.signal(sig, SIG_DFL) }
    }

    private func handle(_ sig: Int32) {
        let (first, tasks) = state.withLock { s -> (Bool, [Task<FlowResult, Never>]) in
            defer { if s.caught == nil { s.caught = sig } }
            return (s.caught == nil, Array(s.tasks.values))
        }
        guard first else {
            FileIO.removeTemporaryFiles()
            _exit(128 + sig)
        }
        onFirst(sig)
        for task in tasks { task.cancel() }
    }

    /// 130 for SIGINT, 143 for SIGTERM.
    static func exitCode(for sig: Int32) -> ExitCode { sig == SIGTERM ? .terminated : .interrupted }

    static func name(_ sig: Int32) -> String { sig == SIGTERM ? "SIGTERM" : "SIGINT" }
}
