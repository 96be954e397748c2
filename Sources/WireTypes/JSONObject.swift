import Foundation

extension JSON {
    /// A JSON object's members, kept in key order (the order `serialized()` writes them in), each key once.
    ///
    /// Not a hashed dictionary: the objects a checkout handles — responses, flow steps, the state file's sections —
    /// mostly have a handful of members, read a few times each. Hashing every key on every insert and lookup (and
    /// seeding a table per object) was a tenth of a checkout's instructions; a short sorted array is read by comparing
    /// a few keys, built from a parsed object by one pass (keys already in order, as every file this tool writes has
    /// them) or one small sort, and serialized without sorting. A large object (the state file's record of spent
    /// values) is searched by bisection. It reads like `Dictionary`: subscripts by key, `keys`, `values`, `mapValues`,
    /// `filter`, `merging`, and iteration as `(key:, value:)` pairs — in key order.
    public struct Object: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral,
        CustomStringConvertible
    {
        public typealias Element = (key: String, value: JSON)

        /// One member. (A struct, not a tuple: an array of tuples is copied and destroyed through generic code, which
        /// cost more than the hashing it replaced.)
        struct Member: Sendable {
            let key: String
            var value: JSON
        }

        /// Sorted by key (`precedes`: by their UTF-8 bytes), no key twice.
        private var members: [Member]

        public init() { members = [] }

        /// Members whose keys may come in any order and more than once: the last one given counts, as in a JSON text.
        public init<S: Sequence>(_ pairs: S) where S.Element == (String, JSON) {
            members = pairs.map { Member(key: $0.0, value: $0.1) }
            settle()
        }

        public init(dictionaryLiteral elements: (String, JSON)...) { self.init(elements) }

        /// Members as a hashed dictionary holds them.
        public init(_ dictionary: [String: JSON]) {
            members = dictionary.map { Member(key: $0.key, value: $0.value) }
            members.sort { Self.precedes($0.key, $1.key) }
        }

        /// Members as a parser read them, in the order written.
        init(parsed: [Member]) {
            members = parsed
            settle()
        }

        /// Sorts the members and drops all but the last of each key; a single pass when they already are in order.
        private mutating func settle() {
            var ordered = true
            var i = 1
            while i < members.count {
                if !Self.precedes(members[i - 1].key, members[i].key) {
                    ordered = false
                    break
                }
                i += 1
            }
            if ordered { return }
            // A few members (a response's objects come in the order their query asked for them) are sorted in place by
            // insertion, with no index array, closure or second array made; stable, so that of a key given twice the
            // last stays last.
            if members.count <= Self.sortedInPlace {
                for unsorted in 1..<members.count {
                    var at = unsorted
                    while at > 0 && Self.compare(members[at - 1].key, members[at].key) > 0 {
                        members.swapAt(at - 1, at)
                        at -= 1
                    }
                }
                // No key twice, as nearly always: done.
                guard (1..<members.count).contains(where: { Self.same(members[$0 - 1].key, members[$0].key) }) else {
                    return
                }
            }
            // A stable sort keeps members with the same key in the order given, so the last of each is the one kept.
            let sorted = members.indices.sorted { a, b in
                let order = Self.compare(members[a].key, members[b].key)
                return order < 0 || (order == 0 && a < b)
            }
            var kept: [Member] = []
            kept.reserveCapacity(sorted.count)
            for index in sorted {
                let member = members[index]
                if let last = kept.last, Self.same(last.key, member.key) {
                    kept[kept.count - 1] = member
                } else {
                    kept.append(member)
                }
            }
            members = kept
        }

        /// Up to how many members an object out of order is sorted by insertion.
        static let sortedInPlace = 16

        // MARK: Reading by key

        /// The order of keys: their UTF-8 bytes compared as unsigned bytes, which is the order of their code points
        /// (and `String`'s own order for text in normal form C, every key this tool or a server writes), as RFC 8259
        /// compares member names: code unit by code unit. Bytes are compared in one `memcmp`, where `String`'s `<`
        /// walked its grapheme rules in calls of its own: a bisection of the state file's record of spent values made
        /// of those calls a tenth of a batch's instructions.
        @inline(__always)
        public static func precedes(_ a: String, _ b: String) -> Bool { compare(a, b) < 0 }

        /// Whether two keys are the same bytes, told by their lengths first: most keys of one object differ in length.
        @inline(__always)
        static func same(_ a: String, _ b: String) -> Bool { a.utf8.count == b.utf8.count && compare(a, b) == 0 }

        /// Negative, zero or positive as `a`'s bytes come before, equal or after `b`'s.
        @inline(__always)
        static func compare(_ a: String, _ b: String) -> Int {
            let answer = a.utf8.withContiguousStorageIfAvailable { x in
                b.utf8.withContiguousStorageIfAvailable { y -> Int in
                    let common = Swift.min(x.count, y.count)
                    let order = common == 0 ? 0 : Int(memcmp(x.baseAddress!, y.baseAddress!, common))
                    return order != 0 ? order : x.count - y.count
                }
            }
            if let answer = answer ?? nil { return answer }
            // (Only a string not stored as UTF-8 — none that a parser or this code makes — is compared this way.)
            return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : (a.utf8.elementsEqual(b.utf8) ? 0 : 1)
        }

        /// Where `key` is, when it is there.
        @inline(__always)
        private func find(_ key: String) -> Int? {
            // A few members are compared one by one; more by bisection.
            if members.count <= 8 {
                for index in members.indices where Self.same(members[index].key, key) { return index }
                return nil
            }
            let (index, found) = slot(key)
            return found ? index : nil
        }

        /// Where `key` is, or where it would go to keep the order.
        private func slot(_ key: String) -> (index: Int, found: Bool) {
            Self.slot(of: key, among: members.count) { members[$0].key }
        }

        /// Where `key` is among `count` keys in an object's order (`keyAt(i)` the i-th), or where it would go to keep
        /// the order: an object's own members, or a list of keys kept beside one (the state file's rendered sections).
        @inline(__always)
        public static func slot(of key: String, among count: Int, _ keyAt: (Int) -> String) -> (index: Int, found: Bool)
        {
            var low = 0
            var high = count
            while low < high {
                let middle = (low + high) / 2
                if precedes(keyAt(middle), key) { low = middle + 1 } else { high = middle }
            }
            return (low, low < count && same(keyAt(low), key))
        }

        public subscript(key: String) -> JSON? {
            get {
                guard let index = find(key) else { return nil }
                return members[index].value
            }
            set {
                if let index = find(key) {
                    if let newValue { members[index].value = newValue } else { members.remove(at: index) }
                } else if let newValue {
                    members.insert(Member(key: key, value: newValue), at: slot(key).index)
                }
            }
        }

        @discardableResult
        public mutating func removeValue(forKey key: String) -> JSON? {
            guard let index = find(key) else { return nil }
            return members.remove(at: index).value
        }

        /// The keys, in order.
        public var keys: [String] { members.map(\.key) }
        /// The values, in the order of their keys.
        public var values: [JSON] { members.map(\.value) }

        // MARK: Making new objects

        public func mapValues(_ transform: (JSON) throws -> JSON) rethrows -> Object {
            var copy = self
            for i in copy.members.indices { copy.members[i].value = try transform(copy.members[i].value) }
            return copy
        }

        public func mapValues<T>(_ transform: (JSON) throws -> T) rethrows -> [String: T] {
            var result: [String: T] = [:]
            result.reserveCapacity(members.count)
            for member in members { result[member.key] = try transform(member.value) }
            return result
        }

        /// Each member's value made anew from its key and value, in one pass (no key is looked up or placed again).
        public func mapMembers(_ transform: (String, JSON) throws -> JSON) rethrows -> Object {
            var copy = self
            for i in copy.members.indices {
                copy.members[i].value = try transform(copy.members[i].key, copy.members[i].value)
            }
            return copy
        }

        /// Each member's value made anew where `transform` gives one (nil: it stays as it is), in one pass; nil when it
        /// gave none, so that an object in which nothing changed keeps its storage rather than being copied whole.
        public func replacingMembers(_ transform: (String, JSON) throws -> JSON?) rethrows -> Object? {
            var copy: Object?
            for i in members.indices {
                guard let value = try transform(members[i].key, members[i].value) else { continue }
                if copy == nil { copy = self }
                copy!.members[i].value = value
            }
            return copy
        }

        public func compactMapValues(_ transform: (JSON) throws -> JSON?) rethrows -> Object {
            var copy = Object()
            copy.members.reserveCapacity(members.count)
            for member in members {
                if let value = try transform(member.value) {
                    copy.members.append(Member(key: member.key, value: value))
                }
            }
            return copy
        }

        public func compactMapValues<T>(_ transform: (JSON) throws -> T?) rethrows -> [String: T] {
            var result: [String: T] = [:]
            for member in members { if let value = try transform(member.value) { result[member.key] = value } }
            return result
        }

        public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> Object {
            var copy = Object()
            copy.members = try members.filter { try isIncluded(($0.key, $0.value)) }
            return copy
        }

        public func merging(_ other: Object, uniquingKeysWith combine: (JSON, JSON) throws -> JSON) rethrows -> Object {
            var copy = self
            try copy.merge(other, uniquingKeysWith: combine)
            return copy
        }

        public mutating func merge(_ other: Object, uniquingKeysWith combine: (JSON, JSON) throws -> JSON) rethrows {
            for member in other.members {
                let (index, found) = slot(member.key)
                if found {
                    members[index].value = try combine(members[index].value, member.value)
                } else {
                    members.insert(member, at: index)
                }
            }
        }

        /// The values of `keys` — keys in this type's order, as an object's `keys` are — with nil for each this object
        /// lacks, and the keys it has that `keys` lacks: one walk of both, where a lookup each would bisect the object
        /// again for every key.
        public func values(ofOrdered keys: [String]) -> (values: [JSON?], others: [String]) {
            var values: [JSON?] = []
            values.reserveCapacity(keys.count)
            var others: [String] = []
            var i = 0
            for key in keys {
                while i < members.count, Self.precedes(members[i].key, key) {
                    others.append(members[i].key)
                    i += 1
                }
                if i < members.count, Self.same(members[i].key, key) {
                    values.append(members[i].value)
                    i += 1
                } else {
                    values.append(nil)
                }
            }
            others.append(contentsOf: members[i...].lazy.map(\.key))
            return (values, others)
        }

        /// What turns this object into `other`, by one walk of both in key order: each key `other` adds or gives
        /// another value (with that value), and each key it lacks (nil). A value handed on unchanged is told by its
        /// storage first. (A record of what a state-file write changed compares objects of hundreds of members.)
        public func changes(to other: Object) -> [(key: String, value: JSON?)] {
            var found: [(key: String, value: JSON?)] = []
            var i = 0
            var j = 0
            let old = members
            let new = other.members
            while i < old.count || j < new.count {
                if i < old.count, j < new.count, Self.same(old[i].key, new[j].key) {
                    if !new[j].value.isIdentical(to: old[i].value) && new[j].value != old[i].value {
                        found.append((new[j].key, new[j].value))
                    }
                    i += 1
                    j += 1
                } else if j == new.count || (i < old.count && Self.precedes(old[i].key, new[j].key)) {
                    found.append((old[i].key, nil))
                    i += 1
                } else {
                    found.append((new[j].key, new[j].value))
                    j += 1
                }
            }
            return found
        }

        // MARK: Collection, in key order

        public var startIndex: Int { 0 }
        public var endIndex: Int { members.count }
        public subscript(position: Int) -> Element { (members[position].key, members[position].value) }

        // MARK: Equality, hashing, text

        public static func == (a: Object, b: Object) -> Bool {
            guard a.members.count == b.members.count else { return false }
            // The very same storage (a section handed on unchanged) needs no walk, as a `Dictionary`'s does not.
            if a.members.withUnsafeBufferPointer({ x in
                b.members.withUnsafeBufferPointer { y in x.baseAddress == y.baseAddress }
            }) {
                return true
            }
            for (x, y) in zip(a.members, b.members) where !same(x.key, y.key) || x.value != y.value { return false }
            return true
        }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(members.count)
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }

        public var description: String { JSON.object(self).serialized() }

        /// A member that is itself an object (nil when absent or of another kind).
        public func object(_ key: String) -> Object? { self[key]?.objectValue }
        /// A member that is a string (a number is not a string).
        public func string(_ key: String) -> String? { self[key]?.stringValue }
        /// A member written as an integer — 12, not 12.00, 1.2e1 or "12" — and small enough to be exact: how a server
        /// reads a field its protocol types as an integer (an amount in minor units), where 12.00 is a different claim
        /// than 12.
        public func integer(_ key: String) -> Int? { self[key]?.integerAsWritten }
    }
}
