import Threads
import WireTypes

/// What was worked out from a JSON value, kept by key with that very value — the same storage, so telling it costs a
/// comparison of two words, where comparing the values would walk them.
///
/// A state file's members are handed round unchanged from one read to the next (a run's write leaves the rest of the
/// document as it was), and a batch's runs each read the file a dozen times: what was decoded or learned from a member
/// then need not be again.
final class IdentityMemo<Result: Sendable>: Sendable {
    private let entries = Locked<[String: (value: JSON, result: Result)]>([:])

    /// The result kept for `key` if it was worked out from this very `value`, else `work`'s, kept. `work` runs under
    /// the memo's lock, so no one takes for done what another is still working out; a `work` that throws keeps nothing.
    func result<E: Error>(_ key: String, of value: JSON, _ work: () throws(E) -> Result) throws(E) -> Result {
        try entries.withLock { (entries) throws(E) -> Result in
            if let kept = entries[key], kept.value.isIdentical(to: value) { return kept.result }
            let result = try work()
            entries[key] = (value, result)
            return result
        }
    }

    /// Whether `key` was last kept with this very `value` (by `result` or `keep`).
    func holds(_ key: String, _ value: JSON) -> Bool {
        entries.withLock { $0[key]?.value.isIdentical(to: value) ?? false }
    }

    /// Keeps `result` for `key`, worked out from `value`.
    func keep(_ key: String, _ value: JSON, _ result: Result) {
        entries.withLock { $0[key] = (value, result) }
    }

    /// Forgets the keys `isCurrent` refuses once the memo holds more than twice as many as are current (and a few):
    /// members come and go with runs, and a long batch would otherwise keep every one it saw.
    func trim(current count: Int, _ isCurrent: (String) -> Bool) {
        entries.withLock { entries in
            if entries.count > 2 * count + 16 { entries = entries.filter { isCurrent($0.key) } }
        }
    }
}
