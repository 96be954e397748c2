import Crypto
import Foundation

/// A money call whose outcome is open: it may have moved money and nothing could tell (the run exited 75). Kept in the
/// state file so that a later invocation on that file neither charges again nor forgets it (docs/outcomes.md).
public struct OpenOutcome: Sendable, Equatable {
    /// The provider whose money it may have moved ("centra"): the guard holds per provider.
    public var provider: String
    /// What the read-back reads ("order cd-…", "intent pi_…", "session of run …"), unique in the file: a settle command
    /// that reads it clears the entry.
    public var reference: String
    /// A re-send that replays the open call instead of moving money again (its idempotency key); nil when the provider
    /// has none, so every new payment waits until the outcome is settled.
    public var replay: String?
    /// "the payment", "the capture": for messages.
    public var effect: String
    /// The commands that settle it, as the run printed them.
    public var settle: [String]
    /// When it was left open (ISO 8601).
    public var since: String
    /// The run whose scope of the state file holds what it belongs to (`runs.<id>`); nil for the chain's.
    public var run: String?
    /// The process the call is in flight in, recorded before it was sent (see `reconciling`): open only once that
    /// process is gone without settling it — a crash, a kill — and meanwhile no obstacle to other calls. Nil: left
    /// open by a run that ended.
    public var inFlight: ProcessIdentity?
    /// For a call in flight, the single-use values it uses up (`ReadBack.spends`): used, until its answer records them
    /// in the record of spent values — or, after a crash, for good.
    public var spends: [String] = []

    public init(
        provider: String, reference: String, replay: String?, effect: String, settle: [String], since: String,
        run: String? = nil,
        inFlight: ProcessIdentity? = nil
    ) {
        self.run = run
        self.inFlight = inFlight
        self.provider = provider
        self.reference = reference
        self.replay = replay
        self.effect = effect
        self.settle = settle
        self.since = since
    }

    var key: String { [provider, run, reference].compactMap { $0 }.joined(separator: " ") }

    /// Whether the call is still going in a running process: no obstacle to other calls, nothing to settle yet.
    public var stillInFlight: Bool { inFlight?.isRunning ?? false }

    /// When it was left open, for messages.
    public var left: String {
        guard let inFlight else { return "left open \(since)" }
        return
            "in flight since \(since) in process \(inFlight.pid)\(inFlight.isRunning ? ", still running" : ", which ended before it was settled")"
    }

    /// A name for a secret (a checkout token) that may stand in messages and the state file: the first 12 hex digits of
    /// its SHA-256.
    public static func fingerprint(_ secret: String) -> String {
        "sha256:" + Digest.sha256(Data(secret.utf8)).hexString.prefix(12)
    }

    var json: JSON {
        var o: JSON.Object = [
            "provider": .string(provider), "reference": .string(reference), "effect": .string(effect),
            "settle": .array(settle.map(JSON.string)), "since": .string(since),
        ]
        o["replay"] = replay.map(JSON.string)
        o["run"] = run.map(JSON.string)
        o["inFlight"] = inFlight?.json
        if !spends.isEmpty { o["spends"] = .array(spends.map(JSON.string)) }
        return .object(o)
    }

    init(_ field: StateField) throws(Diagnostic) {
        guard let provider = try field["provider"].string(), let reference = try field["reference"].string() else {
            throw field.wrong("an open outcome with a provider and a reference")
        }
        self.provider = provider
        self.reference = reference
        replay = try field["replay"].string()
        run = try field["run"].string()
        inFlight = ProcessIdentity(field["inFlight"].value)
        if field["inFlight"].value != nil && inFlight == nil {
            throw field["inFlight"].wrong("the process the call is in flight in, as {\"pid\": N, \"started\": \"N\"}")
        }
        if let list = field["spends"].value {
            guard case .array(let items) = list, items.allSatisfy({ $0.stringValue != nil }) else {
                throw field["spends"].wrong("a list of spent-value keys")
            }
            spends = items.compactMap(\.stringValue)
        }
        effect = try field["effect"].string() ?? "a payment"
        since = try field["since"].string() ?? ""
        var settle: [String] = []
        if let list = field["settle"].value {
            guard case .array(let items) = list else { throw field["settle"].wrong("a list of commands") }
            settle = items.compactMap(\.stringValue)
        }
        self.settle = settle
    }
}

/// The `openOutcomes` section of the state file: `{"<provider> <reference>": {provider, reference, replay, effect,
/// settle, since}}`. Written by `reconciling` when it ends in exit 75, read by its guard before every money call, and
/// cleared by whatever settles the outcome (a replay that answers, a settle command's read, `--force`).
enum OpenOutcomes {
    static let root = JSONPath(components: [.key("openOutcomes")])

    static func read(_ store: StateStore) throws(Diagnostic) -> [OpenOutcome] {
        try decode(store.readFile(), file: store.path)
    }

    /// The outcomes `read` gives that block a new money call: each one left open by a run that ended, and each call in
    /// flight whose process is gone. A process that settles its call and exits just after the file was read would
    /// otherwise look like one that died with it, so the file is read again once a process is seen gone: what is still
    /// there then was not settled by it, for it is gone for good. (A batch of processes on one file met this: a run was
    /// refused for another's call that had been answered and written a moment before.)
    static func blocking(
        read: () throws(Diagnostic) -> [OpenOutcome],
        isRunning: (ProcessIdentity) -> Bool
    ) throws(Diagnostic) -> [OpenOutcome] {
        var gone: Set<ProcessIdentity> = []
        var outcomes = try read()
        for _ in 0..<3 {
            let newlyGone = Set(outcomes.compactMap(\.inFlight).filter { !gone.contains($0) && !isRunning($0) })
            // A call whose process was running when looked at is no obstacle; one whose process was gone before this
            // read is still here unsettled.
            if newlyGone.isEmpty { return outcomes.filter { $0.inFlight.map(gone.contains) ?? true } }
            gone.formUnion(newlyGone)
            outcomes = try read()
        }
        // Processes kept ending between the reads: every call of one gone by now blocks.
        return outcomes.filter { $0.inFlight.map { gone.contains($0) || !isRunning($0) } ?? true }
    }

    static func decode(_ document: JSON, file: String) throws(Diagnostic) -> [OpenOutcome] {
        try decodeMembers(document, file: file).map(\.outcome)
    }

    /// Each entry with the key it is filed under. A run reads (and clears) the outcomes a dozen times, each time the
    /// same members but its own: each is decoded once per value.
    private static func decodeMembers(
        _ document: JSON, file: String
    ) throws(Diagnostic) -> [(key: String, outcome: OpenOutcome)] {
        var outcomes: [(key: String, outcome: OpenOutcome)] = []
        let members = try StateField(document["openOutcomes"], at: root, in: file).members()
        for (key, field) in members {
            outcomes.append(
                (
                    key,
                    try decoded.result(key, of: field.value ?? .null) { () throws(Diagnostic) in try OpenOutcome(field)
                    }
                ))
        }
        decoded.trim(current: members.count) { key in members.contains { $0.key == key } }
        return outcomes
    }

    private static let decoded = IdentityMemo<OpenOutcome>()

    static func record(_ outcome: OpenOutcome, in store: StateStore) throws(Diagnostic) {
        try store.updateFile { (doc: inout JSON) throws(Diagnostic) in
            _ = try decode(doc, file: store.path)
            doc = root.appending(outcome.key).setting(outcome.json, in: doc)
        }
    }

    /// Removes the provider's entries that `matches` picks; answers the ones removed.
    @discardableResult
    static func clear(
        provider: String, in store: StateStore, where matches: (OpenOutcome) -> Bool
    ) throws(Diagnostic) -> [OpenOutcome] {
        try store.updateFile { (doc: inout JSON) throws(Diagnostic) -> [OpenOutcome] in
            var kept = doc["openOutcomes"]?.objectValue ?? [:]
            var removed: [OpenOutcome] = []
            // Entries are kept as they are written (a newer version's members included); only the matched ones go.
            for (key, outcome) in try decodeMembers(doc, file: store.path)
            where outcome.provider == provider && matches(outcome) {
                removed.append(outcome)
                kept[key] = nil
            }
            guard !removed.isEmpty else { return [] }
            var top = doc.objectValue ?? [:]
            top["openOutcomes"] = kept.isEmpty ? nil : .object(kept)
            doc = .object(top)
            return removed
        }
    }
}

extension OperationContext {
    /// Refuses a money call while an earlier one of the same provider is open in this state file — unless it replays
    /// that very call (the same idempotency key) or the run has `--force`, which sets the open outcomes aside.
    func guardOpenOutcomes(_ readBack: ReadBack) throws(Diagnostic) {
        guard let state else { return }
        if services.force {
            setAside(provider: readBack.provider) {
                ($0.replay == nil || $0.replay != readBack.replay) && !$0.stillInFlight
            }
            return
        }
        let blocking = try OpenOutcomes.blocking(
            read: {
                () throws(Diagnostic) -> [OpenOutcome] in
                try OpenOutcomes.read(state).filter {
                    $0.provider == readBack.provider && ($0.replay == nil || $0.replay != readBack.replay)
                }
            }, isRunning: \.isRunning)
        guard let first = blocking.first else { return }
        throw Diagnostic(
            .outcomeUnknown,
            "refused before sending: \(first.effect) of \(first.reference) (\(first.left)) may have gone through, and \(readBack.action) could move money a second time",
            hint: "settle it first: " + first.settle.joined(separator: "; or ")
                + "; or pass --force if you settled it yourself")
    }

    /// `--force`: drops the provider's open outcomes that `matching` picks, unsettled, saying so.
    func setAside(provider: String, matching: (OpenOutcome) -> Bool = { _ in true }) {
        guard let state, let removed = try? OpenOutcomes.clear(provider: provider, in: state, where: matching) else {
            return
        }
        for outcome in removed {
            note(
                "--force: going ahead although \(outcome.effect) of \(outcome.reference) (\(outcome.left)) is not settled"
            )
        }
    }

    /// Clears the provider's open outcomes on `reference` after a read that tells what happened to them (a settle
    /// command), saying so.
    public func settledOpenOutcomes(provider: String, reference: String, effect: String? = nil, _ finding: String) {
        guard let state else { return }
        guard
            let removed = try? OpenOutcomes.clear(
                provider: provider, in: state,
                where: {
                    $0.reference == reference && (effect == nil || $0.effect == effect)
                })
        else { return }
        for outcome in removed {
            note(
                "settled: \(outcome.effect) of \(outcome.reference), \(outcome.inFlight == nil ? "open since \(outcome.since)" : outcome.left): \(finding)"
            )
        }
    }

    /// The provider's open outcomes in this scope of the state file (none without one).
    public func openOutcomes(provider: String) throws(Diagnostic) -> [OpenOutcome] {
        guard let state else { return [] }
        return try OpenOutcomes.read(state).filter { $0.provider == provider && $0.run == state.run }
    }
}
