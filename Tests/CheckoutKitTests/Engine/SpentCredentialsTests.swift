import Foundation
import Testing

@testable import CheckoutKit

/// The record of used-up values stays bounded: a day of uses, all of the last 3 hours, of the older ones the newest.
@Suite struct SpentCredentialsTests {
    static func use(_ at: Date) -> JSON {
        ["kind": "Apple Pay token", "by": "a test", "at": .string(Timestamp.iso8601(at))]
    }

    @Test func usesOlderThanADayAreForgotten() {
        let now = Date()
        let uses: JSON.Object = [
            "old": Self.use(now.addingTimeInterval(-SpentCredentials.retention - 60)),
            "recent": Self.use(now.addingTimeInterval(-3600)),
            "undated": ["kind": "Apple Pay token", "by": "a test"],
        ]
        #expect(Set(SpentCredentials.pruned(uses, now: now).keys) == ["recent"])
    }

    @Test func ofTheOlderUsesOnlyTheNewestAreKept() {
        let now = Date()
        var uses: JSON.Object = [:]
        for i in 0..<(SpentCredentials.capacity + 5) {
            uses["u\(i)"] = Self.use(now.addingTimeInterval(-SpentCredentials.alwaysKept - 60 - Double(i)))
        }
        let kept = SpentCredentials.pruned(uses, now: now)
        #expect(kept.count == SpentCredentials.capacity)
        #expect(kept["u0"] != nil)
        #expect(kept["u\(SpentCredentials.capacity - 1)"] != nil)
        #expect(kept["u\(SpentCredentials.capacity)"] == nil)
    }

    /// A use still within the longest life of a single-use value is never forgotten, however many there are.
    @Test func youngUsesAreAllKept() {
        let now = Date()
        var uses: JSON.Object = [:]
        for i in 0..<(SpentCredentials.capacity + 5) {
            uses["young\(i)"] = Self.use(now.addingTimeInterval(-Double(i)))
        }
        uses["older"] = Self.use(now.addingTimeInterval(-SpentCredentials.alwaysKept - 60))
        let kept = SpentCredentials.pruned(uses, now: now)
        #expect(kept.count == SpentCredentials.capacity + 5)
        #expect(kept["older"] == nil)
    }

    /// A mark knows the oldest use of the record the last one wrote without reading every use: an older use marks made
    /// nothing to prune at first is still forgotten once the young ones alone fill the record.
    @Test func anOlderUseIsForgottenOnceYoungOnesFillTheRecordMarkByMark() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spent-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = StateStore(path: directory + "/state.json", redactor: Redactor())
        let older = Self.use(Date().addingTimeInterval(-SpentCredentials.alwaysKept - 600))
        try store.updateFile { (doc: inout JSON) throws(Diagnostic) in
            doc = ["spent": ["Apple Pay token sha256:older": older]]
        }
        for i in 0..<SpentCredentials.capacity {
            try SpentCredentials.mark("token-\(i)", kind: "Apple Pay token", by: "run \(i)", replay: nil, in: store)
            if i == 0 {
                #expect(
                    try store.readFile()["spent"]?["Apple Pay token sha256:older"] != nil, "kept while there is room")
            }
        }
        let spent = try #require(try store.readFile()["spent"]?.objectValue)
        #expect(spent.count == SpentCredentials.capacity)
        #expect(spent["Apple Pay token sha256:older"] == nil)
    }

    @Test func markingKeepsTheRecordBoundedInTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("spent-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = StateStore(path: directory + "/state.json", redactor: Redactor())
        let stale = Self.use(Date().addingTimeInterval(-2 * SpentCredentials.retention))
        try store.updateFile { (doc: inout JSON) throws(Diagnostic) in
            doc = ["spent": ["Apple Pay token sha256:old": stale]]
        }
        try SpentCredentials.mark("token-bytes", kind: "Apple Pay token", by: "Bahn's confirm", replay: nil, in: store)
        let spent = try #require(try store.readFile()["spent"]?.objectValue)
        #expect(spent.count == 1)
        #expect(spent.keys.first?.hasPrefix("Apple Pay token ") == true)
        #expect(try SpentCredentials.use(of: "token-bytes", kind: "Apple Pay token", in: store)?.by == "Bahn's confirm")
    }
}
