import Foundation
import Synchronization

/// The process's threads for blocking work, started through one place and used again.
///
/// A batch's run starts a libcurl transfer thread and a webhook listener's threads, and its control requests one
/// each; a thread costs a dozen system calls to start (a stack mapped, signals masked, a name set) and more to end. So
/// a thread whose work returned waits for the next work, up to `keptIdle` of them for up to `idleFor` seconds, and
/// `run` hands new work to one of those before it starts another.
public enum SpareThreads {
    /// How many finished threads wait for more work: above the most a batch's parallel runs use at once.
    public static let keptIdle = 32
    /// How long one waits before it ends.
    public static let idleFor = 10.0

    private static let idle = Mutex<[SpareThread]>([])

    /// Runs `body` on a thread of its own, named `name` (what a debugger or `perf` shows): a waiting one, else a new
    /// one.
    public static func run(named name: String, _ body: @escaping @Sendable () -> Void) {
        if let thread = idle.withLock({ $0.popLast() }) {
            thread.hand(name: name, body)
            return
        }
        let thread = SpareThread()
        thread.hand(name: name, body)
        let started = Thread { thread.loop() }
        started.name = name
        started.start()
    }

    /// How many finished threads wait for work now (for tests).
    public static var waiting: Int { idle.withLock { $0.count } }

    /// Lists `thread` as waiting (false: enough wait already, it ends).
    fileprivate static func offer(_ thread: SpareThread) -> Bool {
        idle.withLock { idle in
            guard idle.count < keptIdle else { return false }
            idle.append(thread)
            return true
        }
    }

    /// Takes `thread` off the list once it waited long enough (false: `run` took it meanwhile and its work is coming).
    fileprivate static func withdraw(_ thread: SpareThread) -> Bool {
        idle.withLock { idle in
            guard let at = idle.firstIndex(where: { $0 === thread }) else { return false }
            idle.remove(at: at)
            return true
        }
    }
}

/// One thread's next work, handed over under its condition.
private final class SpareThread: @unchecked Sendable {
    // @unchecked: `work` and `name` are only touched while holding `condition`.
    private let condition = NSCondition()
    private var work: (name: String, body: @Sendable () -> Void)?
    /// The name the thread has now (set again only when the next work's differs).
    private var named = ""

    func hand(name: String, _ body: @escaping @Sendable () -> Void) {
        condition.withLock {
            work = (name, body)
            condition.signal()
        }
    }

    func loop() {
        while let next = nextWork() {
            if next.name != named {
                if !named.isEmpty { Thread.current.name = next.name }
                named = next.name
            }
            next.body()
            guard SpareThreads.offer(self) else { return }
        }
    }

    /// The next work, waiting up to `idleFor` for it; nil when none came and the thread ends.
    private func nextWork() -> (name: String, body: @Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: SpareThreads.idleFor)
        while work == nil {
            if !condition.wait(until: deadline) && work == nil {
                // Taken meanwhile: its work is on the way, however long after the deadline it comes.
                condition.unlock()
                let withdrawn = SpareThreads.withdraw(self)
                condition.lock()
                if withdrawn { return nil }
                while work == nil { condition.wait() }
            }
        }
        defer { work = nil }
        return work
    }
}
