import CheckoutKit
import Foundation

/// Where in the state file each run works and who holds its chain (docs/architecture.md, "The state file"): a whole
/// flow in a run scope of its own, handed to the chain when it ends; a single step, or the run `--run` names, holding
/// the chain for its length, so that two commands never interleave one checkout.
struct StateScoping: Sendable {
    /// The invocation's state file.
    let state: StateStore
    /// The state file is this process's own (next to an embedded emulator) and goes when it ends.
    let throwawayState: Bool
    /// `--run ID`: the run scope a single step continues.
    let runScope: String?
    /// `--continue`: a whole flow continues the chain instead of starting a run of its own.
    let continueChain: Bool
    let console: Console

    /// How long a command waits for another one holding the state file's chain.
    static let chainWait: Double = 30

    /// The part of the state file a run works on: a whole flow gets a run scope of its own (so parallel runs on one
    /// file never share a checkout) unless `--continue`; a single step continues the chain — or the run `--run` names —
    /// holding it for its duration, so two commands never interleave one checkout. An embedded emulator's throwaway
    /// file is the run's alone already — unless the process runs several flows (`separate`, a suite), each of which
    /// must start a checkout of its own, not continue the one before.
    func scope(for flow: Flow, separate: Bool = false) throws(Diagnostic) -> (store: StateStore, hold: ChainLock?) {
        if throwawayState && !(separate && flow.ownsState) { return (state, nil) }
        if let run = runScope {
            guard try state.readFile()["runs"]?[run] != nil else {
                throw .usage(
                    "state file \(state.path) has no run \(run)",
                    hint: "use the --run ID a settle command printed, with the same --session")
            }
            let scoped = state.scoped(run: run)
            return (scoped, try scoped.holdChain(wait: Self.chainWait, command: Self.commandName))
        }
        if flow.ownsState && !continueChain {
            return (
                state.ownRun("\(flow.name)-\(UUID.random().uuidString.prefix(8).lowercased())", batched: separate), nil
            )
        }
        return (state, try state.holdChain(wait: Self.chainWait, command: Self.commandName))
    }

    /// Ends a run's work on its scope: a whole flow's sections become the chain's while no single step holds it (one
    /// that does is halfway through them); when the chain stays busy the run's sections stay under its id, said in a
    /// warning. A run continued with `--run` stays where it is.
    func finish(_ store: StateStore) throws(Diagnostic) {
        guard store.run != nil && runScope == nil else { return }
        do {
            let hold = try state.holdChain(wait: Self.chainWait, command: Self.commandName, finishingRun: true)
            try store.finishRun()
            withExtendedLifetime(hold) {}
        } catch  where error.code == .unavailable {
            console.err("warning: \(error.message); this run's state stays under --run \(store.run ?? "")")
            try store.finishRun(promote: false)
        }
    }

    /// A run whose end could not be written (no space left) while the file still holds one of its money calls as in
    /// flight: that call stays open there once this process ends, so the run's outcome is unknown (75), not an I/O
    /// error.
    static func leftOpen(by failure: Diagnostic, in store: StateStore) -> Diagnostic? {
        guard let open = try? store.openOutcomesOnDisk(), let first = open.first else { return nil }
        var unknown = Diagnostic(
            .outcomeUnknown,
            "\(failure.message); the state file still holds \(first.effect) of \(first.reference) as in flight, which stays open once this command ends",
            hint: "make room for the state file, then settle it: " + first.settle.joined(separator: "; or "))
        unknown.outcomeUncertain = true
        return unknown
    }

    /// The command's words without its options or values that might be secret: "checkout-driver cashapp capture".
    private static var commandName: String {
        (["checkout-driver"] + CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(2)).joined(
            separator: " ")
    }

    /// Removes a throwaway state file's folder (an embedded emulator's), as the process ends.
    func removeThrowaway() {
        if throwawayState { try? FileManager.default.removeItem(atPath: FileIO.directory(of: state.path)) }
    }
}
