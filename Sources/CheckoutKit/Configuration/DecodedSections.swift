import Threads
import WireTypes

/// A provider's section of the state file: one typed decoder every reader goes through (a wrong type is 65 naming its
/// path), and the JSON it is written back as.
protocol StateSection: Sendable {
    init(_ field: StateField) throws(Diagnostic)
    var json: JSON { get }
}

/// A provider's sections as decoded, by the very JSON value they were decoded from or written as (the same storage):
/// a run reads its section and writes it back a dozen times a checkout, and decoding it each time — walking, checking
/// and hashing every member — cost more than the reads themselves. What a run writes is found again typed on its next
/// read. Only sections that decoded are kept, the most recent first: a few, as each of a batch's runs has its own.
final class DecodedSections<Section: StateSection>: Sendable {
    private let recent = Locked<[(value: JSON, section: Section)]>([])
    /// How many are kept: a batch's parallel runs, each with its section as last read and as last written, and room.
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

    /// `document` with `section` written at `path`, kept as the very value written there. (What the run holds typed is
    /// what it wrote; the file's text is checked by the decoder when another process reads it, as ever.)
    func encode(_ section: Section, at path: JSONPath, in document: JSON) -> JSON {
        let value = section.json
        keep(section, as: value)
        return path.setting(value, in: document)
    }

    private func keep(_ section: Section, as value: JSON) {
        guard case .object = value else { return }
        recent.withLock { recent in
            recent.insert((value, section), at: 0)
            if recent.count > kept { recent.removeLast() }
        }
    }
}
