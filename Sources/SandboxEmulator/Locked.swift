import Foundation

/// A value guarded by an NSLock, for state touched on every request (router, request log).
///
/// Why not `Synchronization.Mutex`: when the server ran a thread per connection there were far more runnable threads
/// than cores, and Mutex's spin-then-wait slow path burned ~25% CPU under `wrk`; NSLock (a pthread mutex) parks
/// waiters at once. The server's workers still outnumber the cores (four on two, more while handlers block).
/// `@unchecked Sendable` is sound because `value` is only reachable inside `withLock`, under the lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
