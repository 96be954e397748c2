import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The state file that chains separate invocations (captured ids, idempotency keys, spent tokens).
///
/// Its sections belong either to the chain — the top level, which single-step commands continue — or to one run
/// (`runs.<id>`): a whole checkout (`flow run`, `cashapp pay`, `centra express`, `braintree apple-pay`) works in a
/// scope of its own, so parallel runs on one file never share a checkout, and its sections become the chain's when it
/// ends (`finishRun`). What guards money across all of them — open outcomes, spent tokens — is file-wide.
///
/// Every change is read-modify-write under an exclusive advisory lock (`flock` on a sibling `.lock`
/// file, so that the rename below never swaps the locked inode away), and lands atomically: a record of the change
/// appended and flushed (`StateFileRecords`), or the whole file written to a temporary file in the same directory,
/// flushed, renamed over the old one. Mode 0600. A file that does not parse is an error that names it — never silently
/// reset, since it may hold the only record of an idempotency key.
public struct StateStore: Sendable {
    public let path: String
    let redactor: Redactor?
    /// The run whose sections `read` and `update` see (`runs.<id>`); nil for the chain at the top level.
    public let run: String?
    /// A whole flow's own run keeps its changes here until they must be on disk (see `StateJournal`); nil: every change
    /// is written as it is made (the chain, and a run that `--run` continues, are single commands' state).
    let journal: StateJournal?
    /// The file really read and written (symlinks followed), and whether it is (or will be) a regular file —
    /// `/dev/null` or a FIFO is written in place, unlocked: found once, when the store is made, not on each of a run's
    /// dozens of reads (nor the process's one view of it looked up by path each time).
    private let shared: SharedStateFile
    var target: String { shared.target }
    let isRegularFile: Bool
    /// The run scopes whose kept credentials `redactor` has learned, by run; shared by the stores of one file and
    /// redactor (`ownRun`, `scoped`).
    private let learnedScopes: IdentityMemo<Void>

    public init(path: String, redactor: Redactor? = nil, run: String? = nil) {
        let target = FileIO.resolvingSymlinks(path)
        var info = stat()
        let regular = stat(target, &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG
        self.init(
            path: path, shared: SharedStateFile.at(target), regular: regular, redactor: redactor, run: run,
            journal: nil,
            learned: IdentityMemo())
    }

    private init(
        path: String, shared: SharedStateFile, regular: Bool, redactor: Redactor?, run: String?, journal: StateJournal?,
        learned: IdentityMemo<Void>
    ) {
        self.path = path
        self.shared = shared
        self.isRegularFile = regular
        self.redactor = redactor
        self.run = run
        self.journal = journal
        self.learnedScopes = learned
    }

    /// The same file, seen from a run's own scope, each change written as it is made.
    public func scoped(run: String) -> StateStore {
        StateStore(
            path: path, shared: shared, regular: isRegularFile, redactor: redactor, run: run, journal: nil,
            learned: learnedScopes)
    }

    /// A new run of a whole flow: a scope of its own whose changes reach the disk before a money call is sent and when
    /// the run finishes (`commit`, `finishRun`), not one by one, each as a record appended to the file. The finish of a
    /// run that is one of a batch's (`batched`) is appended too, and the command writes the file whole once it ends
    /// (`compactFiles`); a lone run's finish writes it whole, so that it costs no third write.
    public func ownRun(_ id: String, batched: Bool = false) -> StateStore {
        StateStore(
            path: path, shared: shared, regular: isRegularFile, redactor: redactor, run: id,
            journal: StateJournal(batched: batched),
            learned: learnedScopes)
    }

    /// Writes the run's pending changes (nothing when there are none): what must be on disk before a money call is
    /// sent.
    public func commit() throws(Diagnostic) {
        try commit(finishing: false)
    }

    private func commit(finishing: Bool) throws(Diagnostic) {
        guard let journal, !journal.isEmpty else { return }
        try updateFileDurably(finishing: finishing) { (_: inout JSON) throws(Diagnostic) in }
    }

    /// Writes whole every state file this process left records in (no one having written it since): what the command
    /// does as it ends, so that a file at rest is plain JSON.
    public static func compactFiles() {
        SharedStateFile.compactAll()
    }

    /// Where a note about the state file goes (a last record cut short by a crash, ignored): the command line's
    /// standard error. Nowhere until it is set.
    public static let notes = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sections that are the file's, never a run's: what guards money across every run and the chain.
    public static let fileWideSections: Set<String> = ["openOutcomes", "spent", "runs"]
    /// How many finished runs the file remembers (a run with an open outcome is always kept).
    static let keptRuns = 20

    /// The run's sections become the chain's (`promote`), so that single steps continue from it — except a provider's
    /// section tied to an outcome still open, the run's (its settle commands name the run) or the chain's (the chain
    /// keeps the session it belongs to) — and the oldest finished runs are forgotten; a run still going never is.
    public func finishRun(promote: Bool = true) throws(Diagnostic) {
        // A run that wrote no section and left nothing open leaves no record, and the file as it was.
        guard let run else { return }
        let current = try readFile()
        let leftOpen = try OpenOutcomes.decode(current, file: path).contains { $0.run == run }
        guard current["runs"]?[run] != nil || leftOpen else { return try commit(finishing: true) }
        try updateFileDurably(finishing: true) { (doc: inout JSON) throws(Diagnostic) in
            var scope = doc["runs"]?[run]?.objectValue ?? [:]
            let open = try OpenOutcomes.decode(doc, file: path)
            var top = doc.objectValue ?? [:]
            for (section, value) in scope
            where promote && section != Self.runRecord && section != "captures"
                && !Self.fileWideSections.contains(section)
            {
                if open.contains(where: { ($0.run == run || $0.run == nil) && $0.provider == section }) { continue }
                top[section] = value
            }
            scope[Self.runRecord] = ["finishedAt": .string(Timestamp.iso8601(Date()))]
            var runs = top["runs"]?.objectValue ?? [:]
            runs[run] = .object(scope)
            let keep = Set(open.compactMap(\.run))
            // Each finished run's time read once, not at each comparison of the sort.
            let forgettable = runs.compactMap { id, scope in
                keep.contains(id)
                    ? nil : scope[Self.runRecord]?["finishedAt"]?.stringValue.map { (id: id, finished: $0) }
            }
            for old in forgettable.sorted(by: { $0.finished > $1.finished }).dropFirst(Self.keptRuns) {
                runs[old.id] = nil
            }
            top["runs"] = .object(runs)
            doc = .object(top)
        }
    }

    /// The scopes of runs still going (no finish recorded), by id: what another terminal acts on meanwhile.
    public func runningScopes() throws(Diagnostic) -> JSON.Object {
        (try readFile()["runs"]?.objectValue ?? [:]).filter { $0.value[Self.runRecord]?["finishedAt"] == nil }
    }

    private static let runsRoot = JSONPath(components: [.key("runs")])
    /// The member of a run's scope that says when it finished (never promoted).
    static let runRecord = "run"

    /// The part of the file this store's sections live in. A run sees the chain's `captures` (`${state.captures.…}` of
    /// earlier runs) and its own sections — none of a provider's at first: a run is a whole checkout of its own.
    private func scope(of document: JSON) throws(Diagnostic) -> JSON {
        guard let run else { return document }
        let value = document["runs"]?[run] ?? .object([:])
        guard case .object(var scope) = value else {
            throw StateField(value, at: Self.runsRoot.appending(run), in: path).wrong("an object")
        }
        scope["captures"] = document["captures"]
        return .object(scope)
    }

    /// Writes a run's view back: its captures are the chain's (merged under the lock, so parallel runs lose none).
    private func storeScope(_ view: JSON, of run: String, in document: inout JSON) {
        var scope = view.objectValue ?? [:]
        var top = document.objectValue ?? [:]
        top["captures"] = scope.removeValue(forKey: "captures")
        var runs = top["runs"]?.objectValue ?? [:]
        runs[run] = .object(scope)
        top["runs"] = .object(runs)
        document = .object(top)
    }

    /// `$XDG_STATE_HOME/checkout-driver/<env>/state.json` (XDG's default `~/.local/state`).
    public static func defaultPath(environment: String, processEnvironment: [String: String]) -> String {
        let base =
            processEnvironment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((processEnvironment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return "\(base)/checkout-driver/\(environment)/state.json"
    }

    /// The current document of this store's scope (an empty object when the file does not exist yet).
    public func read() throws(Diagnostic) -> JSON {
        try scope(of: readFile())
    }

    /// The document of this store's scope, once every section of the file has decoded as its readers read it
    /// (`checkSections`): what a run or a command starts from, so that a wrong-typed section anywhere stops it before
    /// it reads or writes anything — and before it could replace that section with its own.
    public func checked() throws(Diagnostic) -> JSON {
        // The file as this process last checked it is not checked again; a run's own pending changes are, with it.
        let pending = !(journal?.isEmpty ?? true)
        let file = try readFile(checking: !pending)
        if pending || !isRegularFile { try checkSections(file) }
        return try scope(of: file)
    }

    /// Every section of the document: each provider's in the chain and in each run's scope, the captures, the run
    /// records, the open outcomes and the record of spent values. 65 naming the JSON path and the way to recover.
    func checkSections(_ document: JSON) throws(Diagnostic) {
        let top = StateField(document, at: .root, in: path)
        _ = try top.members()
        func scope(_ field: StateField) throws(Diagnostic) {
            _ = try captures(field["captures"])
            for provider in Providers.all { try provider.section?(field[provider.name]) }
        }
        try scope(top)
        for (_, run) in try top["runs"].members() {
            _ = try run.members()
            _ = try run[Self.runRecord].members()
            try scope(run)
        }
        _ = try OpenOutcomes.decode(document, file: path)
        for (_, use) in try top["spent"].members() { try SpentCredentials.check(use) }
    }

    /// Applies `change` to the document of this store's scope and writes the result, all under the lock.
    @discardableResult
    public func update<T>(_ change: (inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T {
        try updateFile { (document: inout JSON) throws(Diagnostic) -> T in
            guard let run else { return try change(&document) }
            var scoped = try scope(of: document)
            let result = try change(&scoped)
            storeScope(scoped, of: run, in: &document)
            return result
        }
    }

    /// The whole file, whatever the scope: the file-wide sections (with the run's pending changes on top).
    public func readFile() throws(Diagnostic) -> JSON {
        try readFile(checking: false)
    }

    /// `checking`: the file's sections are checked as it is read, unless this process checked that very document.
    private func readFile(checking: Bool) throws(Diagnostic) -> JSON {
        var document = try onDisk(checking: checking)
        // The run's pending changes were learned from as they were made (`updateFile`).
        if let journal, let run { document = journal.view(of: document, run: run) }
        return document
    }

    /// The file as it is on disk, without the run's pending changes. This store's redactor has learned its kept
    /// credentials, once per version of the document.
    private func onDisk(checking: Bool = false) throws(Diagnostic) -> JSON {
        guard isRegularFile else {
            let document = try load().document
            learnCredentials(in: document)
            return document
        }
        let learning = redactor.map { (by: $0, learn: { (document: JSON) in learnCredentials(in: document) }) }
        return try shared.read(
            load, check: checking ? { (document: JSON) throws(Diagnostic) in try checkSections(document) } : nil,
            learn: learning)
    }

    /// This run's open outcomes as the disk has them — a call recorded in flight whose settling could not be written
    /// stays open there once this process ends.
    public func openOutcomesOnDisk() throws(Diagnostic) -> [OpenOutcome] {
        try OpenOutcomes.decode(onDisk(), file: path).filter { $0.run == run }
    }

    /// Read-modify-write of the whole file: kept in the run's journal when it can be, else written under the exclusive
    /// lock (with whatever the journal held), returning once it is on disk.
    @discardableResult
    func updateFile<T>(_ change: (inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T {
        if let journal, let run {
            let file = try onDisk()
            if let recorded = try journal.record(on: file, run: run, change) {
                // A credential the change kept (a rotated session token) is a secret in every output from now on.
                if let scope = recorded.scope { learnCredentials(inScope: scope) }
                return recorded.result
            }
        }
        return try updateFileDurably(change)
    }

    /// A change written now, with the run's pending changes under it: a whole flow's run appends it as a record unless
    /// it is the last write of a lone run (`finishing`); any other store writes the file whole, as single commands
    /// always did.
    @discardableResult
    func updateFileDurably<T>(
        finishing: Bool = false, _ change: (inout JSON) throws(Diagnostic) -> T
    ) throws(Diagnostic) -> T {
        guard let journal, let run else { return try writeFile(appending: false, change) }
        let appending = !finishing || journal.batched
        return try journal.commit(
            run: run,
            through: { (change: (inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T in
                try writeFile(appending: appending, change)
            }, change)
    }

    /// Read-modify-write of the file under the exclusive lock; returns once the change is on disk.
    private func writeFile<T>(appending: Bool, _ change: (inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T {
        guard isRegularFile else {
            // `/dev/null` or a FIFO: written in place, unlocked, never read back.
            var document = try load().document
            let result = try change(&document)
            var sections = RenderCache()
            _ = try write(document, reusing: &sections, over: nil, appending: false)
            return result
        }
        return try shared.update(
            load,
            write: { (document, sections, onDisk, appending) throws(Diagnostic) in
                try write(document, reusing: &sections, over: onDisk, appending: appending)
            }, appending: appending
        ) { (document: inout JSON) throws(Diagnostic) -> T in
            learnCredentials(in: document)
            return try change(&document)
        }
    }

    /// Adds values captured by a flow to its own part of the `captures` section, `captures.<flow>` (read in later runs
    /// as `${state.captures.<flow>.<name>}`): two flows that capture the same name never overwrite each other's.
    public func recordCaptures(_ captures: JSON.Object, flow: String) throws(Diagnostic) {
        try update { (doc: inout JSON) throws(Diagnostic) in
            var all = try self.captures(in: doc)
            var own = all[flow] ?? [:]
            for (name, value) in captures { own[name] = value }
            all[flow] = own
            doc = Self.capturesSection.setting(.object(JSON.Object(all.mapValues(JSON.object))), in: doc)
        }
    }

    /// The `captures` section of a state document, by flow, checked: exit 65 naming the path when it, or a flow's part
    /// of it, is not an object.
    func captures(in document: JSON) throws(Diagnostic) -> [String: JSON.Object] {
        try captures(StateField(document["captures"], at: Self.capturesSection, in: path))
    }

    /// The same for a `captures` section anywhere in the file (a run's scope holds one too).
    func captures(_ section: StateField) throws(Diagnostic) -> [String: JSON.Object] {
        var flows: [String: JSON.Object] = [:]
        for (flow, part) in try section.members() {
            guard case .object(let values)? = part.value else {
                throw .data(
                    "state file \(path): \(part.path): expected an object (the captures of flow '\(flow)'), found \(part.value?.kindName ?? "nothing")",
                    hint:
                        "captures are kept per flow, as captures.<flow>.<name>: move the entry under its flow's name, or remove it"
                )
            }
            flows[flow] = values
        }
        return flows
    }

    private static let capturesSection = JSONPath(components: [.key("captures")])

    /// The file's document with its records folded in, and how its bytes divide.
    private func load() throws(Diagnostic) -> StateFileRecords.Folded {
        let empty = StateFileRecords.Folded(document: .object([:]), layout: .init(documentBytes: 0))
        // `--session /dev/null` (a device, a FIFO) is a state that is never read back: reading /dev/full or a FIFO
        // would never end.
        guard isRegularFile else { return empty }
        let data: Data
        switch FileIO.read(target) {
        case .success(let bytes): data = bytes
        case .failure(let error) where error.code == ENOENT: return empty
        case .failure(let error):
            throw .data("cannot read state file \(path): \(error.reason)", hint: "check its permissions")
        }
        let hint =
            "inspect it, then move it aside or delete it to start afresh (it may hold idempotency keys you still need)"
        let folded: StateFileRecords.Folded
        do throws(StateFileRecords.Unreadable) { folded = try StateFileRecords.fold(data) } catch {
            switch error {
            case .document(let reason):
                throw .data("state file \(path) is corrupt: not valid JSON: \(reason)", hint: hint)
            case .record(let index, let reason):
                throw .data(
                    "state file \(path) is corrupt: record \(index) after its document is unreadable: \(reason)",
                    hint: hint)
            }
        }
        guard case .object = folded.document else {
            throw .data(
                "state file \(path) is corrupt: expected a JSON object, found \(folded.document.kindName)", hint: hint)
        }
        if folded.tornBytes > 0 {
            let note =
                "note: state file \(path): its last record (\(folded.tornBytes) bytes) was cut short, as by a crash in the middle of its write, and is ignored: the change it held was never confirmed"
            Self.notes.withLock { $0 }?(note)
        }
        return folded
    }

    /// The credentials the file keeps unmasked are secrets everywhere else: a provider's error text that quotes a
    /// checkout token is masked like any configured secret, in every message, report and trace.
    private func learnCredentials(in document: JSON) {
        guard redactor != nil else { return }
        learnCredentials(inScope: document)
        let section = document["runs"] ?? .null
        // The runs as they were when last learned, the very same storage: nothing in them is new (most of a run's reads
        // are of a document its own last write handed back).
        guard !learnedScopes.holds(Self.allRunsLearned, section) else { return }
        let runs = section.objectValue ?? [:]
        // Each run's scope once per value: a batch's runs read and write a file in which one scope changed, and the
        // other nineteen kept would each cost a walk and a locked lookup per credential, on every read and write.
        for (run, scope) in runs { learnedScopes.result(run, of: scope) { learnCredentials(inScope: scope) } }
        learnedScopes.trim(current: runs.count) { runs[$0] != nil }
        learnedScopes.keep(Self.allRunsLearned, section, ())
    }

    /// The memo's key for the whole `runs` section (no run's id is empty).
    private static let allRunsLearned = ""

    /// The kept credentials of one scope (the chain's sections or a run's).
    private func learnCredentials(inScope scope: JSON) {
        guard let redactor else { return }
        // The process's, not a run's: every run of a batch reads them all, and the file keeps only a few runs' anyway.
        Redactor.$run.withValue(nil) {
            for path in Self.sessionCredentialPaths {
                if let value = path.evaluate(scope)?.stringValue { redactor.register(value) }
            }
        }
    }

    /// Every place a kept credential sits at or under `place`: the chain's sections and each run's (only that run's,
    /// for a place in one run's scope — a write re-renders one scope among twenty kept).
    func credentialPaths(in document: JSON, under place: [JSONPath.Component] = []) -> [JSONPath] {
        let runs: [String]
        if place.count >= 2, place[0] == Self.runsRoot.components[0], case .key(let run) = place[1] {
            runs = [run]
        } else {
            runs =
                place.isEmpty || place == Self.runsRoot.components
                ? (document["runs"]?.objectValue?.keys.sorted() ?? []) : []
        }
        let scopes = [JSONPath.root] + runs.map { Self.runsRoot.appending($0) }
        return scopes.flatMap { scope in
            Self.sessionCredentialPaths.map { JSONPath(components: scope.components + $0.components) }
        }
        .filter { $0.components.starts(with: place) }
    }

    /// Where the state file keeps a credential the next invocation must send (each provider's `keptCredentials`:
    /// Centra's shopper session token, the Afterpay checkout token and its signed JWT). The only things the redactor
    /// leaves as they are, since carrying them between invocations is what the file (mode 0600) is for. They appear
    /// in no other output.
    static let sessionCredentialPaths = Providers.all.flatMap(\.keptCredentials)

    /// Writes the document as the file keeps it over the file as it lies (`onDisk`, when known): a record of what
    /// changed when `appending` allows and the records do not yet outweigh the document, else the whole file. Answers
    /// what the file then holds; nil when it already held this document, and nothing was written.
    private func write(
        _ document: JSON, reusing sections: inout RenderCache, over onDisk: StateFileRecords.Folded?,
        appending: Bool
    ) throws(Diagnostic) -> StateFileRecords.Folded? {
        // The state file is an output like any other: the one redactor gets the last word, but for session credentials.
        learnCredentials(in: document)
        let written = renderForm(document, reusing: &sections)
        // (A file not there yet has no bytes: it is written whole, even as `{}`.)
        if let onDisk, onDisk.layout.documentBytes > 0, case .object(let before) = onDisk.document,
            case .object(let after) = written
        {
            guard let record = StateFileRecords.record(from: before, to: after) else { return nil }
            let layout = onDisk.layout
            // A part masked anew (a secret learned since it was written) must leave the file, not stay under a record.
            // A file whose last record was cut short is longer than its document and records: the append refuses it,
            // and it is written whole, the cut record gone.
            if appending && !sections.remasked && layout.recordBytes < max(layout.documentBytes, Self.recordRoom) {
                let encoded = StateFileRecords.encoded(record)
                if try FileIO.append(
                    encoded, to: target, expected: layout.totalBytes, shown: path, tear: WriteFault.tears())
                {
                    return .init(
                        document: written,
                        layout: .init(
                            documentBytes: layout.documentBytes, recordBytes: layout.recordBytes + encoded.count))
                }
            }
        }
        if WriteFault.tears() { kill(getpid(), SIGKILL) }
        let bytes = text(of: sections)
        try FileIO.write(Data(bytes), to: path)
        return .init(document: written, layout: .init(documentBytes: bytes.count))
    }

    /// The records a file may gather before it is written whole again, at the least: as many bytes as its document,
    /// so that reading it costs at most twice the document.
    static let recordRoom = 16 * 1024
}
