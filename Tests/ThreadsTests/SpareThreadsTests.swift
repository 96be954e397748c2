import Foundation
import Glibc
import Synchronization
import Testing
import Threads

/// A number for the calling thread, the same each time on one thread and new on every other: kept in the thread's own
/// storage, which a new thread starts without (thread ids and stack addresses may be handed to a new thread again).
private func threadSerial() -> Int {
    if let mark = pthread_getspecific(serialKey) { return Int(bitPattern: mark) }
    let serial = serials.add(1, ordering: .relaxed).newValue
    pthread_setspecific(serialKey, UnsafeRawPointer(bitPattern: serial))
    return serial
}
private let serialKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()
private let serials = Atomic<Int>(0)

/// Threads for blocking work are used again once their work returns.
@Suite(.serialized) struct SpareThreadsTests {
    /// The thread `SpareThreads` runs a body on.
    private func threadOfNextWork() -> Int {
        let id = Mutex<Int>(0)
        let done = DispatchSemaphore(value: 0)
        SpareThreads.run(named: "spare-test") {
            id.withLock { $0 = threadSerial() }
            done.signal()
        }
        done.wait()
        return id.withLock { $0 }
    }

    @Test func aFinishedThreadRunsTheNextWork() throws {
        let first = threadOfNextWork()
        // The body signalled before it returned: wait until its thread offers itself again.
        let deadline = Date().addingTimeInterval(5)
        while SpareThreads.waiting == 0 && Date() < deadline { usleep(1000) }
        #expect(SpareThreads.waiting >= 1)
        let second = threadOfNextWork()
        #expect(second != threadSerial() && first != threadSerial(), "never the caller's thread")
        #expect(Set((0..<20).map { _ in threadOfNextWork() }).count < 20, "twenty works in a row share threads")
    }

    @Test func worksAtOnceEachGetAThread() throws {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let ended = DispatchGroup()
        let ids = Mutex<Set<Int>>([])
        for _ in 0..<4 {
            ended.enter()
            SpareThreads.run(named: "spare-test") {
                ids.withLock { _ = $0.insert(threadSerial()) }
                started.signal()
                release.wait()
                ended.leave()
            }
        }
        // Four blocked bodies at once: none waits behind another.
        for _ in 0..<4 { #expect(started.wait(timeout: .now() + 5) == .success) }
        #expect(ids.withLock { $0.count } == 4)
        for _ in 0..<4 { release.signal() }
        #expect(ended.wait(timeout: .now() + 5) == .success, "every work ran to its end")
    }
}
