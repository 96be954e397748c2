import Foundation

/// Polls `condition` every 10 ms for up to `timeout` seconds; true once it holds. Every wait of the tests on a server,
/// a process or a file goes through here, so none can hang a run.
public func eventually(timeout: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(10_000)
    }
    return try condition()
}

/// `eventually` for async tests: sleeps without blocking a thread of the cooperative pool.
public func eventually(timeout: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
