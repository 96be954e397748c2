import Foundation
import WireTypes

/// The state file as it lies on disk (docs/architecture.md, "The state file's journal"): the document, written whole,
/// then zero or more records, each the change one durable write made to it.
///
/// A batch's writes change a few members of a file that grows with every token it spends; rewriting the whole file
/// for each cost more than the checkout itself at a thousand runs. A write appends a record instead — `RS` (0x1E), the
/// change as one line of compact JSON, `LF`, as in RFC 7464's JSON text sequences — flushed with `fdatasync`, and the
/// file is written whole again (atomically, as before) when its records outweigh the document or the command ends, so
/// a file at rest is the plain JSON it always was. No JSON text can hold a raw 0x1E (the serializer escapes control
/// characters), so the first one ends the document.
///
/// A record sets and removes top-level sections, and members of sections that are objects:
/// `{"set": {section: value}, "unset": [section], "in": {section: {"set": {member: value}, "unset": [member]}}}`,
/// each part only when it has something. Reading folds the records onto the document in order. A last record cut short
/// (no `LF`, or not JSON: a crash in the middle of its write, which then never returned) is ignored with a note: the
/// change it held was never confirmed to anyone. Any other record that does not read is a corrupt file (65).
enum StateFileRecords {
    static let separator: UInt8 = 0x1E

    /// A file read: the document with its records folded in, and how its bytes divide.
    struct Folded {
        var document: JSON
        var layout: Layout
        /// The bytes of a last record cut short, ignored (0: none).
        var tornBytes = 0
    }

    /// How a file's bytes divide: the document written whole, and the records after it.
    struct Layout: Equatable {
        var documentBytes: Int
        var recordBytes = 0
        var totalBytes: Int { documentBytes + recordBytes }
    }

    enum Unreadable: Error {
        /// The document, before any record, is not JSON.
        case document(JSON.ParseError)
        /// Record `index` (1-based) is not a record, or does not fit the document as folded so far.
        case record(index: Int, reason: String)
    }

    /// Reads a file's bytes: the document and each complete record folded onto it.
    static func fold(_ bytes: Data) throws(Unreadable) -> Folded {
        let end = bytes.firstIndex(of: separator) ?? bytes.endIndex
        var document: JSON
        do { document = try JSON.parse(bytes[bytes.startIndex..<end]) } catch { throw .document(error) }
        var folded = Folded(document: document, layout: Layout(documentBytes: end - bytes.startIndex))
        var start = end
        var index = 0
        while start < bytes.endIndex {
            index += 1
            let next = bytes[(start + 1)...].firstIndex(of: separator) ?? bytes.endIndex
            let isLast = next == bytes.endIndex
            let text = bytes[(start + 1)..<next]
            let record: JSON?
            if text.last == UInt8(ascii: "\n") { record = try? JSON.parse(text) } else { record = nil }
            guard let record else {
                if isLast {
                    folded.tornBytes = next - start
                    break
                }
                throw .record(index: index, reason: "not a complete JSON record")
            }
            guard apply(record, to: &document) else {
                throw .record(
                    index: index, reason: "it does not fit the document (a section it changes is not an object)")
            }
            folded.layout.recordBytes += next - start
            start = next
        }
        folded.document = document
        return folded
    }

    /// The record that turns the document `before` into `after`; nil when they are the same. Parts are compared by
    /// storage first, so a section handed on unchanged costs one comparison, and a changed one a comparison per member.
    static func record(from before: JSON.Object, to after: JSON.Object) -> JSON? {
        let record = changes(from: before, to: after, intoObjects: true)
        return record.isEmpty ? nil : .object(record)
    }

    /// What is set and removed going from `before` to `after`; with `intoObjects` (the document's sections), a part
    /// that is an object on both sides by the members set and removed in it (`in`), any other part whole.
    private static func changes(from before: JSON.Object, to after: JSON.Object, intoObjects: Bool) -> JSON.Object {
        var set: JSON.Object = [:]
        var unset: [JSON] = []
        var within: JSON.Object = [:]
        for (key, value) in before.changes(to: after) {
            guard let value else {
                unset.append(.string(key))
                continue
            }
            if intoObjects, case .object(let members) = value, case .object(let previous)? = before[key] {
                within[key] = .object(changes(from: previous, to: members, intoObjects: false))
            } else {
                set[key] = value
            }
        }
        var change: JSON.Object = [:]
        if !set.isEmpty { change["set"] = .object(set) }
        if !unset.isEmpty { change["unset"] = .array(unset) }  // in key order, as `changes(to:)` walks them
        if !within.isEmpty { change["in"] = .object(within) }
        return change
    }

    /// Applies a record to a document; false when it is not a record or does not fit (a member change to a section
    /// that is not an object).
    static func apply(_ record: JSON, to document: inout JSON) -> Bool {
        guard case .object(let parts) = record, case .object(var top) = document,
            parts.keys.allSatisfy({ ["set", "unset", "in"].contains($0) })
        else { return false }
        document = .null  // so that the sections are changed in place, not copied
        guard apply(set: parts["set"], unset: parts["unset"], to: &top) else { return false }
        switch parts["in"] {
        case nil: break
        case .object(let sections)?:
            for (section, change) in sections {
                var members: JSON.Object
                switch top[section] {
                case nil: members = [:]
                case .object(let existing)?: members = existing
                default: return false
                }
                top[section] = nil  // so that the members are changed in place, not copied
                guard case .object(let inner) = change, inner.keys.allSatisfy({ $0 == "set" || $0 == "unset" }),
                    apply(set: inner["set"], unset: inner["unset"], to: &members)
                else { return false }
                top[section] = .object(members)
            }
        default: return false
        }
        document = .object(top)
        return true
    }

    private static func apply(set: JSON?, unset: JSON?, to members: inout JSON.Object) -> Bool {
        switch unset {
        case nil: break
        case .array(let keys)?:
            for key in keys {
                guard let key = key.stringValue else { return false }
                members[key] = nil
            }
        default: return false
        }
        switch set {
        case nil: break
        case .object(let values)?: for (key, value) in values { members[key] = value }
        default: return false
        }
        return true
    }

    /// A record as the file holds it: the separator, one line of compact JSON, a newline.
    static func encoded(_ record: JSON) -> [UInt8] {
        var bytes = [separator]
        record.write(into: &bytes, pretty: false, indent: 0)
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }
}
