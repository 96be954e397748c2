import Foundation

/// A value guarded by an NSLock, for state many threads touch on every request or every run: the emulator's router,
/// request log and stores, the client's redactor.
///
/// Why not `Synchronization.Mutex`: on Linux its slow path spins and then waits on a priority-inheriting futex, and
/// with more runnable threads than cores — a batch's eight runs on two, a server's workers — the spinning burned CPU
/// (~25% of the emulator's under `wrk` when it ran a thread per connection; 2–3% of a Centra batch's client CPU in the
/// redactor's lock). NSLock, a plain pthread mutex, parks waiters at once. `@unchecked Sendable` is sound because
/// `value` is only reachable inside `withLock`, under the lock.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
