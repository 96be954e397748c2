import Foundation

/// `state show` and `state clear`: the file as a person may see it, and a reset that cannot hide an open money outcome.
extension StateStore {
    /// The whole file, every kept credential masked (they are the one thing the file holds in the clear) and whatever
    /// else the redactor masks; a wrong-typed section is refused as by every other reader (`checkSections`).
    public func masked() throws(Diagnostic) -> JSON {
        let document = try readFile()
        try checkSections(document)
        var shown = redactor?.json(document) ?? document
        for path in credentialPaths(in: document) where path.evaluate(document) != nil {
            shown = path.setting(.string(Redactor.mask), in: shown)
        }
        return shown
    }

    /// The file's open outcomes, those of `provider` when one is named.
    public func openOutcomes(provider: String? = nil) throws(Diagnostic) -> [OpenOutcome] {
        try OpenOutcomes.read(self).filter { provider == nil || $0.provider == provider }
    }

    /// Empties the file's checkouts — every section of the chain and of each run (the `provider`'s only, when one is
    /// named; with none, the captures and the run records too) — and answers what went. The record of spent
    /// single-use values always stays: it is what refuses a token or nonce that already paid. An open outcome of a
    /// money call (of that provider) refuses the reset with 75, and a run still going with 64, unless `force`: then
    /// the open outcomes go too — for someone who settled them by other means.
    @discardableResult
    public func clear(provider: String?, force: Bool) throws(Diagnostic) -> [String] {
        try updateFile { (doc: inout JSON) throws(Diagnostic) -> [String] in
            let open = try OpenOutcomes.decode(doc, file: path).filter { provider == nil || $0.provider == provider }
            if !force, let first = open.first {
                let more = open.count > 1 ? " (and \(open.count - 1) more)" : ""
                throw Diagnostic(
                    .outcomeUnknown,
                    "refused: \(first.effect) of \(first.reference) (\(first.left)) may have gone through\(more), and clearing \(path) would forget it",
                    hint: "settle it first: " + first.settle.joined(separator: "; or ")
                        + "; or pass --force if you settled it yourself")
            }
            let going = (doc["runs"]?.objectValue ?? [:]).filter { $0.value[Self.runRecord]?["finishedAt"] == nil }.keys
                .sorted()
            if !force, let run = going.first {
                throw .usage(
                    "refused: run \(run) is still going on \(path)",
                    hint: "wait for it to end, or pass --force if its process is gone")
            }
            var top = doc.objectValue ?? [:]
            var removed: [String] = []
            if let provider {
                if top.removeValue(forKey: provider) != nil { removed.append(provider) }
                if var runs = top["runs"]?.objectValue {
                    for (id, scope) in runs {
                        guard var sections = scope.objectValue, sections.removeValue(forKey: provider) != nil else {
                            continue
                        }
                        runs[id] = .object(sections)
                        removed.append("runs.\(id).\(provider)")
                    }
                    top["runs"] = .object(runs)
                }
            } else {
                for key in top.keys.sorted() where key != "spent" && key != "openOutcomes" {
                    top[key] = nil
                    removed.append(key)
                }
            }
            if !open.isEmpty {
                var outcomes = top["openOutcomes"]?.objectValue ?? [:]
                for outcome in open { outcomes[outcome.key] = nil }
                top["openOutcomes"] = outcomes.isEmpty ? nil : .object(outcomes)
                removed.append(open.count == 1 ? "1 open outcome" : "\(open.count) open outcomes")
            }
            doc = .object(top)
            return removed
        }
    }
}
