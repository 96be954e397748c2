import Crypto
import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import CheckoutKit

/// The process's one view of a state file: changes that arrive during a write are written together, a failed write
/// fails every change it would have carried, and a file another process replaced is read again.
@Suite struct SharedStateFileTests {
    /// Runs `body` on a thread of its own (the file blocks on flock, fsync and its condition).
    private func onThread(_ body: @escaping @Sendable () -> Void) { Thread { body() }.start() }

    @Test func changesThatArriveDuringAWriteAreWrittenTogether() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = SharedStateFile.at(dir + "/state.json")
        let firstWriteStarted = DispatchSemaphore(value: 0)
        let releaseFirstWrite = DispatchSemaphore(value: 0)
        let written = Mutex<[JSON]>([])
        let done = DispatchGroup()
        @Sendable func write(
            _ document: JSON, _: inout RenderCache, _: StateFileRecords.Folded?, _: Bool
        ) throws(Diagnostic) -> StateFileRecords.Folded? {
            let first = written.withLock { $0.isEmpty }
            if first {
                firstWriteStarted.signal()
                releaseFirstWrite.wait()
            }
            written.withLock { $0.append(document) }
            return folded(document)
        }
        let appliedOne = DispatchSemaphore(value: 0)
        func add(_ n: Int) {
            done.enter()
            onThread {
                try? file.update({ folded(.object([:])) }, write: write) { (doc: inout JSON) throws(Diagnostic) in
                    doc = ["n": .array((doc["n"]?.arrayValue ?? []) + [.number(Double(n))])]
                    appliedOne.signal()
                }
                done.leave()
            }
        }
        add(0)
        firstWriteStarted.wait()
        for n in 1...5 { add(n) }
        // The five are applied while the first write is held, then the first write is let go.
        for _ in 0...5 { #expect(appliedOne.wait(timeout: .now() + 10) == .success) }
        releaseFirstWrite.signal()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let writes = written.withLock { $0 }
        #expect(writes.count == 2)
        #expect(file.writes == 2)
        #expect(writes.last?["n"]?.arrayValue?.count == 6)
    }

    /// A read while this process's write is being flushed does not wait for it: this process holds the exclusive lock,
    /// so no other process writes meanwhile, and the document it holds is the file's next version.
    @Test func aReadDuringAFlushSeesTheNextVersionWithoutWaiting() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = SharedStateFile.at(dir + "/state.json")
        let writeStarted = DispatchSemaphore(value: 0)
        let releaseWrite = DispatchSemaphore(value: 0)
        @Sendable func write(
            _ document: JSON, _: inout RenderCache, _: StateFileRecords.Folded?, _: Bool
        ) throws(Diagnostic) -> StateFileRecords.Folded? {
            writeStarted.signal()
            releaseWrite.wait()
            return folded(document)
        }
        let written = DispatchSemaphore(value: 0)
        onThread {
            try? file.update({ folded(.object([:])) }, write: write) { (doc: inout JSON) throws(Diagnostic) in
                doc = ["a": 1]
            }
            written.signal()
        }
        #expect(writeStarted.wait(timeout: .now() + 10) == .success)
        let read = DispatchSemaphore(value: 0)
        let seen = Mutex<JSON?>(nil)
        onThread {
            let document = try? file.read({ folded(.object([:])) })
            seen.withLock { $0 = document }
            read.signal()
        }
        let waited = read.wait(timeout: .now() + 5) == .timedOut
        releaseWrite.signal()
        #expect(!waited, "the read waited for the flush")
        #expect(written.wait(timeout: .now() + 10) == .success)
        if waited { _ = read.wait(timeout: .now() + 10) }
        #expect(seen.withLock { $0 } == ["a": 1])
    }

    /// Another process reading the file holds the lock shared (an open file description of its own, as this test's
    /// is): an update waits until it lets go, so no process ever reads a file half way through a change.
    @Test func anUpdateWaitsWhileAnotherHolderReads() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let fd = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(fd >= 0 && flock(fd, LOCK_SH) == 0)
        let done = DispatchSemaphore(value: 0)
        onThread {
            try? StateStore(path: path).update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 1] }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 0.5) == .timedOut, "the update went ahead while another holder read")
        flock(fd, LOCK_UN)
        close(fd)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(try StateStore(path: path).read() == ["a": 1])
    }

    @Test func aFailedWriteFailsEveryChangeItCarriedAndTheFileIsReadAgain() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A file on disk that the failed write leaves as it was: only forgetting the document makes it read again.
        try Data(#"{"from": "disk"}"#.utf8).write(to: URL(fileURLWithPath: dir + "/state.json"))
        let file = SharedStateFile.at(dir + "/state.json")
        let loads = Mutex(0)
        @Sendable func load() throws(Diagnostic) -> StateFileRecords.Folded {
            loads.withLock { $0 += 1 }
            return folded(["from": "disk"])
        }
        @Sendable func failing(
            _: JSON, _: inout RenderCache, _: StateFileRecords.Folded?, _: Bool
        ) throws(Diagnostic) -> StateFileRecords.Folded? {
            throw .ioError("disk full", hint: "free some space")
        }
        let failure = diagnostic { () throws(Diagnostic) in
            try file.update(load, write: failing) { (doc: inout JSON) throws(Diagnostic) in doc = ["from": "memory"] }
        }
        #expect(failure?.message == "disk full")
        // What was refused never reaches the next write: the document is read from the file again.
        let seen = try file.update(load, write: { (doc, _, _, _) throws(Diagnostic) in folded(doc) }) {
            (doc: inout JSON) throws(Diagnostic) -> JSON in doc
        }
        #expect(seen == ["from": "disk"])
        #expect(loads.withLock { $0 } == 2)
    }

    @Test func theFileIsReadAgainOnlyWhenAnotherWriterReplacedIt() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let store = StateStore(path: path)
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 1] }
        #expect(try store.read() == ["a": 1])
        // Another process writes the file as this one does: a new file renamed into place.
        try Data(#"{"a": 2}"#.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        #expect(try store.read() == ["a": 2])
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            doc = ["a": .number(Double((doc["a"]?.intValue ?? 0) + 1))]
        }
        #expect(try StateStore(path: path).read() == ["a": 3])
        // Rewritten in place (the same inode), another size, another time: still seen.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        Thread.sleep(forTimeInterval: 0.01)
        try handle.write(contentsOf: Data(#"{"a": 4}"#.utf8))
        try handle.truncate(atOffset: 8)
        try handle.close()
        #expect(try store.read() == ["a": 4])
    }

    /// The lock file stays open for the process's life; one someone removed meanwhile is opened again, so that this
    /// process locks — and counts its writes in — the file every other process opens.
    @Test func aRemovedLockFileIsOpenedAgain() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let store = StateStore(path: path)
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 1] }
        #expect(unlink(path + ".lock") == 0)
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 2] }
        let fd = open(path + ".lock", O_RDWR | O_CLOEXEC)
        #expect(fd >= 0, "the lock file is there again")
        defer { close(fd) }
        #expect(SharedStateFile.writesCounted(fd) == 1, "the write after the removal is counted in the new lock file")
        // Held here as another process would hold it: this process's next change waits for it.
        #expect(flock(fd, LOCK_EX) == 0)
        let wrote = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        onThread {
            try? store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 3] }
            wrote.store(true, ordering: .releasing)
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.2)
        let wroteWhileHeld = wrote.load(ordering: .acquiring)
        #expect(!wroteWhileHeld, "a change waits for the lock another holds")
        flock(fd, LOCK_UN)
        done.wait()
        #expect(try StateStore(path: path).read() == ["a": 3])
    }

    /// Each write is counted in the lock file, and a version of the file is told from another by that count too: two
    /// files alike to `stat` (a reused inode, the same size, one tick of a coarse clock) are not taken for one.
    @Test func eachWriteIsCountedAndTheCountTellsVersionsApart() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let store = StateStore(path: path)
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 1] }
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["a": 2] }
        let fd = open(path + ".lock", O_RDONLY | O_CLOEXEC)
        defer { close(fd) }
        #expect(SharedStateFile.writesCounted(fd) == 2)
        let stamp = timespec(tv_sec: 1_700_000_000, tv_nsec: 5)
        let one = SharedStateFile.Identity(writes: 2, device: 1, inode: 7, size: 10, modified: stamp, changed: stamp)
        let other = SharedStateFile.Identity(writes: 3, device: 1, inode: 7, size: 10, modified: stamp, changed: stamp)
        #expect(one != other, "alike to stat, written once more")
        #expect(
            one == SharedStateFile.Identity(writes: 2, device: 1, inode: 7, size: 10, modified: stamp, changed: stamp))
    }

    /// A batch's runs each check the file's sections as they start: a document that passed is not checked again, nor
    /// is one this process made from it by its own change (checked by construction); one another writer put in place
    /// is.
    @Test func aCheckHoldsForTheDocumentItPassedOnOnly() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let store = StateStore(path: path)
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["bahn": ["lastIntent": "pi_1"]] }
        let checks = Mutex(0)
        let file = SharedStateFile.at(path)
        @Sendable func load() throws(Diagnostic) -> StateFileRecords.Folded {
            do { return folded(try JSON.parse(Data(contentsOf: URL(fileURLWithPath: path)))) } catch {
                throw .data("unreadable")
            }
        }
        @Sendable func count(_: JSON) throws(Diagnostic) { checks.withLock { $0 += 1 } }
        _ = try file.read(load, check: count)
        _ = try file.read(load, check: count)
        _ = try file.read(load)
        #expect(checks.withLock { $0 } == 1, "the same document")
        try store.update { (doc: inout JSON) throws(Diagnostic) in doc = ["bahn": ["lastIntent": "pi_2"]] }
        _ = try file.read(load, check: count)
        #expect(checks.withLock { $0 } == 1, "this process changed the document it had checked")
        try Data(#"{"bahn": {"lastIntent": "pi_3"}}"#.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        _ = try file.read(load, check: count)
        #expect(checks.withLock { $0 } == 2, "another writer's document")
        // Another process puts a wrong-typed section in place: the next run is refused, whatever passed before.
        try Data(#"{"bahn": "x"}"#.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        #expect(throws: Diagnostic.self) { try store.checked() }
        // ... also after this process changed that document: a change is checked by construction only on a checked one.
        try Data(#"{"bahn": "x"}"#.utf8).write(to: URL(fileURLWithPath: path + ".next"), options: .atomic)
        _ = rename(path + ".next", path)
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            if case .object(var members) = doc {
                members["note"] = "kept"
                doc = .object(members)
            }
        }
        #expect(throws: Diagnostic.self) { try store.checked() }
    }
}

/// A document as a load or a write answers it, its bytes not counted (the file is written whole next time).
private func folded(_ document: JSON) -> StateFileRecords.Folded {
    StateFileRecords.Folded(document: document, layout: .init(documentBytes: 0))
}
