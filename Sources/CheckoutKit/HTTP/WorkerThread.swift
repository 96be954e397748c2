import Foundation

/// A thread of its own that runs submitted jobs one after another. Blocking work (a libcurl transfer)
/// goes here so that it can neither stall Swift's cooperative pool nor wait behind other blocking work
/// for one of Dispatch's limited threads.
final class WorkerThread: @unchecked Sendable {
    // @unchecked: `jobs` and `stopped` are only touched while holding `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.withLock {
            jobs.append(job)
            condition.signal()
        }
    }

    /// Lets the thread finish the jobs it has and exit.
    func stop() {
        condition.withLock {
            stopped = true
            condition.signal()
        }
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty && stopped {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
