import Threads
import WireTypes

/// A provider's section of the state file: one typed decoder every reader goes through (a wrong type is 65 naming its
/// path), and the JSON it is written back as.
protocol StateSection: Sendable {
    init(_ field: StateField) throws(Diagnostic)
    var json: JSON { get }
}

/// A provider's sections as decoded, by the very JSON value they were decoded from (the same storage): a run reads its
/// section a dozen times a checkout, mostly as it last read it, and decoding it each time — walking, checking and
/// hashing every member — cost more than the reads themselves. Only sections that decoded are kept, the most recent
/// first: a few, as each of a batch's runs has its own. A section a run writes is decoded when it is next read, not
/// kept as written: its value must pass the decoder's checks as any other (an integer too long to be exact does not).
final class DecodedSections<Section: StateSection>: Sendable {
    private let recent = Locked<[(value: JSON, section: Section)]>([])
    /// How many are kept: a batch's parallel runs, each with its section as last read, and room.
    private let kept = 32

    init() {}

    /// The section of `value`, found at `path` of `file`: the one kept for this very value, else decoded (and kept).
    func decode(_ value: JSON?, at path: JSONPath, in file: String) throws(Diagnostic) -> Section {
        if let value, case .object = value,
            let section = recent.withLock({ $0.first { $0.value.isIdentical(to: value) }?.section })
        {
            return section
        }
        let section = try Section(StateField(value, at: path, in: file))
        if let value { keep(section, as: value) }
        return section
    }

    private func keep(_ section: Section, as value: JSON) {
        guard case .object = value else { return }
        recent.withLock { recent in
            recent.insert((value, section), at: 0)
            if recent.count > kept { recent.removeLast() }
        }
    }
}
