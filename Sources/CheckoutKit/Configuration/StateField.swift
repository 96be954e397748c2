/// A value read from the state file together with where it sits, so that every section's typed decoder reports a
/// wrong type the same way: exit 65 naming the file and the JSON path. A section is never reset or partly ignored
/// because of one bad entry; the user fixes that entry and keeps the rest (it may hold idempotency keys).
struct StateField {
    let value: JSON?
    let file: String
    /// Where the value sits: its parent's path and its own key (none: `parent` is its path), put together only when
    /// asked — for a message about a wrong type. A section's decoder reads a few fields on every read of a run's state,
    /// and a path made for each cost more than reading the field.
    private let parent: JSONPath
    private let key: String?

    init(_ value: JSON?, at path: JSONPath, in file: String) {
        self.value = value
        parent = path
        key = nil
        self.file = file
    }

    private init(_ value: JSON?, key: String, of parent: JSONPath, in file: String) {
        self.value = value
        self.parent = parent
        self.key = key
        self.file = file
    }

    var path: JSONPath { key.map(parent.appending) ?? parent }

    subscript(key: String) -> StateField {
        StateField(value?[key], key: key, of: path, in: file)
    }

    private var present: JSON? { value == .null ? nil : value }

    /// A wrong-typed entry: 65 naming the file and the path, with the way to recover — fix the entry by hand, or reset
    /// the provider's sections (`state clear --provider P`, which reads none of them) — and never a silent reset.
    func wrong(_ expected: String) -> Diagnostic {
        let keys = path.components.compactMap { if case .key(let k) = $0 { k } else { nil } }
        let section = keys.first == "runs" ? keys.dropFirst(2).first : keys.first
        let reset =
            section.flatMap { name in Providers.all.first { $0.name == name } }
            .map {
                ", or reset the \($0.name) sections with `checkout-driver state clear --provider \($0.name) --session \(ShellWords.join([file]))`"
            } ?? ""
        return .data(
            "state file \(file): \(path): expected \(expected), found \(present?.kindName ?? "nothing")",
            hint:
                "fix or remove that entry\(reset); keep the rest of the file (it may hold idempotency keys you still need)"
        )
    }

    /// Checks that this is an object (absent or null: an empty one) without listing its members.
    func requireObject() throws(Diagnostic) {
        guard let present else { return }
        guard case .object = present else { throw wrong("an object") }
    }

    /// The members of an object (absent or null: none), in key order.
    func members() throws(Diagnostic) -> [(key: String, field: StateField)] {
        guard let present else { return [] }
        guard case .object(let o) = present else { throw wrong("an object") }
        let path = path
        return o.map { ($0.key, StateField($0.value, key: $0.key, of: path, in: file)) }
    }

    func string() throws(Diagnostic) -> String? {
        guard let present else { return nil }
        guard case .string(let s) = present else { throw wrong("a string") }
        return s
    }

    func int() throws(Diagnostic) -> Int? {
        guard let present else { return nil }
        guard let i = present.intValue else { throw wrong("an integer") }
        return i
    }

    func bool() throws(Diagnostic) -> Bool? {
        guard let present else { return nil }
        guard case .bool(let b) = present else { throw wrong("true or false") }
        return b
    }

    /// The members this version does not know, kept exactly as they are (a newer version may have written them). A
    /// section knows a handful of names, compared in turn: hashing them into a set on every read of a run's state cost
    /// more than the comparisons.
    func unknownMembers(besides known: [String]) -> JSON.Object {
        (present?.objectValue ?? [:]).filter { !known.contains($0.key) }
    }
}
