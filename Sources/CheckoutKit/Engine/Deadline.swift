import Foundation

/// The flow's time budget. Every request timeout and every wait is cut to what is left of it.
public struct Deadline: Sendable {
    let start: ContinuousClock.Instant
    public let seconds: Double?

    public init(start: ContinuousClock.Instant = .now, seconds: Double?) {
        self.start = start
        self.seconds = seconds
    }

    public var remaining: Double? { seconds.map { $0 - (ContinuousClock.now - start).seconds } }

    /// Too little is left for another exchange to be worth starting.
    public var isSpent: Bool { remaining.map { $0 <= 0.05 } ?? false }

    func exceeded(during step: String) -> Diagnostic {
        .unavailable(
            "the flow's deadline of \(FlowRunner.format(seconds ?? 0))s passed during step '\(step)'",
            hint: "raise --deadline, or find the slow call with -v")
    }

    /// Waits `interval` seconds, unless the wait would end past the deadline (then it fails at once) or the run is
    /// interrupted (then it ends at once).
    func sleep(_ interval: Double, during step: String) async throws(Diagnostic) {
        if let remaining, remaining < interval { throw exceeded(during: step) }
        do { try await Task.sleep(for: .milliseconds(Int(interval * 1000))) } catch { throw .interrupted(during: step) }
    }
}
