import CEpoll
import Foundation
import Glibc
import Synchronization
import Threads

/// The server's threads: a few workers that each wait on one `epoll` set for the next ready sockets (readable
/// connections or the listener), serve them, and wait again — so an idle keep-alive connection costs no thread, and a
/// request is read, handled and answered by a thread that saw it ready, with no hand-off to a thread that sleeps.
///
/// One wait returns up to `batch` ready sockets: under load that is one sleep and one wake-up for several requests,
/// not one each (a tenth of the server's time went to those). The worker serves the first and puts the others in the
/// pool's `backlog`, which every worker empties before it waits on the set again — so a socket taken with others is
/// served by whichever worker is free first, never held behind a handler that blocks.
///
/// A handler may block (an injected latency sleeps, a slow client's send waits), and a blocked worker cannot wait on
/// the set. So a monitor checks every `tick`: when nothing finished since the last tick while no worker is waiting and
/// a request taken before that tick is still being served, or while sockets wait in the backlog (the free workers sleep
/// on the set and do not see it), it starts one more worker (up to `maximum`), which serves what is still ready. The
/// pool therefore stays at its minimum under a steady CPU-bound load and grows only with the number of handlers blocked
/// at once; a worker beyond the minimum that finds nothing to do for `retireAfter` ends. Connections are registered
/// edge-triggered and one worker at a time holds each (`ConnectionSlots`); the listener is one-shot. The same
/// monitor calls `sweep` about four times a second, to wake connections whose deadline passed (see `HTTPServer.sweep`).
/// Described in docs/architecture.md ("The emulator's server").
final class WorkerPool: @unchecked Sendable {
    // @unchecked: the descriptors are set once in init; the counters are atomics; `monitorThread`'s state lives under
    // `monitorWake`.
    let epoll: Int32
    /// Written once at stop: level-triggered and never read, so every waiting worker sees it.
    private let stopEvent: Int32
    private let minimum: Int
    private let maximum: Int
    /// Bytes a worker reads from a socket at once (`WorkerPool.readSize` but in tests).
    let readSize: Int
    private let serve: @Sendable (_ token: UInt64, _ scratch: UnsafeMutableRawBufferPointer) -> Void
    private let sweep: @Sendable () -> Void

    private let waiting = Atomic<Int>(0)
    private let running = Atomic<Int>(0)
    private let started = Atomic<Int>(0)
    private let finished = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    /// Ready sockets one worker's wait returned beyond the one it serves; served before anyone waits again.
    let backlog = Mutex<[UInt64]>([])
    private let threads = DispatchGroup()
    private let monitorWake = NSCondition()

    static let stopToken: UInt64 = 1
    static let tick = 0.02
    static let sweepEvery = 12  // ticks: about a quarter of a second
    static let retireAfter = 10.0
    /// Bytes read from a socket at once.
    static let readSize = 64 * 1024
    /// Ready sockets taken from the set by one wait.
    static let batch = 16

    init(
        minimum: Int, maximum: Int, readSize: Int = WorkerPool.readSize,
        serve: @escaping @Sendable (UInt64, UnsafeMutableRawBufferPointer) -> Void,
        sweep: @escaping @Sendable () -> Void
    ) throws(HTTPServerError) {
        let epoll = cepoll_create()
        guard epoll >= 0 else {
            throw HTTPServerError("cannot create an epoll set: \(String(cString: strerror(errno)))")
        }
        let stopEvent = cepoll_eventfd()
        guard stopEvent >= 0, cepoll_control(epoll, cepoll_add, stopEvent, cepoll_in, Self.stopToken) == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(epoll)
            if stopEvent >= 0 { Glibc.close(stopEvent) }
            throw HTTPServerError("cannot set up the server's wake-up event: \(message)")
        }
        self.epoll = epoll
        self.stopEvent = stopEvent
        self.minimum = max(1, minimum)
        self.maximum = max(self.minimum, maximum)
        self.readSize = readSize
        self.serve = serve
        self.sweep = sweep
    }

    /// Starts the minimum number of workers and the monitor.
    func start() {
        for _ in 0..<minimum { startWorker() }
        startThread(named: "http-monitor") { $0.monitorLoop() }
    }

    /// Tells every thread to end once it finished what it is serving, and waits for all of them.
    func stop() {
        stopping.store(true, ordering: .releasing)
        var one: UInt64 = 1
        _ = write(stopEvent, &one, 8)
        monitorWake.withLock { monitorWake.signal() }
        threads.wait()
    }

    /// Closes the epoll set and the stop event; only after `stop()` (or when `start()` never ran).
    func close() {
        Glibc.close(epoll)
        Glibc.close(stopEvent)
    }

    /// How many workers exist now (for tests: idle connections must not add threads).
    var workerCount: Int { running.load(ordering: .acquiring) }
    /// How many workers wait on the set now (for tests).
    var waitingCount: Int { waiting.load(ordering: .acquiring) }

    private func startWorker() {
        running.add(1, ordering: .acquiringAndReleasing)
        startThread(named: "http-worker") { $0.workerLoop() }
    }

    /// A thread that `stop()` waits for.
    private func startThread(named name: String, _ body: @escaping @Sendable (WorkerPool) -> Void) {
        threads.enter()
        SpareThreads.run(named: name) { [self] in
            body(self)
            threads.leave()
        }
    }

    private func workerLoop() {
        // Each worker reads into a buffer of its own; a connection keeps only the bytes it received.
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: readSize, alignment: 16)
        defer { scratch.deallocate() }
        var tokens = [UInt64](repeating: 0, count: Self.batch)
        var lastServed = monotonicSeconds()
        while !stopping.load(ordering: .acquiring) {
            let token: UInt64
            if let queued = backlog.withLock({ $0.popLast() }) {
                token = queued
            } else {
                waiting.add(1, ordering: .acquiringAndReleasing)
                let n = tokens.withUnsafeMutableBufferPointer {
                    Int(cepoll_wait_tokens(epoll, 1000, $0.baseAddress, Int32($0.count)))
                }
                waiting.subtract(1, ordering: .acquiringAndReleasing)
                if n < 0 && errno != EINTR { break }
                if n <= 0 {
                    if monotonicSeconds() - lastServed >= Self.retireAfter && retire() { return }
                    continue
                }
                if n > 1 { backlog.withLock { $0.append(contentsOf: tokens[1..<n]) } }
                token = tokens[0]
            }
            // The stop event is level-triggered: every worker sees it, whatever else its wait returned.
            if token == Self.stopToken { break }
            started.add(1, ordering: .relaxed)
            serve(token, scratch)
            finished.add(1, ordering: .relaxed)
            lastServed = monotonicSeconds()
        }
        running.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// A worker beyond the minimum ends (true) when it had nothing to do for a while.
    private func retire() -> Bool {
        var count = running.load(ordering: .acquiring)
        while count > minimum {
            let (exchanged, actual) = running.compareExchange(
                expected: count, desired: count - 1, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            count = actual
        }
        return false
    }

    private func monitorLoop() {
        var lastFinished = finished.load(ordering: .relaxed)
        var lastStarted = started.load(ordering: .relaxed)
        var ticks = 0
        while !stopping.load(ordering: .acquiring) {
            monitorWake.withLock { _ = monitorWake.wait(until: Date(timeIntervalSinceNow: Self.tick)) }
            if stopping.load(ordering: .acquiring) { return }
            let done = finished.load(ordering: .relaxed)
            // Nothing finished for a whole tick while nobody waits and a request taken before the last tick is still
            // being served (a worker blocked in a handler or a send — not one that has just taken a request after
            // idling), or while ready sockets wait in the backlog (the free workers sleep on the set).
            let blocked = waiting.load(ordering: .acquiring) == 0 && done < lastStarted
            let stalled = blocked || !backlog.withLock { $0.isEmpty }
            if stalled && done == lastFinished && running.load(ordering: .acquiring) < maximum {
                startWorker()
            }
            lastFinished = done
            lastStarted = started.load(ordering: .relaxed)
            ticks += 1
            if ticks % Self.sweepEvery == 0 { sweep() }
        }
    }
}

/// Monotonic seconds, for deadlines that do not jump with the wall clock.
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
