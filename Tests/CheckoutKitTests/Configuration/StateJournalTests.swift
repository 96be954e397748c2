import Foundation
import TestSupport
import Testing

@testable import CheckoutKit

/// A whole flow's run keeps its state changes in memory until a point where they must be on disk, and then writes
/// them in one write, merged member by member into what others wrote meanwhile.
@Suite struct StateJournalTests {
    /// The file as on disk, parsed apart from the store (nil when there is none).
    static func disk(_ path: String) throws -> JSON? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        return try StateFileRecords.fold(Data(contentsOf: URL(fileURLWithPath: path))).document
    }

    @Test func aRunsChangesStayInMemoryUntilCommittedThenTakeOneWrite() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let run = StateStore(path: path).ownRun("r1")
        let writes = SharedStateFile.at(path).writes
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try run.update { $0 = ["bahn": ["lastIntent": "pi_2"]] }
        try run.recordCaptures(["id": "pi_2"], flow: "f")
        try SpentCredentials.mark("tok", kind: "Apple Pay token", by: "test", replay: nil, in: run)
        #expect(try Self.disk(path) == nil, "nothing written yet")
        #expect(SharedStateFile.at(path).writes == writes)
        // The run reads its own changes; another store of the file does not see them yet.
        #expect(try run.read()["bahn"]?["lastIntent"] == "pi_2")
        #expect(try run.read()["captures"]?["f"]?["id"] == "pi_2")
        #expect(try SpentCredentials.use(of: "tok", kind: "Apple Pay token", in: run) != nil)
        #expect(try StateStore(path: path).readFile()["runs"] == nil)
        try run.commit()
        #expect(SharedStateFile.at(path).writes == writes + 1, "one write for all four changes")
        let file = try #require(try Self.disk(path))
        #expect(file["runs"]?["r1"]?["bahn"]?["lastIntent"] == "pi_2")
        #expect(file["captures"]?["f"]?["id"] == "pi_2")
        #expect(file["spent"]?.objectValue?.count == 1)
        try run.commit()
        #expect(SharedStateFile.at(path).writes == writes + 1, "nothing pending: no write")
    }

    @Test func fileWideMembersAreMergedIntoWhatOthersWroteMeanwhile() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let chain = StateStore(path: path)
        let kept = OpenOutcome(
            provider: "bahn", reference: "intent pi_other", replay: nil, effect: "the charge", settle: [], since: "t")
        let mine = OpenOutcome(
            provider: "bahn", reference: "intent pi_mine", replay: nil, effect: "the charge", settle: [], since: "t",
            run: "r1")
        try OpenOutcomes.record(kept, in: chain)
        let run = chain.ownRun("r1")
        try OpenOutcomes.record(mine, in: run)
        try SpentCredentials.mark("mine", kind: "nonce", by: "r1", replay: nil, in: run)
        // Meanwhile another run of the file writes its own.
        try SpentCredentials.mark("theirs", kind: "nonce", by: "r2", replay: nil, in: chain)
        try chain.scoped(run: "r2").update { $0 = ["bahn": ["lastIntent": "pi_r2"]] }
        try run.commit()
        var file = try #require(try Self.disk(path))
        #expect(Set(file["openOutcomes"]?.objectValue?.keys.map { $0 } ?? []) == [kept.key, mine.key])
        #expect(file["spent"]?.objectValue?.count == 2, "both uses")
        #expect(file["runs"]?["r2"]?["bahn"]?["lastIntent"] == "pi_r2", "the other run's scope kept")
        // A removal takes only its own member away.
        try OpenOutcomes.clear(provider: "bahn", in: run) { $0.key == mine.key }
        try run.commit()
        file = try #require(try Self.disk(path))
        #expect(file["openOutcomes"]?.objectValue?.keys.map { $0 } == [kept.key])
        try OpenOutcomes.clear(provider: "bahn", in: chain) { _ in true }
        #expect(try Self.disk(path)?["openOutcomes"] == nil, "an emptied section goes")
    }

    /// A clear takes its own provider's matches only, judged on the entries as the file holds them now: an entry
    /// written again under the same key is decoded again, not taken from an earlier read.
    @Test func aClearTakesOnlyItsProvidersMatchesAsTheFileHoldsThemNow() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = StateStore(path: dir + "/state.json")
        let bahn = OpenOutcome(
            provider: "bahn", reference: "intent pi_1", replay: nil, effect: "the charge", settle: [], since: "t")
        let centra = OpenOutcome(
            provider: "centra", reference: "order 1", replay: nil, effect: "the payment", settle: [], since: "t")
        try OpenOutcomes.record(bahn, in: store)
        try OpenOutcomes.record(centra, in: store)
        #expect(try OpenOutcomes.clear(provider: "bahn", in: store) { _ in true }.map(\.key) == [bahn.key])
        #expect(try OpenOutcomes.read(store).map(\.key) == [centra.key])
        var refund = centra
        refund.effect = "the refund"
        try OpenOutcomes.record(refund, in: store)
        #expect(try OpenOutcomes.clear(provider: "centra", in: store) { $0.effect == "the payment" }.isEmpty)
        #expect(
            try OpenOutcomes.clear(provider: "centra", in: store) { $0.effect == "the refund" }.map(\.key) == [
                centra.key
            ])
        #expect(try Self.disk(store.path)?["openOutcomes"] == nil)
    }

    @Test func aChangeBeyondTheRunsReachIsWrittenAtOnceWithWhatWasPending() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let run = StateStore(path: path).ownRun("r1")
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        let writes = SharedStateFile.at(path).writes
        try run.updateFile { (doc: inout JSON) throws(Diagnostic) in
            doc = JSONPath(components: [.key("centra")]).setting(["session": "s"], in: doc)
        }
        #expect(SharedStateFile.at(path).writes == writes + 1)
        let file = try #require(try Self.disk(path))
        #expect(file["centra"]?["session"] == "s")
        #expect(file["runs"]?["r1"]?["bahn"]?["lastIntent"] == "pi_1", "the pending change went with it")
        #expect(run.journal?.isEmpty == true)
    }

    /// A write that fails (here: a directory stands where the file goes) keeps the changes for the next try.
    @Test func aFailedCommitKeepsThePendingChanges() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let run = StateStore(path: path).ownRun("r1")
        try run.update { $0 = ["bahn": ["lastIntent": "pi_1"]] }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(throws: Diagnostic.self) { try run.commit() }
        #expect(run.journal?.isEmpty == false)
        try FileManager.default.removeItem(atPath: path)
        try run.commit()
        #expect(try Self.disk(path)?["runs"]?["r1"]?["bahn"]?["lastIntent"] == "pi_1")
    }

    /// A run that wrote only file-wide members still writes them as it finishes (it leaves no run record).
    @Test func finishingARunWithoutAScopeWritesWhatItKept() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let run = StateStore(path: path).ownRun("r1")
        try SpentCredentials.mark("tok", kind: "nonce", by: "r1", replay: nil, in: run)
        try run.finishRun()
        let file = try #require(try Self.disk(path))
        #expect(file["spent"]?.objectValue?.count == 1)
        #expect(file["runs"] == nil)
    }

    @Test func aDeltaHoldsTheRunsScopeAndMemberSectionsOnly() throws {
        let before: JSON = ["spent": ["a": ["at": "1"]], "runs": ["r1": ["bahn": ["x": 1]]]]
        // Its own scope and members: kept.
        let own = try #require(
            StateDelta(from: before, to: ["spent": ["b": ["at": "2"]], "runs": ["r1": ["bahn": ["x": 2]]]], run: "r1"))
        #expect(own.scope == ["bahn": ["x": 2]])
        #expect(own.members["spent"]?["a"] == .some(nil), "a removal")
        #expect(own.members["spent"]?["b"] == .some(["at": "2"]))
        // Anything else: nil, to be written at once.
        #expect(
            StateDelta(
                from: before, to: ["spent": before["spent"]!, "runs": ["r1": ["bahn": ["x": 1]], "r2": [:]]], run: "r1")
                == nil, "another run")
        #expect(
            StateDelta(from: before, to: ["spent": before["spent"]!, "runs": before["runs"]!, "bahn": [:]], run: "r1")
                == nil, "a chain section")
        #expect(
            StateDelta(from: before, to: ["spent": "x", "runs": before["runs"]!], run: "r1") == nil,
            "a section that is no object")
        #expect(
            StateDelta(from: before, to: ["spent": before["spent"]!, "runs": [:]], run: "r1") == nil,
            "its own scope removed")
        #expect(StateDelta(from: before, to: before, run: "r1")?.isEmpty == true)
        // Later changes win, and the whole applies onto a file others changed.
        var delta = own
        delta.absorb(
            try #require(
                StateDelta(
                    from: before, to: ["spent": ["a": ["at": "1"], "b": ["at": "3"]], "runs": before["runs"]!],
                    run: "r1")))
        #expect(delta.members["spent"]?["b"] == .some(["at": "3"]))
        #expect(delta.scope == ["bahn": ["x": 2]], "an unchanged scope leaves the last one")
        let applied = delta.applied(
            to: ["spent": ["a": ["at": "1"], "c": ["at": "0"]], "runs": ["r2": [:]]], run: "r1")
        #expect(
            applied == ["spent": ["b": ["at": "3"], "c": ["at": "0"]], "runs": ["r1": ["bahn": ["x": 2]], "r2": [:]]])
    }
}
