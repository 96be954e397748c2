import Foundation
import Synchronization
import Testing

@testable import CheckoutCLI
@testable import CheckoutKit

/// Where the task a run's Ctrl-C handling cancels starts (`Interruption.run(on:)`).
@Suite struct InterruptionExecutorTests {
    /// A batch worker's run starts on the worker's thread, where its steps and transfers run, not on Swift's
    /// cooperative pool, from where it would hop to that thread (two wake-ups a run).
    @Test func theRunStartsOnTheThreadItIsGiven() async {
        let interruption = Interruption { _ in }
        defer { interruption.stop() }
        let thread = WorkerThread(name: "test.interruption")
        defer { thread.stop() }
        let started = Mutex<Bool?>(nil)
        let result = await interruption.run(on: thread) {
            started.withLock { $0 = thread.isCurrent }
            return FlowResult(
                name: "on-thread", environment: "test", startedAt: Date(), duration: 0, steps: [], failure: nil,
                captures: [:])
        }
        #expect(result.name == "on-thread")
        #expect(started.withLock { $0 } == true)
    }
}
