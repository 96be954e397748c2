import CEpoll
import Foundation
import Glibc
import Synchronization
import Testing

@testable import LoopbackHTTP

@Suite struct WorkerPoolTests {
    /// Sockets ready together come back from one wait: the worker serves one and the others wait in the backlog for
    /// the first free worker. Here every socket is served once, whichever worker took it.
    @Test func socketsReadyTogetherAreEachServedOnce() throws {
        let served = Mutex<[UInt64]>([])
        let pool = try WorkerPool(
            minimum: 2, maximum: 8, serve: { token, _ in served.withLock { $0.append(token) } },
            sweep: {})
        defer { pool.close() }
        let ready = (0..<5).map { _ in cepoll_eventfd() }
        defer { for fd in ready { close(fd) } }
        for (index, fd) in ready.enumerated() {
            var one: UInt64 = 1
            #expect(write(fd, &one, 8) == 8)
            #expect(cepoll_control(pool.epoll, cepoll_add, fd, cepoll_in | cepoll_one_shot, UInt64(100 + index)) == 0)
        }
        pool.start()
        defer { pool.stop() }
        let deadline = monotonicSeconds() + 3
        while served.withLock({ $0.count }) < 5 && monotonicSeconds() < deadline { usleep(2_000) }
        usleep(50_000)  // one-shot: nothing is served twice, however long we wait
        #expect(served.withLock { $0.sorted() } == [100, 101, 102, 103, 104])
    }

    /// A socket in the backlog while every free worker sleeps on the set (the worker that took it is blocked in a
    /// handler) must not wait for that handler, nor for a sleeping worker's wait to time out (a second): the monitor
    /// sees the backlog stand still and starts a worker that serves it.
    @Test func aBackloggedSocketIsServedWhileTheWorkersSleep() throws {
        let served = Mutex<Double?>(nil)
        let pool = try WorkerPool(
            minimum: 2, maximum: 8, serve: { _, _ in served.withLock { $0 = monotonicSeconds() } },
            sweep: {})
        defer { pool.close() }
        pool.start()
        defer { pool.stop() }
        let asleep = monotonicSeconds() + 3
        while pool.waitingCount < 2 && monotonicSeconds() < asleep { usleep(1_000) }
        #expect(pool.waitingCount == 2)
        let queued = monotonicSeconds()
        pool.backlog.withLock { $0.append(100) }
        while served.withLock({ $0 }) == nil && monotonicSeconds() < queued + 3 { usleep(2_000) }
        let after = served.withLock { $0 }.map { $0 - queued }
        #expect(after.map { $0 < 0.5 } == true, "served \(after.map { "\($0) s" } ?? "never") after it was queued")
        #expect(pool.workerCount > 2)
    }
}
