import Foundation

/// Single-use things this state file has seen used up — an Apple Pay token, a Braintree nonce, an Afterpay checkout
/// that was captured — so that sending one again is refused before anything goes out, on every provider and in every
/// run scope alike (the section is file-wide).
///
/// Layout: `{"spent": {"<kind> <fingerprint>": {"kind", "by", "at", "replay"}}}`. The value itself is never stored: its
/// fingerprint (`OpenOutcome.fingerprint`) is, since a nonce or a checkout token is a secret. `replay` names the one
/// re-send that may still carry it — the same call under the same idempotency key, which the provider answers with
/// the original response and charges nothing.
enum SpentCredentials {
    static let root = JSONPath(components: [.key("spent")])

    /// How long a use is remembered: every single-use value a provider hands out is dead well within a day (an Apple
    /// Pay token's signature is minutes old, a Braintree nonce lives 3 hours, a Cash App grant minutes). A use younger
    /// than `alwaysKept` (the longest of those lives) is never forgotten; of the older ones the newest `capacity` are
    /// kept, so a long batch does not make every read of the state file slower and slower.
    static let retention: TimeInterval = 24 * 3600
    static let alwaysKept: TimeInterval = 3 * 3600
    static let capacity = 200

    struct Use {
        var by: String
        var at: String
        var replay: String?
    }

    static func key(_ kind: String, _ value: String) -> String { "\(kind) \(OpenOutcome.fingerprint(value))" }

    static func use(of value: String, kind: String, in store: StateStore) throws(Diagnostic) -> Use? {
        let document = try store.readFile()
        let section = StateField(document["spent"], at: root, in: store.path)
        try section.requireObject()
        let field = section[key(kind, value)]
        guard field.value != nil else {
            // A call in flight uses it up as it goes (its answer records the use), and one a crash left in flight did.
            let flying = try OpenOutcomes.decode(document, file: store.path).first {
                $0.inFlight != nil && $0.spends.contains(key(kind, value))
            }
            return flying.map { Use(by: "\($0.effect) of \($0.reference) (\($0.left))", at: "", replay: $0.replay) }
        }
        return Use(
            by: try field["by"].string() ?? "an earlier call", at: try field["at"].string() ?? "",
            replay: try field["replay"].string())
    }

    /// One record as `use` and `mark` read it: wrong-typed, it is refused (65), never pruned away unread.
    static func check(_ use: StateField) throws(Diagnostic) {
        _ = try use.members()
        for field in ["kind", "by", "at", "replay"] { _ = try use[field].string() }
    }

    static func mark(
        _ value: String, kind: String, by: String, replay: String?, in store: StateStore
    ) throws(Diagnostic) {
        try store.updateFile { (doc: inout JSON) throws(Diagnostic) in
            let section = StateField(doc["spent"], at: root, in: store.path)
            try section.requireObject()
            // The first use is the one that paid: a replay of it does not move the record.
            guard section[key(kind, value)].value == nil else { return }
            let now = Date()
            let at = Timestamp.iso8601(now)
            var entry: JSON.Object = ["kind": .string(kind), "by": .string(by), "at": .string(at)]
            entry["replay"] = replay.map(JSON.string)
            let record = doc["spent"] ?? .object([:])
            var uses = record.objectValue ?? [:]
            let oldestBefore = oldest.result("spent", of: record) { oldestUse(in: uses) }
            uses[key(kind, value)] = .object(entry)
            let oldestNow = min(oldestBefore ?? at, at)
            let kept = pruned(uses, now: now, oldest: oldestNow)
            let written = JSON.object(kept)
            // Nothing pruned: the record written holds the same uses, one more, so its oldest is known.
            if kept.count == uses.count { _ = oldest.result("spent", of: written) { oldestNow } }
            doc = root.setting(written, in: doc)
        }
    }

    /// The oldest use of a record (nil: none), kept with the very record: a mark adds one use, now, to the record the
    /// last one wrote, so the oldest is worked out from every use only when another writer changed the record (a
    /// batch's record holds one use per run, and every run marks one).
    private static let oldest = IdentityMemo<String?>()

    static func oldestUse(in uses: JSON.Object) -> String? {
        uses.values.lazy.map { $0["at"]?.stringValue ?? "" }.min()
    }
}

extension SpentCredentials {
    /// Every use of the last `alwaysKept`, and of the older ones within `retention` the newest, up to `capacity` in
    /// all (ISO 8601 times sort as text).
    /// `oldest`: the oldest use's time when it is known (an undated use counts as older than any).
    static func pruned(_ uses: JSON.Object, now: Date, oldest: String? = nil) -> JSON.Object {
        func at(_ use: JSON) -> String { use["at"]?.stringValue ?? "" }
        let cutoff = Timestamp.iso8601(now.addingTimeInterval(-retention))
        let young = Timestamp.iso8601(now.addingTimeInterval(-alwaysKept))
        // All of the last `alwaysKept` (a batch's own uses): every one stays, and the record is not copied.
        guard (oldest ?? oldestUse(in: uses) ?? young) < young else { return uses }
        let recent = uses.filter { at($0.value) >= cutoff }
        guard recent.count > capacity else { return recent }
        let kept = recent.filter { at($0.value) >= young }
        let older = recent.filter { at($0.value) < young }.sorted { (at($0.value), $0.key) > (at($1.value), $1.key) }
        return kept.merging(JSON.Object(older.prefix(max(0, capacity - kept.count)).map { ($0.key, $0.value) })) {
            a, _ in a
        }
    }
}

extension OperationContext {
    /// Refuses, before anything is sent, a single-use `value` this state file has seen used up — unless this call is
    /// the replay its use allows.
    public func refuseIfSpent(_ value: String, kind: String, replay: String? = nil, fix: String) throws(Diagnostic) {
        guard let state, let used = try SpentCredentials.use(of: value, kind: kind, in: state) else { return }
        if let replay, used.replay == replay { return }
        throw .failure(
            "refused before sending: this \(kind) was already used by \(used.by)\(used.at.isEmpty ? "" : " at \(used.at)"); it pays once",
            hint: fix)
    }

    /// Records that `value` is used up (`by`: what used it, for the message that refuses it next time).
    public func markSpent(_ value: String, kind: String, by: String, replay: String? = nil) throws(Diagnostic) {
        guard let state else { return }
        try SpentCredentials.mark(value, kind: kind, by: by, replay: replay, in: state)
    }
}
