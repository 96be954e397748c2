import Foundation
import Threads

/// A thread of its own that runs submitted jobs one after another. Blocking work (a libcurl transfer)
/// goes here so that it can neither stall Swift's cooperative pool nor wait behind other blocking work
/// for one of Dispatch's limited threads.
///
/// It is also a task executor: a flow runner that prefers it runs its steps on this very thread, so each
/// transfer starts without a hop between threads (two wake-ups per request otherwise); and a batch's workers each run
/// on one, so that a run's blocking waits (its state file's group commit) hold no thread of the cooperative pool.
public final class WorkerThread: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs`, `stopped` and `threadID` are only touched while holding `condition`
    // (`threadID` is written once, before any job runs).
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false
    private var threadID: pthread_t?

    public init(name: String) {
        SpareThreads.run(named: name) { [self] in run() }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        let taken = condition.withLock { () -> Bool in
            guard !stopped else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
        // A stopped thread has ended, or ends once its jobs are done, and would never run this one: it runs on a thread
        // of its own rather than be dropped (whoever waits for it would wait for ever).
        if !taken { SpareThreads.run(named: "checkout-driver.late") { job() } }
    }

    /// Whether `stop()` was called.
    var isStopped: Bool { condition.withLock { stopped } }

    /// Whether a thread runs this worker now (false before it starts and once it ended).
    var hasThread: Bool { condition.withLock { threadID != nil } }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        submit { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    /// Whether the caller is running on this worker (then blocking work can run inline).
    var isCurrent: Bool {
        guard let id = condition.withLock({ threadID }) else { return false }
        return pthread_equal(id, pthread_self()) != 0
    }

    /// Lets the thread finish the jobs it has, then go back to `SpareThreads` for the next transport.
    public func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func run() {
        condition.withLock { threadID = pthread_self() }
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped {
                // The thread goes back to SpareThreads and may run other work: it is this worker no more.
                threadID = nil
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
