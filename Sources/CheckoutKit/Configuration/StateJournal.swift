import Foundation

/// The changes a whole flow's own run made to the state file that are not on disk yet (docs/architecture.md, "The
/// state file's journal").
///
/// A run's own sections concern no other command while it runs, and most of what it writes — a captured id, a rotated
/// session token, an intent as last read — only needs to outlive it. So a run's changes are kept here, in memory, and
/// reach the disk at the points where they must: before a money call is sent (with the call recorded as in flight,
/// so that a crash leaves its outcome open on disk) and when the run finishes. Everything the run reads sees them on
/// top of the file. A checkout costs two durable writes, whatever it writes in between.
///
/// What is kept is what the changes set, not the changes themselves: the run's scope as it now is (no one else writes
/// it), and the members of the file-wide sections it set or removed (merged member by member into whatever other runs
/// and processes wrote meanwhile). A change that touches anything else is written at once.
final class StateJournal: @unchecked Sendable {
    private let lock = NSLock()
    private var pending = StateDelta() { didSet { lastView = nil } }
    /// The last view made of a file (`view(of:run:)`), until the changes move on: a run reads its state a few dozen
    /// times between two of its changes, mostly from the very same document, and putting the changes on top of it made
    /// a new document each time.
    private var lastView: (file: JSON, run: String, view: JSON)?
    /// Whether the run is one of a batch's, whose finish is appended to the file like its other writes (see
    /// `StateStore.ownRun`).
    let batched: Bool

    init(batched: Bool = false) { self.batched = batched }

    /// Whether there is anything to write.
    var isEmpty: Bool { lock.withLock { pending.isEmpty } }

    /// The file as the run sees it: `file` with the pending changes on top.
    func view(of file: JSON, run: String) -> JSON {
        lock.withLock { applied(to: file, run: run) }
    }

    /// The pending changes on top of `file`, made once for each document and version of the changes. (With the lock
    /// held.)
    private func applied(to file: JSON, run: String) -> JSON {
        guard !pending.isEmpty else { return file }
        if let last = lastView, last.run == run, last.file.isIdentical(to: file) { return last.view }
        let view = pending.applied(to: file, run: run)
        lastView = (file, run, view)
        return view
    }

    /// Applies `change` to the run's view of `file` and keeps what it set; answers the change's result and the run's
    /// scope when the change set it. Nil when the change reached beyond what a journal keeps (then it must be written
    /// at once, and nothing of it was kept).
    func record<T>(
        on file: JSON, run: String, _ change: (inout JSON) throws(Diagnostic) -> T
    ) throws(Diagnostic) -> (result: T, scope: JSON?)? {
        lock.lock()
        defer { lock.unlock() }
        let before = StateDelta.reach(of: applied(to: file, run: run), run: run)
        var after = before
        let result = try change(&after)
        guard let delta = StateDelta(from: before, to: after, run: run) else { return nil }
        pending.absorb(delta)
        return (result, delta.scope)
    }

    /// Writes the pending changes through `write` (which applies the change it is given to the file under its lock and
    /// returns once it is on disk), together with `change`; they are forgotten only once written.
    func commit<T>(
        run: String, through write: @escaping ((inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T,
        _ change: (inout JSON) throws(Diagnostic) -> T
    ) throws(Diagnostic) -> T {
        lock.lock()
        defer { lock.unlock() }
        let delta = pending
        let result = try write { (document: inout JSON) throws(Diagnostic) -> T in
            document = delta.applied(to: document, run: run)
            return try change(&document)
        }
        pending = StateDelta()
        return result
    }
}

/// What a run's changes set: its scope and members of the file-wide sections (see `StateJournal`).
struct StateDelta: Equatable {
    /// `runs.<run>` as the run's changes left it; nil while they have not touched it.
    var scope: JSON?
    /// Members of the file-wide sections the run's changes set (a value) or removed (nil), by section: `captures` (by
    /// flow), `openOutcomes`, `spent`.
    var members: [String: [String: JSON?]] = [:]

    /// No changes.
    init() {}

    /// The sections a journal keeps members of; a change to any other part of the file is written at once.
    static let memberSections = ["captures", "openOutcomes", "spent"]

    var isEmpty: Bool { scope == nil && members.isEmpty }

    /// The part of `document` a journaled change may touch: the run's scope and the member sections.
    static func reach(of document: JSON, run: String) -> JSON {
        var part: JSON.Object = [:]
        for section in memberSections { part[section] = document[section] }
        if let scope = document["runs"]?[run] { part["runs"] = .object([run: scope]) }
        return .object(part)
    }

    /// What `after` sets that `before` did not; nil when it changed something outside the run's reach (or turned a
    /// member section into something that is not an object: that is judged where it is read, at once).
    init?(from before: JSON, to after: JSON, run: String) {
        guard case .object(let top) = after else { return nil }
        for key in top.keys where key != "runs" && !Self.memberSections.contains(key) { return nil }
        let runs = after["runs"]
        if let runs {
            guard case .object(let scopes) = runs, scopes.keys.allSatisfy({ $0 == run }) else { return nil }
            let old = before["runs"]?[run]
            guard scopes[run] != nil || old == nil else { return nil }
            if scopes[run] != old { scope = scopes[run] }
        } else if before["runs"] != nil {
            return nil
        }
        for section in Self.memberSections where before[section] != after[section] {
            guard let old = Self.members(before[section]), let new = Self.members(after[section]) else { return nil }
            var changed: [String: JSON?] = [:]
            for (key, value) in old.changes(to: new) { changed[key] = .some(value) }
            if !changed.isEmpty { members[section] = changed }
        }
    }

    /// A member section's members (absent or null: none); nil when it is not an object.
    private static func members(_ section: JSON?) -> JSON.Object? {
        switch section {
        case nil, .null?: [:]
        case .object(let members)?: members
        default: nil
        }
    }

    /// Later changes win, member by member.
    mutating func absorb(_ later: StateDelta) {
        if let scope = later.scope { self.scope = scope }
        for (section, changed) in later.members { members[section, default: [:]].merge(changed) { _, new in new } }
    }

    /// `document` with these changes on top.
    func applied(to document: JSON, run: String) -> JSON {
        guard !isEmpty else { return document }
        var top = document.objectValue ?? [:]
        if let scope {
            var runs = top["runs"]?.objectValue ?? [:]
            runs[run] = scope
            top["runs"] = .object(runs)
        }
        for (section, changed) in members {
            var part = top[section]?.objectValue ?? [:]
            for (key, value) in changed { part[key] = value }
            // An emptied section goes, as the code that empties it leaves it (OpenOutcomes.clear).
            top[section] = part.isEmpty ? nil : .object(part)
        }
        return .object(top)
    }
}
