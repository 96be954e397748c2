import Foundation
import Synchronization
import TestSupport
import Testing

@testable import CheckoutKit

#if canImport(Glibc)
    import Glibc
#endif

/// The state file on disk: its document, then the records of the writes appended since, folded in as it is read.
@Suite struct StateFileRecordsTests {
    static func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    static func recordCount(_ data: Data) -> Int { data.filter { $0 == StateFileRecords.separator }.count }

    @Test(
        arguments: [
            (["a": 1, "b": ["x": 1, "y": 2]], ["a": 1, "b": ["x": 1, "y": 3, "z": 4]]),  // a member changed, one added
            (["a": 1, "b": ["x": 1, "y": 2]], ["b": ["y": 2]]),  // a section and a member removed
            (["a": "text"], ["a": ["now": "an object"]]),  // a section that becomes an object is set whole
            (["a": ["was": "an object"]], ["a": [1, 2]]),
            // a member replaced whole; a null section
            (["a": ["k": ["deep": 1]]], ["a": ["k": ["deep": 2]], "c": JSON.null]),
            ([:], ["spent": ["t 1": ["at": "2026"]]]),
        ] as [(JSON, JSON)])
    func aRecordTurnsTheDocumentBeforeIntoTheDocumentAfter(before: JSON, after: JSON) throws {
        let record = try #require(StateFileRecords.record(from: before.objectValue!, to: after.objectValue!))
        var folded = before
        #expect(StateFileRecords.apply(record, to: &folded))
        #expect(folded == after, "\(record)")
        // As the file holds it: one line after the separator, read back the same.
        let line = StateFileRecords.encoded(record)
        #expect(line.first == StateFileRecords.separator && line.last == UInt8(ascii: "\n"))
        #expect(line.dropFirst().dropLast().allSatisfy { $0 != UInt8(ascii: "\n") && $0 != StateFileRecords.separator })
    }

    @Test func documentsThatAreTheSameNeedNoRecord() {
        let document: JSON = ["a": 1, "spent": ["t": ["at": "x"]]]
        #expect(StateFileRecords.record(from: document.objectValue!, to: document.objectValue!) == nil)
        // Equal, though not the same storage.
        #expect(
            StateFileRecords.record(
                from: document.objectValue!, to: (try! JSON.parse(document.serialized())).objectValue!) == nil)
    }

    @Test func aFileIsItsDocumentWithEachRecordFoldedIn() throws {
        let document: JSON = ["bahn": ["lastIntent": "pi_1"], "spent": ["a": 1]]
        let second: JSON = ["bahn": ["lastIntent": "pi_2"], "spent": ["a": 1, "b": 2]]
        let third: JSON = ["spent": ["b": 2]]
        var data = document.serializedData(pretty: true, newline: true)
        let head = data.count
        let one = StateFileRecords.encoded(
            StateFileRecords.record(from: document.objectValue!, to: second.objectValue!)!)
        let two = StateFileRecords.encoded(StateFileRecords.record(from: second.objectValue!, to: third.objectValue!)!)
        data.append(contentsOf: one)
        data.append(contentsOf: two)
        let folded = try StateFileRecords.fold(data)
        #expect(folded.document == third)
        #expect(folded.layout == .init(documentBytes: head, recordBytes: one.count + two.count))
        #expect(folded.tornBytes == 0)
        // A plain document (every file written before records, and every file at rest) is read as it always was.
        let plain = try StateFileRecords.fold(document.serializedData(pretty: true, newline: true))
        #expect(plain.document == document && plain.layout.recordBytes == 0)
    }

    @Test func aLastRecordCutShortIsIgnored() throws {
        let document: JSON = ["a": 1]
        let next: JSON = ["a": 2]
        var data = document.serializedData(pretty: true, newline: true)
        let record = StateFileRecords.encoded(
            StateFileRecords.record(from: document.objectValue!, to: next.objectValue!)!)
        data.append(contentsOf: record)
        let whole = data
        for cut in [1, record.count / 2, record.count - 1] {
            var torn = whole
            torn.append(contentsOf: record.prefix(cut))
            let folded = try StateFileRecords.fold(torn)
            #expect(folded.document == next, "the records before it are folded in")
            #expect(folded.tornBytes == cut)
            #expect(folded.layout.totalBytes == whole.count)
        }
    }

    @Test func anUnreadableRecordBeforeTheLastIsACorruptFile() throws {
        var data = JSON.object(["a": 1]).serializedData(pretty: true, newline: true)
        data.append(contentsOf: [StateFileRecords.separator] + Array("{\"set\": \n".utf8))
        data.append(contentsOf: StateFileRecords.encoded(["set": ["a": 3]]))
        #expect(throws: StateFileRecords.Unreadable.self) { try StateFileRecords.fold(data) }
        // A record that changes the members of a section that is not an object does not fit.
        var misfit = JSON.object(["a": 1]).serializedData(pretty: true, newline: true)
        misfit.append(contentsOf: StateFileRecords.encoded(["in": ["a": ["set": ["x": 1]]]]))
        misfit.append(contentsOf: StateFileRecords.encoded(["set": ["a": 3]]))
        do {
            _ = try StateFileRecords.fold(misfit)
            Issue.record("a record that does not fit was folded in")
        } catch {
            guard case .record(let index, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(index == 1)
        }
        // Not a record at all.
        var unknown = JSON.object(["a": 1]).serializedData(pretty: true, newline: true)
        unknown.append(contentsOf: StateFileRecords.encoded(["replace": ["a": 2]]))
        unknown.append(contentsOf: StateFileRecords.encoded(["set": ["a": 3]]))
        #expect(throws: StateFileRecords.Unreadable.self) { try StateFileRecords.fold(unknown) }
    }

    /// A batch's runs append their writes as records; the command's end writes the file whole again, as plain JSON.
    @Test func aBatchRunAppendsAndTheCommandsEndWritesTheFileWhole() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try StateStore(path: path).update { $0 = ["bahn": ["lastIntent": "pi_0"]] }
        let first = try Self.bytes(path)
        let run = StateStore(path: path).ownRun("r1", batched: true)
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try SpentCredentials.mark("tok", kind: "Apple Pay token", by: "test", replay: nil, in: run)
        try run.commit()
        let appended = try Self.bytes(path)
        #expect(appended.prefix(first.count) == first, "the document is left as it was")
        #expect(Self.recordCount(appended) == 1)
        try run.finishRun()
        let finished = try Self.bytes(path)
        #expect(Self.recordCount(finished) == 2, "a batch run's finish is appended too")
        let folded = try StateFileRecords.fold(finished).document
        #expect(folded["bahn"]?["lastIntent"] == "pi_1", "promoted to the chain")
        #expect(folded["spent"]?.objectValue?.count == 1)
        #expect(try StateStore(path: path).readFile() == folded)
        StateStore.compactFiles()
        let rest = try Self.bytes(path)
        #expect(Self.recordCount(rest) == 0)
        #expect(try JSON.parse(rest) == folded)
        #expect(rest == folded.serializedData(pretty: true, newline: true))
    }

    /// Another process wrote the file after this one's last record: the end of this command leaves that file alone.
    @Test func theCommandsEndLeavesAFileAnotherWriterChangedSince() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try StateStore(path: path).update { $0 = ["a": 1] }
        let run = StateStore(path: path).ownRun("r1", batched: true)
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try run.commit()
        #expect(Self.recordCount(try Self.bytes(path)) == 1)
        // Another process's write, as it makes one: a new file renamed into place, then counted in the lock file.
        let theirs = Data("{\n  \"theirs\": true\n}\n".utf8)
        try theirs.write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        let fd = try SharedStateFile.openLock(path)
        defer { close(fd) }
        SharedStateFile.countWrite(fd)
        StateStore.compactFiles()
        #expect(try Self.bytes(path) == theirs)
    }

    /// A lone run's finish is its last write: it writes the file whole, so that the run costs two writes, not three.
    @Test func aLoneRunsFinishWritesTheFileWhole() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try StateStore(path: path).update { $0 = ["a": 1] }
        let run = StateStore(path: path).ownRun("r1")
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try run.commit()
        #expect(Self.recordCount(try Self.bytes(path)) == 1)
        try run.finishRun()
        let data = try Self.bytes(path)
        #expect(Self.recordCount(data) == 0)
        #expect(try JSON.parse(data)["bahn"]?["lastIntent"] == "pi_1")
    }

    /// Records stop once they outweigh the document (and a minimum): reading the file never costs more than twice it.
    @Test func recordsThatOutweighTheDocumentAreFoldedIntoAWholeWrite() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try StateStore(path: path).update { $0 = ["a": 1] }
        let run = StateStore(path: path).ownRun("r1", batched: true)
        var sawWhole = false
        for i in 0..<400 {
            try run.update { $0 = ["bahn": ["lastIntent": .string("pi_\(i)_" + String(repeating: "x", count: 100))]] }
            try run.commit()
            let data = try Self.bytes(path)
            let folded = try StateFileRecords.fold(data)
            #expect(folded.layout.recordBytes <= max(folded.layout.documentBytes, StateStore.recordRoom) + 400)
            if i > 0 && Self.recordCount(data) == 0 { sawWhole = true }
        }
        #expect(sawWhole, "the file was written whole again along the way")
    }

    /// A write whose document is the one the file already holds writes nothing: no new file, no write counted.
    @Test func aWriteThatChangesNothingWritesNothing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let store = StateStore(path: path)
        try store.update { $0 = ["a": 1] }
        var before = stat()
        var after = stat()
        stat(path, &before)
        let fd = try SharedStateFile.openLock(path)
        defer { close(fd) }
        let counted = SharedStateFile.writesCounted(fd)
        try store.update { $0 = ["a": 1] }
        stat(path, &after)
        #expect(after.st_ino == before.st_ino && after.st_size == before.st_size)
        #expect(SharedStateFile.writesCounted(fd) == counted)
        try store.update { $0 = ["a": 2] }
        #expect(SharedStateFile.writesCounted(fd) == counted + 1)
    }

    /// A secret learned after a part was written, found in it: the part is masked anew, and what the file held of it
    /// goes — the file is written whole, not left under a record.
    @Test func aSecretLearnedLaterIsNotLeftUnderARecord() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let redactor = Redactor()
        let secret = "zq8Hkq2VrTw9LmNpX4"
        try StateStore(path: path, redactor: redactor).update { $0 = ["notes": ["n1": .string("paid with \(secret)")]] }
        #expect(String(decoding: try Self.bytes(path), as: UTF8.self).contains(secret))
        redactor.register(secret)
        let run = StateStore(path: path, redactor: redactor).ownRun("r1", batched: true)
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try run.commit()
        let data = try Self.bytes(path)
        #expect(!String(decoding: data, as: UTF8.self).contains(secret))
        #expect(Self.recordCount(data) == 0, "written whole")
    }

    /// A file whose last record a crash cut short reads as it was before that record, with a note; the next write
    /// writes it whole, and the cut record is gone.
    @Test func aTornLastRecordIsIgnoredWithANoteAndTheNextWriteMendsIt() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        var data = JSON.object(["a": 1]).serializedData(pretty: true, newline: true)
        let record = StateFileRecords.encoded(["set": ["a": 2]])
        data.append(contentsOf: record)
        data.append(contentsOf: StateFileRecords.encoded(["set": ["a": 3]]).prefix(5))
        try data.write(to: URL(fileURLWithPath: path))
        let notes = Mutex<[String]>([])
        StateStore.notes.withLock { $0 = { note in notes.withLock { $0.append(note) } } }
        defer { StateStore.notes.withLock { $0 = nil } }
        let store = StateStore(path: path)
        #expect(try store.readFile() == ["a": 2])
        #expect(
            notes.withLock { $0 }.contains { $0.contains(path) && $0.contains("cut short") && $0.contains("ignored") })
        let run = store.ownRun("r1", batched: true)
        try run.update { $0 = ["b": 1] }
        try run.commit()
        let mended = try Self.bytes(path)
        #expect(Self.recordCount(mended) == 0, "written whole, not appended after the cut record")
        #expect(try JSON.parse(mended)["a"] == 2)
    }

    /// An append to a file that is not the length the lock holder knows (another writer did not lock) writes nothing:
    /// the caller writes the file whole.
    @Test func anAppendToAFileOfAnotherLengthWritesNothing() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try Data("{}\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try FileIO.append(Array("x".utf8), to: path, expected: 2, shown: path) == false)
        #expect(try Self.bytes(path) == Data("{}\n".utf8))
        #expect(try FileIO.append(Array("x".utf8), to: path, expected: 3, shown: path) == true)
        #expect(try Self.bytes(path) == Data("{}\nx".utf8))
    }
}
