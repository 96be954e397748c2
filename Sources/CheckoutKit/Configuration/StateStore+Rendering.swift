import WireTypes
#if canImport(Glibc)
import Glibc
#endif

/// A part of the state file as last written: the value given, the value written (redacted, kept credentials
/// restored), its bytes, and the redactor's generation they were masked at. A top-level section that is an object is
/// kept member by member (`members`): the record of spent values gains one entry per run and keeps the rest.
struct RenderedSection {
    var input: JSON
    var output: JSON
    var bytes: [UInt8]
    /// The part's text before masking: a secret learned later is looked for here, where masking cannot have cut it.
    var inputBytes: [UInt8]
    var generation: Int
    var members: [String: RenderedSection]?

    /// Whether `value` is what this part was rendered from, or what it was rendered to: the very same storage first (a
    /// document this process wrote hands its parts back), member by member only then.
    func holds(_ value: JSON) -> Bool {
        value.isIdentical(to: output) || value.isIdentical(to: input) || value == input || value == output
    }
}

/// The secret forms learned since a generation, asked of the redactor once per generation in one rendering: the parts
/// of a section were mostly masked at the same one, and each would otherwise copy the same list out of the redactor.
/// A list holds for a part checked at `current` only if it was taken at `current` or later (masking a part can teach the
/// redactor more while the rest are rendered).
final class LearnedForms {
    private let redactor: Redactor?
    private var lists: [Int: (forms: [[UInt8]], taken: Int)] = [:]

    init(redactor: Redactor?) { self.redactor = redactor }

    func since(_ generation: Int, current: Int) -> [[UInt8]] {
        if let list = lists[generation], list.taken >= current { return list.forms }
        let taken = redactor?.generation ?? 0
        let forms = redactor?.forms(since: generation) ?? []
        lists[generation] = (forms, taken)
        return forms
    }
}

/// The parts of one file as last written, and the redactor they were masked by (generations of another are no measure).
struct RenderCache {
    var owner: ObjectIdentifier?
    var parts: [String: RenderedSection] = [:]
}

extension StateStore {
    /// The file's text and the document it holds, redacted (kept credentials restored), put together part by part.
    /// A part given again as it was — the same storage, in or out of the redactor, so the check costs nothing — is not
    /// masked or serialized again unless a secret learned since occurs in its text: a batch's runs rewrite their own
    /// scopes a dozen times each while the record of spent values, hundreds of entries, stays as it was. The bytes are
    /// the same as the whole document's pretty serialization (a test holds them to it).
    func render(_ document: JSON, reusing store: inout RenderCache) -> (written: JSON, bytes: [UInt8]) {
        let owner = redactor.map(ObjectIdentifier.init)
        if store.owner != owner { store = RenderCache(owner: owner) }
        guard case .object(let members) = document, Self.splittable(members) else {
            // Judged as a whole, as it always was (an object whose members' masking depends on each other, or not an
            // object at all).
            store.parts = [:]
            return wholeDocument(document)
        }
        var cache = store.parts
        defer { store.parts = cache }
        let credentials = credentialPaths(in: document)
        let learned = LearnedForms(redactor: redactor)
        // Masking a part can teach the redactor a secret (a value under a sensitive key) that another part holds: go
        // round again until a whole pass learns nothing, as masking the whole document at once would.
        var (outputs, bytes) = renderObject(members, at: [], reusing: &cache, in: document, credentials: credentials, learned: learned)
        for _ in 0..<8 {
            let generation = redactor?.generation ?? 0
            guard Self.anyOlder(than: generation, in: cache) else { break }
            (outputs, bytes) = renderObject(members, at: [], reusing: &cache, in: document, credentials: credentials, learned: learned)
        }
        bytes.append(UInt8(ascii: "\n"))
        return (.object(outputs), bytes)
    }

    private static func anyOlder(than generation: Int, in cache: [String: RenderedSection]) -> Bool {
        cache.values.contains { $0.generation != generation || ($0.members.map { anyOlder(than: generation, in: $0) } ?? false) }
    }

    /// An object `path.count` levels deep, member by member, each reused from `cache` where it can be.
    private func renderObject(_ members: [String: JSON], at path: [String], reusing cache: inout [String: RenderedSection],
                              in document: JSON, credentials: [JSONPath], learned: LearnedForms) -> (outputs: [String: JSON], bytes: [UInt8]) {
        if cache.count > members.count || cache.keys.contains(where: { members[$0] == nil }) {
            cache = cache.filter { members[$0.key] != nil }
        }
        let keys = members.keys.sorted()
        var outputs: [String: JSON] = [:]
        var bytes: [UInt8] = []
        guard !keys.isEmpty else { return ([:], Array("{}".utf8)) }
        bytes.append(UInt8(ascii: "{"))
        for (i, key) in keys.enumerated() {
            let part = renderPart(members[key]!, key: key, in: members, at: path, reusing: cache[key], document: document,
                                  credentials: credentials, learned: learned)
            cache[key] = part
            outputs[key] = part.output
            if i > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\n"))
            bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * (path.count + 1)))
            JSON.appendQuoted(key, to: &bytes)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: part.bytes)
        }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * path.count))
        bytes.append(UInt8(ascii: "}"))
        return (outputs, bytes)
    }

    private func renderPart(_ value: JSON, key: String, in parent: [String: JSON], at path: [String], reusing known: RenderedSection?,
                            document: JSON, credentials: [JSONPath], learned: LearnedForms) -> RenderedSection {
        let generation = redactor?.generation ?? 0
        // A top-level section that is an object goes member by member, unless it is a secret as a whole.
        // (nor shaped as an Apple Pay token, whose `data` is judged by its siblings).
        if path.isEmpty, case .object(let members) = value, !Redactor.isSensitive(key, in: parent), Self.splittable(members) {
            if let known, known.members != nil, known.generation == generation, known.holds(value) { return known }
            var cache = known?.members ?? [:]
            let (outputs, bytes) = renderObject(members, at: [key], reusing: &cache, in: document, credentials: credentials, learned: learned)
            return RenderedSection(input: value, output: .object(outputs), bytes: bytes, inputBytes: [],
                                   generation: cache.values.map(\.generation).min() ?? generation, members: cache)
        }
        if var known, known.members == nil, known.holds(value) {
            if known.generation == generation { return known }
            // Secrets were learned since: the part is masked alike unless one of them occurs in its text (in every form
            // it may take there: the JSON-escaped one is among the forms).
            // A part holding encoded JSON (a JWS, a 3DS challenge token: `eyJ` is `{"` in base64) is masked again, since
            // what it hides is encoded where a search cannot see it.
            if !Self.occurs(Array("eyJ".utf8), in: known.inputBytes),
               !learned.since(known.generation, current: generation).contains(where: { Self.occurs($0, in: known.inputBytes) }) {
                known.generation = generation
                return known
            }
        }
        // Masked in its place in the document, so that its key and its parent are judged as they would be in the whole.
        let place = (path + [key]).map(JSONPath.Component.key)
        let here = JSONPath(components: place)
        var wrapped = redactor?.json(here.setting(value, in: .object([:]))) ?? here.setting(value, in: .object([:]))
        for credential in credentials where credential.components.starts(with: place) {
            if let kept = credential.evaluate(document) { wrapped = credential.setting(kept, in: wrapped) }
        }
        let output = here.evaluate(wrapped) ?? .null
        var bytes: [UInt8] = [], inputBytes: [UInt8] = []
        output.write(into: &bytes, pretty: true, indent: path.count + 1)
        value.write(into: &inputBytes, pretty: false, indent: 0)
        // The generation before masking: a secret another thread registers meanwhile is checked for next time.
        return RenderedSection(input: value, output: output, bytes: bytes, inputBytes: inputBytes, generation: generation, members: nil)
    }

    /// Whether an object's members can be masked apart: not when one member's masking looks at its siblings (an Apple
    /// Pay token's `data`, a `threeDS2` action's `token`).
    static func splittable(_ members: [String: JSON]) -> Bool {
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

    private static func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
        return needle.withUnsafeBytes { n in
            haystack.withUnsafeBytes { h in
                // memchr to each candidate first byte, memcmp for the rest (glibc's memmem is not in the module).
                var offset = 0
                let last = h.count - n.count
                while offset <= last, let hit = memchr(h.baseAddress! + offset, Int32(first), last - offset + 1) {
                    if memcmp(hit, n.baseAddress!, n.count) == 0 { return true }
                    offset = UnsafeRawPointer(hit) - h.baseAddress! + 1
                }
                return false
            }
        }
    }
}
