import Testing

@testable import WireTypes

/// `JSON.Object` keeps its members in key order and is read by comparing keys: held here to a hashed `Dictionary` doing
/// the same operations, for small objects (read one by one) and large ones (read by bisection).
@Suite struct JSONObjectTests {
    /// A reproducible sequence of keys: a few short ones many times, and long ones (not stored inline) now and then.
    struct Keys {
        var state: UInt64
        mutating func next(among count: Int) -> String {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let n = Int(state >> 33) % count
            return n % 7 == 0 ? "a-rather-long-key-that-is-not-small-\(n)" : "k\(n)"
        }
    }

    @Test(arguments: [3, 8, 9, 40, 600])
    func readsAndWritesAsADictionaryWould(size: Int) {
        var keys = Keys(state: UInt64(size))
        var object = JSON.Object()
        var model: [String: JSON] = [:]
        for step in 0..<(size * 6) {
            let key = keys.next(among: size)
            switch step % 5 {
            case 0, 1, 2:
                object[key] = .number(step)
                model[key] = .number(step)
            case 3:
                #expect(object.removeValue(forKey: key) == model.removeValue(forKey: key))
            default:
                object[key] = nil
                model[key] = nil
            }
            let probe = keys.next(among: size + 3)
            #expect(object[probe] == model[probe], "\(probe) after step \(step)")
        }
        #expect(object.count == model.count)
        #expect(object.keys == model.keys.sorted())
        for (key, value) in model { #expect(object[key] == value) }
        #expect(object == JSON.Object(model))
        #expect(object.hashValue == JSON.Object(model).hashValue)
    }

    /// Members given in any order are kept sorted, the last of a repeated key counting; keys already in order (every
    /// file this tool writes) are kept as given.
    @Test func membersAreSortedAndTheLastOfARepeatedKeyCounts() {
        let object = JSON.Object([("b", 1), ("a", 2), ("c", 3), ("a", 4), ("b", 5)])
        #expect(object.keys == ["a", "b", "c"])
        #expect(object["a"] == 4 && object["b"] == 5 && object["c"] == 3)
        #expect(JSON.object(object).serialized() == #"{"a":4,"b":5,"c":3}"#)
        #expect(JSON.Object([("a", 1), ("b", 2)]).keys == ["a", "b"])
    }

    /// Either side of the size sorted in place by insertion: members in a shuffled order, some keys given two or three
    /// times, come out sorted with the last of each counting — parsed or made — as a `Dictionary` fed the same would.
    @Test(arguments: [2, 5, JSON.Object.sortedInPlace, JSON.Object.sortedInPlace + 1, 40])
    func shuffledMembersWithRepeatsSettleAsADictionaryWould(size: Int) throws {
        var keys = Keys(state: UInt64(size) &* 31)
        var pairs: [(String, JSON)] = []
        var model: [String: JSON] = [:]
        for step in 0..<size {
            // Most keys once, now and then one given again.
            let key = step % 4 == 3 ? pairs[step / 2].0 : keys.next(among: size * 5) + "-\(step)"
            pairs.append((key, .number(step)))
            model[key] = .number(step)
        }
        let made = JSON.Object(pairs)
        #expect(made.keys == model.keys.sorted { JSON.Object.precedes($0, $1) })
        #expect(made == JSON.Object(model))
        let text = "{" + pairs.map { "\"\($0.0)\":\($0.1.serialized())" }.joined(separator: ",") + "}"
        #expect(try JSON.parse(text) == .object(JSON.Object(model)), "\(text)")
    }

    /// An object whose members a transform left alone is not copied: `replacingMembers` answers nil, and a changed
    /// member changes only itself.
    @Test func replacingMembersChangesOnlyWhatTheTransformGives() {
        let object: JSON.Object = ["a": 1, "b": "two", "c": [3]]
        #expect(object.replacingMembers { _, _ in nil } == nil)
        let changed = object.replacingMembers { key, _ in key == "b" ? "2" : nil }
        #expect(changed == ["a": 1, "b": "2", "c": [3]])
        #expect(object == ["a": 1, "b": "two", "c": [3]], "the original stays as it was")
    }

    @Test func equalityComparesValuesNotJustKeys() {
        let a: JSON.Object = ["x": 1, "y": "z"]
        #expect(a == ["y": "z", "x": 1])
        #expect(a != ["x": 1, "y": "w"])
        #expect(a != ["x": 1])
        #expect(a != ["x": 1, "w": "z"])
    }

    /// `changes(to:)` is what a state-file record is made of: every member added, changed or removed, and nothing else.
    @Test(arguments: [4, 50])
    func changesListExactlyWhatDiffers(size: Int) {
        var before = JSON.Object()
        for i in 0..<size { before["m\(i)"] = ["at": .number(i)] }
        var after = before
        after["m1"] = ["at": -1]
        after["m\(size - 1)"] = nil
        after["m0"] = nil
        after["a-new"] = 7
        after["z-new"] = 8
        after["m2"] = ["at": 2]  // the same value in other storage
        let changes = before.changes(to: after)
        #expect(changes.map(\.key) == ["a-new", "m0", "m1", "m\(size - 1)", "z-new"])
        #expect(changes.map(\.value) == [7, nil, ["at": -1], nil, 8])
        #expect(before.changes(to: before).isEmpty)
        var replayed = before
        for (key, value) in changes { replayed[key] = value }
        #expect(replayed == after)
    }

    @Test func mapFilterAndMergeKeepTheOrder() {
        let object: JSON.Object = ["c": 3, "a": 1, "b": 2]
        #expect(object.mapValues { JSON.number(($0.intValue ?? 0) * 10) }.values == [10, 20, 30])
        #expect(object.filter { $0.key != "b" }.keys == ["a", "c"])
        #expect(object.merging(["b": 20, "d": 4]) { _, new in new } == ["a": 1, "b": 20, "c": 3, "d": 4])
        #expect(object.compactMapValues { $0 == 2 ? JSON?.none : $0 }.keys == ["a", "c"])
        #expect(object.map(\.key) == ["a", "b", "c"])
        #expect(
            object.mapMembers { key, value in .string(key + value.interpolationText) }.values == ["a1", "b2", "c3"])
    }

    /// Keys are ordered by their UTF-8 bytes (code point order), a key that is a prefix of another first.
    @Test func keysAreInTheOrderOfTheirBytes() {
        let object = JSON.Object([
            ("b", 1), ("é", 2), ("ab", 3), ("a", 4), ("Z", 5), ("z", 6), ("a-rather-long-key-that-is-not-small", 7),
        ])
        #expect(object.keys == ["Z", "a", "a-rather-long-key-that-is-not-small", "ab", "b", "z", "é"])
        #expect(JSON.Object.precedes("a", "ab") && !JSON.Object.precedes("ab", "a") && !JSON.Object.precedes("a", "a"))
        #expect(object["é"] == 2 && object["e"] == nil)
    }

    /// A walk of ordered keys finds what a lookup of each would, and lists the members the keys left out.
    @Test(arguments: [5, 60])
    func orderedKeysAreFoundInOneWalk(size: Int) {
        var object = JSON.Object()
        for i in stride(from: 0, to: size, by: 2) { object["m\(i)"] = .number(i) }
        let keys = (0..<size).map { "m\($0)" }.filter { $0.hasSuffix("0") || $0.hasSuffix("1") }.sorted {
            JSON.Object.precedes($0, $1)
        }
        let (values, others) = object.values(ofOrdered: keys)
        #expect(values == keys.map { object[$0] })
        #expect(others == object.keys.filter { !keys.contains($0) })
    }
}
