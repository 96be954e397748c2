import WireTypes

#if canImport(Glibc)
    import Glibc
#endif

/// A part of the state file as last written: the value given, the value written (redacted, kept credentials
/// restored), its bytes, and the redactor's generation they were masked at. The document, and a top-level section that
/// is an object, are kept member by member (`members`): the record of spent values gains one entry per run and keeps
/// the rest, so a write costs the members that changed, not all of them. A class, so that a section of a thousand
/// members is handed round and kept without copying each member's parts.
final class RenderedSection {
    let input: JSON
    let output: JSON
    /// The part's text; for an object kept member by member, nil until first asked for (`bytes`), since a write that
    /// appends a record to the file needs only the members that changed, not the whole text.
    private var text: [UInt8]?
    /// The part's text before masking: a secret learned later is looked for here, where masking cannot have cut it.
    let inputBytes: [UInt8]
    /// Whether that text holds encoded JSON (a JWS, a 3DS challenge token: `eyJ` is `{"` in base64), which is masked
    /// again whenever secrets were learned since, since what it hides is encoded where a search cannot see it.
    let holdsEncodedJSON: Bool
    /// For an object of many members kept member by member: every run of bytes its members' texts hold, so that a
    /// secret learned since is looked for only in objects where it may occur. Taken, like `ordered`, by the rendering
    /// that renders the object again.
    fileprivate(set) var filter: PrefixFilter?
    /// The generation the part was masked at. For an object kept member by member, the one all its members were last
    /// checked at: a member unchanged since is masked right as of the later of its own and this one.
    let generation: Int
    /// An object's keys in the order written (sorted, so that a write with one member more sorts none again) and its
    /// members' parts in that order, every one present (optional only so that a rendering can make room for new ones
    /// without converting the array); nil for a part that is not an object kept member by member. Taken by the
    /// rendering that renders the object again, which changes them in place.
    fileprivate(set) var keys: [String]
    fileprivate(set) var ordered: [RenderedSection?]?
    /// `"key": ` as this part is written under its parent.
    let keyBytes: [UInt8]
    /// How many parts of it are written otherwise than given (masked, or a kept credential restored): none, and the
    /// written form is the value given, the very same storage.
    let masked: Int
    /// For an object kept member by member: how many of its members' texts hold encoded JSON (`holdsEncodedJSON`),
    /// which are masked again whenever secrets were learned since.
    let encoded: Int
    /// How deep the part lies in the document (0: the document itself), for the indentation of its text.
    let depth: Int

    init(
        input: JSON, output: JSON, bytes: [UInt8]?, inputBytes: [UInt8], generation: Int, keys: [String] = [],
        ordered: [RenderedSection?]? = nil, keyBytes: [UInt8], masked: Int, encoded: Int = 0, depth: Int = 0
    ) {
        self.input = input
        self.output = output
        self.text = bytes
        self.depth = depth
        self.inputBytes = inputBytes
        holdsEncodedJSON = Bytes.occurs(StateStore.encodedJSON, in: inputBytes)
        self.generation = generation
        self.keys = keys
        self.ordered = ordered
        self.keyBytes = keyBytes
        self.masked = masked
        self.encoded = encoded
    }

    /// The part's text as the document's pretty serialization has it, its members' put together the first time it is
    /// asked for. Asked only of the rendering that holds the members (a later one takes them, and keeps the text).
    var bytes: [UInt8] {
        if let text { return text }
        guard let ordered else { preconditionFailure("the text of a rendering whose members a later one took") }
        var bytes: [UInt8] = [UInt8(ascii: "{")]
        for (i, part) in ordered.enumerated() {
            let part = part!
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * (depth + 1)))
            bytes.append(contentsOf: part.keyBytes)
            bytes.append(contentsOf: part.bytes)
        }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        bytes.append(UInt8(ascii: "}"))
        text = bytes
        return bytes
    }

    /// The text when it has been put together (or was given).
    fileprivate var textIfAny: [UInt8]? { text }

    /// An object's parts by key.
    var members: [String: RenderedSection]? {
        ordered.map {
            Dictionary(uniqueKeysWithValues: zip(keys, $0).compactMap { key, part in part.map { (key, $0) } })
        }
    }

    /// Whether `value` is what this part was rendered from, or what it was rendered to: the very same storage first (a
    /// document this process wrote hands its parts back), member by member only then.
    func holds(_ value: JSON) -> Bool {
        value.isIdentical(to: output) || value.isIdentical(to: input) || value == input || value == output
    }
}

/// The secret forms learned since a generation, asked of the redactor once per generation in one rendering: the parts
/// of a section were mostly masked at the same one, and each would otherwise copy the same list out of the redactor.
/// A list holds for a part checked at `current` only if it was taken at `current` or later (masking a part can teach
/// the redactor more while the rest are rendered).
final class LearnedForms {
    private let redactor: Redactor?
    private var lists: [Int: (forms: [[UInt8]], taken: Int)] = [:]
    /// Whether a part given as it was is written otherwise now (a secret learned since occurs in it).
    var remasked = false

    init(redactor: Redactor?) { self.redactor = redactor }

    func since(_ generation: Int, current: Int) -> [[UInt8]] {
        if let list = lists[generation], list.taken >= current { return list.forms }
        let taken = redactor?.generation ?? 0
        let forms = redactor?.forms(since: generation) ?? []
        lists[generation] = (forms, taken)
        return forms
    }
}

/// The file as last written, and the redactor it was masked by (generations of another are no measure).
struct RenderCache {
    var owner: ObjectIdentifier?
    /// The document, member by member; nil when it was last judged as a whole.
    var document: RenderedSection?
    /// The text of a document last judged as a whole.
    var wholeText: [UInt8] = []
    /// Whether the last rendering masked anew a part given as it was: what the file holds of it must go, so the file is
    /// written whole, not appended to.
    var remasked = false
}

extension StateStore {
    /// The file's text and the document it holds, redacted (kept credentials restored), put together part by part.
    /// A part given again as it was — the same storage, in or out of the redactor, so the check costs nothing — is not
    /// masked or serialized again unless a secret learned since occurs in its text: a batch's runs rewrite their own
    /// scopes a dozen times each while the record of spent values, hundreds of entries, stays as it was. The bytes are
    /// the same as the whole document's pretty serialization (a test holds them to it).
    func render(_ document: JSON, reusing store: inout RenderCache) -> (written: JSON, bytes: [UInt8]) {
        let written = renderForm(document, reusing: &store)
        return (written, text(of: store))
    }

    /// The file's text as last rendered into `store`, with its final newline: put together only now, when it is asked.
    func text(of store: RenderCache) -> [UInt8] {
        (store.document?.bytes ?? store.wholeText) + [UInt8(ascii: "\n")]
    }

    /// `render` without the text: the document as written, member by member, the text left to be put together when a
    /// whole write asks for it (`text(of:)`).
    func renderForm(_ document: JSON, reusing store: inout RenderCache) -> JSON {
        let owner = redactor.map(ObjectIdentifier.init)
        if store.owner != owner { store = RenderCache(owner: owner) }
        guard case .object(let members) = document, Self.splittable(members) else {
            // Judged as a whole, as it always was (an object whose members' masking depends on each other, or not an
            // object at all).
            store.document = nil
            store.remasked = true
            let (written, bytes) = wholeDocument(document)
            store.wholeText = Array(bytes.dropLast())
            return written
        }
        let learned = LearnedForms(redactor: redactor)
        // Masking a part can teach the redactor a secret (a value under a sensitive key) that another part holds: go
        // round again until a whole pass learns nothing, as masking the whole document at once would.
        var rendered = renderObject(
            members, value: document, at: [], reusing: store.document, keyBytes: [], in: document,
            learned: learned)
        // Every part is masked right as of the generation the pass began at; one learned during it needs another pass.
        for _ in 0..<8 where rendered.generation != redactor?.generation ?? 0 {
            rendered = renderObject(
                members, value: document, at: [], reusing: rendered, keyBytes: [], in: document,
                learned: learned)
        }
        store.document = rendered
        store.wholeText = []
        store.remasked = learned.remasked
        return rendered.output
    }

    /// An object `path.count` levels deep (`value`), member by member, each reused from `known` where it can be: the
    /// keys in last time's order with the new ones merged in, and the written form patched where a member changed.
    /// `known` gives up its parts, which are changed in place. Given the very object it was rendered from (a write that
    /// changed another section), no member is looked up; otherwise each is looked up once, and once more only when
    /// members were added.
    private func renderObject(
        _ members: JSON.Object, value: JSON, at path: [String], reusing known: RenderedSection?, keyBytes: [UInt8],
        in document: JSON, learned: LearnedForms
    ) -> RenderedSection {
        let generation = redactor?.generation ?? 0
        var keys = known?.keys ?? []
        var parts: [RenderedSection?] = known?.ordered ?? []
        known?.ordered = nil
        known?.keys = []
        var masked = known?.masked ?? 0
        var encoded = known?.encoded ?? 0
        // The written members where any is written otherwise than given; taken up only then.
        var outputs = masked > 0 ? known?.output.objectValue : nil
        var changed = known == nil
        var filter = known?.filter
        known?.filter = nil
        // Each member's value: the one each part holds when the object is the very one rendered last time.
        var values: [JSON?] = []
        // The members to render again; nil: every one, each reused where it can be.
        var visit: [Int]?
        if !path.isEmpty, let known, let filter, encoded == 0, case .object(let before) = known.input,
            !learned.since(known.generation, current: generation).contains(where: filter.mayHold)
        {
            // A section of many members in none of which a secret learned since may occur: only the members its changes
            // name are rendered, found by one walk of the object as it was and as it is (or none, given the very same);
            // the others stay as they are, not looked at one by one (a walk of each member's parts was a checkout's
            // largest cost in the state file's writes). Not the document itself: its sections that are objects are
            // kept member by member, their texts in no filter but their own.
            var marked: [Int] = []
            for (key, member) in value.isIdentical(to: known.input) ? [] : before.changes(to: members) {
                // The changes come in key order, so a member added or removed moves only those after it.
                let (at, found) = JSON.Object.slot(of: key, among: keys.count) { keys[$0] }
                if member != nil {
                    if !found {
                        keys.insert(key, at: at)
                        parts.insert(nil, at: at)
                    }
                    marked.append(at)
                } else if found {
                    if let gone = parts[at] {
                        if gone.masked > 0 { masked -= 1 }
                        if gone.holdsEncodedJSON { encoded -= 1 }
                    }
                    outputs?[key] = nil
                    keys.remove(at: at)
                    parts.remove(at: at)
                }
                changed = true
            }
            visit = marked
        } else if let known, value.isIdentical(to: known.input) {
            values = parts.map { $0?.input }
        } else {
            let looked = members.values(ofOrdered: keys)
            values = looked.values
            var found = values.count
            if values.contains(where: { $0 == nil }) {
                changed = true
                var kept = 0
                for i in keys.indices {
                    guard let member = values[i] else {
                        if let gone = parts[i] {
                            if gone.masked > 0 { masked -= 1 }
                            if gone.holdsEncodedJSON { encoded -= 1 }
                        }
                        outputs?[keys[i]] = nil
                        continue
                    }
                    (keys[kept], parts[kept], values[kept]) = (keys[i], parts[i], member)
                    kept += 1
                }
                keys.removeLast(keys.count - kept)
                parts.removeLast(parts.count - kept)
                values.removeLast(values.count - kept)
                found = kept
            }
            if members.count > found {
                changed = true
                (keys, parts, values) = Self.merging(
                    (keys, parts, values), looked.others.map { ($0, nil, members[$0]) })
            }
        }
        // An object of many members (the record of spent values) is looked at through its filter: of the secrets
        // learned since it was last checked, only those that may occur in a member are looked for, member by member.
        // The filter is made again, larger, once the object has grown past a few dozen members (the record of spent
        // values grows by one a run; the runs kept stay at a few dozen).
        if keys.count >= Self.filteredMembers,
            filter.map({ $0.bits < Self.largeFilterBits && keys.count >= 32 }) ?? true
        {
            var made = PrefixFilter(bits: keys.count >= 32 ? Self.largeFilterBits : 16)
            for case let part? in parts { made.insertEvery(in: part.inputBytes) }
            filter = made
        }
        var candidates: (generation: Int, forms: [[UInt8]])?
        for i in visit ?? Array(keys.indices) {
            let key = keys[i]
            let value = visit == nil ? values[i] ?? members[key]! : members[key]!
            var mayOccur: [[UInt8]]?
            if let filter, let since = known?.generation {
                let current = redactor?.generation ?? 0
                if candidates?.generation != current {
                    candidates = (current, learned.since(since, current: current).filter(filter.mayHold))
                }
                mayOccur = candidates?.forms
            }
            let (part, reused) = renderPart(
                value, key: key, in: members, at: path, reusing: parts[i],
                checkedAt: known?.generation, mayOccur: mayOccur, document: document, learned: learned)
            if reused { continue }
            filter?.insertEvery(in: part.inputBytes)
            let before = parts[i]
            parts[i] = part
            changed = true
            masked += (part.masked > 0 ? 1 : 0) - ((before?.masked ?? 0) > 0 ? 1 : 0)
            encoded += (part.holdsEncodedJSON ? 1 : 0) - (before?.holdsEncodedJSON == true ? 1 : 0)
            if masked > 0 && outputs == nil {
                // The first member written otherwise than given: from now on the written form is every member's.
                outputs = JSON.Object(zip(keys, parts).compactMap { key, part in part.map { (key, $0.output) } })
            } else {
                outputs?[key] = part.output
            }
        }
        if masked == 0 { outputs = nil }
        // The text is put together when it is asked for (`RenderedSection.bytes`); unchanged, it is the one known.
        let text: [UInt8]? = !changed ? known?.textIfAny : keys.isEmpty ? Array("{}".utf8) : nil
        let rendered = RenderedSection(
            input: value, output: outputs.map(JSON.object) ?? value, bytes: text, inputBytes: [],
            generation: generation, keys: keys, ordered: parts, keyBytes: keyBytes, masked: masked, encoded: encoded,
            depth: path.count)
        rendered.filter = filter
        return rendered
    }

    /// From how many members an object is looked at through a filter (and rendered by its changes alone): below it,
    /// looking in each member costs less than making the filter. The runs kept (twenty, and those running) pass it:
    /// each write changes one or two of them while secrets are learned all the time.
    static let filteredMembers = 8
    static let largeFilterBits = 20

    /// Two lists sorted by key, with distinct keys, as one sorted list.
    private static func merging<A, B>(_ a: ([String], [A], [B]), _ b: [(String, A, B)]) -> ([String], [A], [B]) {
        guard !b.isEmpty else { return a }
        var merged: ([String], [A], [B]) = ([], [], [])
        let count = a.0.count + b.count
        merged.0.reserveCapacity(count)
        merged.1.reserveCapacity(count)
        merged.2.reserveCapacity(count)
        var i = 0
        var j = 0
        while i < a.0.count || j < b.count {
            if j == b.count || i < a.0.count && JSON.Object.precedes(a.0[i], b[j].0) {
                merged.0.append(a.0[i])
                merged.1.append(a.1[i])
                merged.2.append(a.2[i])
                i += 1
            } else {
                merged.0.append(b[j].0)
                merged.1.append(b[j].1)
                merged.2.append(b[j].2)
                j += 1
            }
        }
        return merged
    }

    /// A member's part: reused (true) when `known` holds `value` and no secret learned since it was last checked — at
    /// its own generation or its parent's (`checkedAt`), whichever is later — occurs in its text.
    /// `mayOccur`: the secrets learned since the parent was checked that its filter says may occur in some member
    /// (the others occur in none), when it has a filter.
    private func renderPart(
        _ value: JSON, key: String, in parent: JSON.Object, at path: [String], reusing known: RenderedSection?,
        checkedAt parentGeneration: Int?, mayOccur: [[UInt8]]? = nil, document: JSON,
        learned: LearnedForms
    ) -> (RenderedSection, reused: Bool) {
        let generation = redactor?.generation ?? 0
        var keyBytes: [UInt8] = []
        if let known {
            keyBytes = known.keyBytes
        } else {
            JSON.appendQuoted(key, to: &keyBytes)
            keyBytes.append(contentsOf: ": ".utf8)
        }
        // A top-level section that is an object goes member by member, unless it is a secret as a whole.
        // (nor shaped as an Apple Pay token, whose `data` is judged by its siblings).
        if path.isEmpty, case .object(let members) = value, !Redactor.isSensitive(key, in: parent),
            Self.splittable(members)
        {
            let object = known?.ordered != nil ? known : nil
            if let object, object.generation == generation, object.holds(value) { return (object, true) }
            return (
                renderObject(
                    members, value: value, at: [key], reusing: object, keyBytes: keyBytes, in: document,
                    learned: learned), false
            )
        }
        if let known, known.ordered == nil, known.holds(value) {
            let checked = max(known.generation, parentGeneration ?? known.generation)
            if checked == generation { return (known, true) }
            // Secrets were learned since: the part is masked alike unless one of them occurs in its text (in every form
            // it may take there: the JSON-escaped one is among the forms). Its parent, written at this generation,
            // then stands for it.
            // A part holding encoded JSON (a JWS, a 3DS challenge token: `eyJ` is `{"` in base64) is masked again,
            // since what it hides is encoded where a search cannot see it. (Those learned since the parent was checked
            // are the same or more than those since this part was.)
            if !known.holdsEncodedJSON,
                !(mayOccur ?? learned.since(checked, current: generation)).contains(where: {
                    Bytes.occurs($0, in: known.inputBytes)
                })
            {
                return (known, true)
            }
        }
        // Masked in its place in the document, so that its key and its parent are judged as they would be in the whole.
        let place = (path + [key]).map(JSONPath.Component.key)
        let here = JSONPath(components: place)
        var wrapped = redactor?.json(here.setting(value, in: .object([:]))) ?? here.setting(value, in: .object([:]))
        // Only the credentials under this part: a write re-renders one run's scope among the twenty the file keeps.
        for credential in credentialPaths(in: document, under: place) {
            if let kept = credential.evaluate(document) { wrapped = credential.setting(kept, in: wrapped) }
        }
        let output = here.evaluate(wrapped) ?? .null
        if let known, known.ordered == nil, known.holds(value), output != known.output { learned.remasked = true }
        var bytes: [UInt8] = []
        var inputBytes: [UInt8] = []
        output.write(into: &bytes, pretty: true, indent: path.count + 1)
        value.write(into: &inputBytes, pretty: false, indent: 0)
        // The generation before masking: a secret another thread registers meanwhile is checked for next time.
        return (
            RenderedSection(
                input: value, output: output, bytes: bytes, inputBytes: inputBytes, generation: generation,
                keyBytes: keyBytes, masked: output == value ? 0 : 1), false
        )
    }

    /// Whether an object's members can be masked apart: not when one member's masking looks at its siblings (an Apple
    /// Pay token's `data`, a `threeDS2` action's `token`).
    static func splittable(_ members: JSON.Object) -> Bool {
        !Redactor.isSensitive("data", in: members) && members["type"]?.stringValue != "threeDS2"
    }

    /// The whole document masked at once, kept credentials restored.
    private func wholeDocument(_ document: JSON) -> (written: JSON, bytes: [UInt8]) {
        var safe = redactor?.json(document) ?? document
        for path in credentialPaths(in: document) {
            if let value = path.evaluate(document) { safe = path.setting(value, in: safe) }
        }
        return (safe, Array(safe.serializedData(pretty: true, newline: true)))
    }

    /// `{"` in base64: the start of encoded JSON.
    static let encodedJSON = Array("eyJ".utf8)
}
