import Foundation

/// Single-use things this state file has seen used up — an Apple Pay token, a Braintree nonce, an Afterpay checkout
/// that was captured — so that sending one again is refused before anything goes out, on every provider alike.
///
/// Layout: `{"spent": {"<kind> <fingerprint>": {"kind", "by", "at"}}}`. The value itself is never stored: its
/// fingerprint (`OpenOutcome.fingerprint`) is, since a nonce or a checkout token is a secret.
enum SpentCredentials {
    static let root = JSONPath(components: [.key("spent")])

    static func key(_ kind: String, _ value: String) -> String { "\(kind) \(OpenOutcome.fingerprint(value))" }

    static func entry(_ document: JSON, kind: String, value: String, file: String) throws(Diagnostic) -> (by: String, at: String)? {
        let field = StateField(document["spent"], at: root, in: file)[key(kind, value)]
        guard field.value != nil else { return nil }
        return (try field["by"].string() ?? "an earlier call", try field["at"].string() ?? "")
    }
}

extension OperationContext {
    /// Refuses, before anything is sent, a single-use `value` this state file has seen used up.
    public func refuseIfSpent(_ value: String, kind: String, fix: String) throws(Diagnostic) {
        guard let state else { return }
        let document = try state.readFile()
        _ = try StateField(document["spent"], at: SpentCredentials.root, in: state.path).members()
        guard let used = try SpentCredentials.entry(document, kind: kind, value: value, file: state.path) else { return }
        throw .failure("refused before sending: this \(kind) was already used by \(used.by)\(used.at.isEmpty ? "" : " at \(used.at)"); it pays once",
                       hint: fix)
    }

    /// Records that `value` is used up (`by`: what used it, for the message that refuses it next time).
    public func markSpent(_ value: String, kind: String, by: String) throws(Diagnostic) {
        guard let state else { return }
        try state.updateFile { (doc: inout JSON) throws(Diagnostic) in
            _ = try StateField(doc["spent"], at: SpentCredentials.root, in: state.path).members()
            doc = SpentCredentials.root.appending(SpentCredentials.key(kind, value))
                .setting(["kind": .string(kind), "by": .string(by), "at": .string(Timestamp.iso8601(Date()))], in: doc)
        }
    }
}
