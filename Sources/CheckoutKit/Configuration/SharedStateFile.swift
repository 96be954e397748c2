import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// This process's one view of a state file: the document as last read or written, and a group commit of changes.
///
/// A write appends a record of what it changed when it may (`StateFileRecords`); the file is written whole when a
/// change asks for it, when the records outweigh the document, and once more when the command ends (`compactAll`).
///
/// Every `StateStore` of the process that names the same file goes through the same `SharedStateFile`, so that
/// - a read does not parse the file again while it is the one this process last read or wrote (same device, inode,
///   size, modification and change times: a write by any process renames a new inode into place, which matches only
///   if it reuses the inode number with the same size within one tick of the file system's clock);
/// - changes that arrive while the file is being written wait and are written together, by one write: a batch's
///   parallel runs each wait for a write that holds their change — as durable as one write each, far fewer writes.
///
/// Other processes see what they always did: the exclusive `flock` on the sibling `.lock` file is held from the first
/// change applied until the write that holds the last one has landed, so no other process reads or writes between
/// a change and its write; after a few chained writes new changes wait for the lock to be let go, so that a long
/// batch does not keep another process out. A write that fails fails every change it held or that was applied after it,
/// and the document is read again from the file next time: what a caller was told failed never reaches the file.
final class SharedStateFile: @unchecked Sendable {
    /// The file really written (symlinks resolved) and the lock beside it.
    let target: String
    private let condition = NSCondition()
    /// The file as this process last read or wrote it, and that file's identity; nil when it must be read again.
    private var document: JSON? { didSet { version += 1 } }
    /// Counts the documents this process has held, and names the one whose sections were last checked: a check holds
    /// for as long as its document is the current one.
    private var version = 0
    private var checkedVersion = -1
    /// The redactor that last learned the kept credentials of a document read (weak: another made at its address later
    /// has learned nothing), and that document's version.
    private weak var learnedBy: Redactor?
    private var learnedVersion = -1
    private var identity: Identity?
    /// What the file holds as this process last read or wrote it (its records folded in) and how its bytes divide; nil
    /// when that is not known (before the first read, after a failed write).
    private var onDisk: StateFileRecords.Folded?
    /// Whether a change waiting for the next write asked for the file to be written whole.
    private var wholeWanted = false
    /// The lock file, open for as long as the process runs (opened again if it was removed meanwhile); -1 before the
    /// first use.
    private var lockFD: Int32 = -1
    /// Whether this process holds the exclusive lock: from its first change applied until the write holding its last
    /// one has landed.
    private var holding = false
    /// Changes are numbered as applied; `written` is the last one on disk, `failedThrough` the last one a failed write
    /// took down. A change is settled once either covers it.
    private var applied = 0
    private var written = 0
    private var failedThrough = 0
    /// Each failed write with the changes it took down (those it carried and those applied on top of them): a change
    /// is judged by these before by `written`, since a later write that succeeds numbers past it too.
    private var failures: [(changes: ClosedRange<Int>, error: Diagnostic)] = []
    private var writing = false
    /// Writes made under the present hold of the lock: after `chainLimit` of them new changes wait for it to be let go,
    /// so that another process's command gets its turn during a long batch.
    private var chained = 0
    static let chainLimit = 4
    private var writeCount = 0
    /// The parts as last written, for the next write to reuse (only the one writing touches it).
    private var rendered = RenderCache()

    private init(target: String) { self.target = target }

    private static let files = Mutex<[String: SharedStateFile]>([:])

    /// The process's view of the file at `target`.
    static func at(_ target: String) -> SharedStateFile {
        files.withLock { files in
            if let file = files[target] { return file }
            let file = SharedStateFile(target: target)
            files[target] = file
            return file
        }
    }

    /// What tells one version of the file from another: the count of writes kept in the lock file, and the file's
    /// own identity. The count is what holds between this program's processes — a freed inode number is handed to the
    /// next new file at once, and two files of the same size written within one tick of a coarse file-system clock
    /// would otherwise pass for one (a parallel batch of processes did that, and one wrote back a document it had
    /// cached, undoing another's change); the file's identity catches a writer that does not count (another version).
    struct Identity: Equatable {
        let writes: UInt64
        let device: UInt64, inode: UInt64, size: Int64
        let modified: timespec, changed: timespec

        static func == (a: Identity, b: Identity) -> Bool {
            a.writes == b.writes && a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    /// The file's identity now; `lock` is the descriptor of the lock file, held.
    private func currentIdentity(lock: Int32) -> Identity? {
        var info = stat()
        guard stat(target, &info) == 0 else { return nil }
        return Identity(
            writes: Self.writesCounted(lock), device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
            size: Int64(info.st_size), modified: info.st_mtim, changed: info.st_ctim)
    }

    /// The count of writes in the lock file (its first 8 bytes, little-endian; none yet: 0).
    static func writesCounted(_ lock: Int32) -> UInt64 {
        var count: UInt64 = 0
        guard pread(lock, &count, 8, 0) == 8 else { return 0 }
        return UInt64(littleEndian: count)
    }

    /// Counts one more write; call with the exclusive lock held, once the write has landed.
    static func countWrite(_ lock: Int32) {
        var next = (writesCounted(lock) &+ 1).littleEndian
        _ = pwrite(lock, &next, 8, 0)
    }

    /// The document, read from the file unless it is the version this process already holds. Call with the flock held
    /// (`lock` its descriptor).
    private func current(
        _ load: () throws(Diagnostic) -> StateFileRecords.Folded, lock: Int32
    ) throws(Diagnostic) -> JSON {
        let now = currentIdentity(lock: lock)
        if let document, let now, now == identity { return document }
        let fresh = try load()
        document = fresh.document
        onDisk = fresh
        identity = now
        return fresh.document
    }

    /// The file's document (`load` reads it): while this process's own changes are on their way to the file, the next
    /// version it holds, without waiting for them to land. `check`, when given, is run on it unless it already passed
    /// on this very document (a batch's runs each check the file as they start, and it seldom changed in between).
    /// `learn`, when given, is run on it unless it already ran on this very document for the same redactor (`by`): a
    /// run reads the file a dozen times, and each time the redactor would learn every kept run's credentials again.
    func read(
        _ load: () throws(Diagnostic) -> StateFileRecords.Folded, check: ((JSON) throws(Diagnostic) -> Void)? = nil,
        learn: (by: Redactor, learn: (JSON) -> Void)? = nil
    ) throws(Diagnostic) -> JSON {
        condition.lock()
        defer { condition.unlock() }
        let document: JSON
        if applied > settled, let held = self.document {
            // This process's changes are on their way to the file under its exclusive lock, so no other process writes
            // meanwhile: the document it holds is the file's next version, and a read need not wait for the flush (a
            // batch's runs would otherwise queue behind each other's).
            document = held
        } else if let held = self.document, let identity, currentIdentity(lock: try lockFile()) == identity {
            // The document this process holds, while the file is still that version, needs no lock to be read: another
            // process's write puts the new file in place before it counts itself, so a look between the two finds the
            // new file's identity (and a look before both is a read made before that write).
            document = held
        } else {
            let lock = try lockFile()
            try Self.acquire(lock, LOCK_SH, target)
            defer { flock(lock, LOCK_UN) }
            document = try current(load, lock: lock)
        }
        if let check, checkedVersion != version {
            try check(document)
            checkedVersion = version
        }
        if let learn, learnedBy !== learn.by || learnedVersion != version {
            learn.learn(document)
            learnedBy = learn.by
            learnedVersion = version
        }
        return document
    }

    /// Applies `change` to the document and returns once a write that holds it has landed. `write` redacts and writes
    /// a document over the file as it lies (`onDisk`, when known), appending a record when `appending` allows, and
    /// answers what the file then holds (what a read of it would give back) — nil when it wrote nothing, since the file
    /// already held that document. A write appends only when every change it holds allows it (`appending`).
    func update<T>(
        _ load: () throws(Diagnostic) -> StateFileRecords.Folded,
        write: (JSON, inout RenderCache, _ onDisk: StateFileRecords.Folded?, _ appending: Bool) throws(Diagnostic) ->
            StateFileRecords.Folded?,
        appending: Bool = false, _ change: (inout JSON) throws(Diagnostic) -> T
    ) throws(Diagnostic) -> T {
        condition.lock()
        defer { condition.unlock() }
        while holding && chained >= Self.chainLimit { condition.wait() }
        if !holding {
            let lock = try lockFile()
            try Self.acquire(lock, LOCK_EX, target)
            holding = true
        }
        var changed: JSON
        let result: T
        do {
            // While changes of this process are pending, the lock has been held since the first: the document in memory
            // is the file's next version, whatever the disk says now (before the first write, there is no file yet).
            if applied > settled, let document { changed = document } else { changed = try current(load, lock: lockFD) }
            result = try change(&changed)
        } catch {
            releaseIfSettled()
            throw error
        }
        replaceByOwnChange(changed)
        if !appending { wholeWanted = true }
        applied += 1
        let mine = applied
        while true {
            if let failed = failures.last(where: { $0.changes.contains(mine) }) { throw failed.error }
            if written >= mine { break }
            if writing {
                condition.wait()
                continue
            }
            // This change's turn to lead: write everything applied so far, in one write, outside the lock.
            // A failed write clears the document, but it also failed every change applied before it (this one too).
            guard let snapshot = document else { preconditionFailure("a change pending on \(target) with no document") }
            writing = true
            let through = applied
            let (lying, whole) = (onDisk, wholeWanted)
            wholeWanted = false
            var sections = rendered
            rendered = RenderCache()  // the writer holds the only reference, so its parts are changed in place
            condition.unlock()
            let outcome: Result<StateFileRecords.Folded?, Diagnostic>
            do throws(Diagnostic) {
                try WriteFault.before(writing: target)
                outcome = .success(try write(snapshot, &sections, lying, !whole))
                WriteFault.after(writing: target)
            } catch { outcome = .failure(error) }
            condition.lock()
            rendered = sections
            writing = false
            writeCount += 1
            chained += 1
            switch outcome {
            case .success(let wrote):
                written = through
                // Nothing to write: the file, and its identity, are as they were.
                guard let now = wrote ?? lying else {
                    preconditionFailure("a write of \(target) over an unknown file wrote nothing")
                }
                // Changes applied meanwhile are on top of the document as it was before it was redacted for the file;
                // the cache takes the written form only when nothing is still pending.
                if applied == through { replaceByOwnChange(now.document) }
                if wrote != nil {
                    Self.countWrite(lockFD)
                    identity = currentIdentity(lock: lockFD)
                }
                onDisk = now
            case .failure(let error):
                failures.append((changes: (settled + 1)...applied, error: error))
                failedThrough = applied
                document = nil
                onDisk = nil
            }
            releaseIfSettled()
            condition.broadcast()
        }
        return result
    }

    /// Puts this process's next version of the document in place. A change this process made to a document whose
    /// sections passed their check is checked by construction: a batch's next run need not check the whole file again
    /// because the last one wrote to it.
    private func replaceByOwnChange(_ next: JSON) {
        let checkedBefore = checkedVersion == version
        document = next
        if checkedBefore { checkedVersion = version }
    }

    private var settled: Int { max(written, failedThrough) }

    private func releaseIfSettled() {
        guard holding, !writing, applied == settled else { return }
        flock(lockFD, LOCK_UN)
        holding = false
        chained = 0
        condition.broadcast()
    }

    /// The lock file's descriptor, opened on first use and kept: a read or a write costs no `open` and `close`. A lock
    /// file someone removed (no link left) is opened again, so that this process locks the file others lock. Call with
    /// `condition` held and the lock not held.
    private func lockFile() throws(Diagnostic) -> Int32 {
        if lockFD >= 0 {
            var info = stat()
            if fstat(lockFD, &info) == 0 && info.st_nlink > 0 { return lockFD }
            Glibc.close(lockFD)
            lockFD = -1
        }
        lockFD = try Self.openLock(target)
        return lockFD
    }

    /// Writes the file whole when this process left records after its document and no one wrote it since, so that a
    /// file at rest is the plain JSON it always was. One that cannot be written keeps its records, which every reader
    /// folds in.
    func compact() {
        condition.lock()
        defer { condition.unlock() }
        while writing || applied > settled { condition.wait() }
        guard let lying = onDisk, lying.layout.recordBytes > 0 || lying.tornBytes > 0, let lock = try? lockFile(),
            (try? Self.acquire(lock, LOCK_EX, target)) != nil
        else { return }
        defer { flock(lock, LOCK_UN) }
        guard currentIdentity(lock: lock) == identity else { return }
        let bytes = lying.document.serializedData(pretty: true, newline: true)
        do throws(Diagnostic) {
            try WriteFault.before(writing: target)
            if WriteFault.tears() { kill(getpid(), SIGKILL) }
            try FileIO.write(bytes, to: target)
            WriteFault.after(writing: target)
        } catch { return }
        onDisk = StateFileRecords.Folded(document: lying.document, layout: .init(documentBytes: bytes.count))
        writeCount += 1
        Self.countWrite(lock)
        identity = currentIdentity(lock: lock)
    }

    /// `compact` for every state file this process used.
    static func compactAll() {
        for file in files.withLock({ Array($0.values) }) { file.compact() }
    }

    /// How many writes this process made of the file (what the tests hold the group commit to).
    var writes: Int {
        condition.lock()
        defer { condition.unlock() }
        return writeCount
    }

    /// Opens `<target>.lock` (created 0600 with its directory 0700 as needed).
    static func openLock(_ target: String) throws(Diagnostic) -> Int32 {
        let directory = FileIO.directory(of: target)
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true,
                    attributes: [.posixPermissions: 0o700])
            } catch {
                throw .ioError(
                    "cannot create the state directory \(directory): \(error.localizedDescription)",
                    hint: "pass --session FILE somewhere writable")
            }
        }
        let fd = open(target + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .ioError(
                "cannot open \(target).lock: \(String(cString: strerror(errno)))",
                hint: "pass --session FILE somewhere writable")
        }
        return fd
    }

    /// Takes (`LOCK_SH`, `LOCK_EX`) the advisory lock on an open lock file, waiting for it.
    static func acquire(_ fd: Int32, _ operation: Int32, _ target: String) throws(Diagnostic) {
        while flock(fd, operation) != 0 {
            if errno != EINTR {
                throw .ioError(
                    "cannot lock \(target): \(String(cString: strerror(errno)))",
                    hint: "pass --session FILE on a local file system")
            }
        }
    }
}

/// Faults the tests inject into the state file's durable writes, through the environment of the process under test:
/// `CHECKOUT_DRIVER_TEST_STATE_WRITE_FAULT=kill@N` kills the process (SIGKILL, nothing runs after it) once its Nth
/// write of a state file has landed; `nospace@N` fails the Nth write as a full disk does, leaving the file as it was;
/// `torn@N` kills the process in the middle of the Nth write: an appended record half written, or a whole file before
/// it is renamed into place.
/// Counted over every state file the process writes, in the order the writes land: deterministic for a given N, where
/// a timer would not be. Unset, each write costs one comparison.
enum WriteFault {
    enum Kind: String { case kill, nospace, torn }

    static let planned: (kind: Kind, at: Int)? = {
        guard let spec = ProcessInfo.processInfo.environment["CHECKOUT_DRIVER_TEST_STATE_WRITE_FAULT"],
            let at = spec.firstIndex(of: "@"), let kind = Kind(rawValue: String(spec[..<at])),
            let n = Int(spec[spec.index(after: at)...]), n > 0
        else { return nil }
        return (kind, n)
    }()
    private static let writes = Atomic<Int>(0)
    private static let tearing = Atomic<Bool>(false)

    static func before(writing target: String) throws(Diagnostic) {
        guard let planned, planned.kind != .kill else { return }
        guard writes.add(1, ordering: .relaxed).newValue == planned.at else { return }
        if planned.kind == .torn {
            tearing.store(true, ordering: .relaxed)
            return
        }
        throw FileIO.failure(target, ENOSPC, hint: "check there is space and the directory is writable")
    }

    /// Whether this write is the one to tear (asked once, by the write itself).
    static func tears() -> Bool {
        planned?.kind == .torn && tearing.exchange(false, ordering: .relaxed)
    }

    static func after(writing target: String) {
        guard let planned, planned.kind == .kill else { return }
        if writes.add(1, ordering: .relaxed).newValue == planned.at { kill(getpid(), SIGKILL) }
    }
}
