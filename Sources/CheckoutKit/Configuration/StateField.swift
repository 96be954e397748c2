/// A value read from the state file together with where it sits, so that every section's typed decoder reports a
/// wrong type the same way: exit 65 naming the file and the JSON path. A section is never reset or partly ignored
/// because of one bad entry; the user fixes that entry and keeps the rest (it may hold idempotency keys).
struct StateField {
    let value: JSON?
    let path: JSONPath
    let file: String

    init(_ value: JSON?, at path: JSONPath, in file: String) {
        self.value = value
        self.path = path
        self.file = file
    }

    subscript(key: String) -> StateField {
        StateField(value?[key], at: path.appending(key), in: file)
    }

    private var present: JSON? { value == .null ? nil : value }

    func wrong(_ expected: String) -> Diagnostic {
        .data("state file \(file): \(path): expected \(expected), found \(present?.kindName ?? "nothing")",
              hint: "fix or remove that entry; keep the rest of the file (it may hold idempotency keys you still need)")
    }

    /// The members of an object (absent or null: none).
    func members() throws(Diagnostic) -> [(key: String, field: StateField)] {
        guard let present else { return [] }
        guard case .object(let o) = present else { throw wrong("an object") }
        return o.keys.sorted().map { ($0, self[$0]) }
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

    /// The members this version does not know, kept exactly as they are (a newer version may have written them).
    func unknownMembers(besides known: Set<String>) -> [String: JSON] {
        (present?.objectValue ?? [:]).filter { !known.contains($0.key) }
    }
}
