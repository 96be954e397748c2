import Foundation

/// What Centra commands keep in the state file so separate invocations are one shopper: the session token (replaced
/// by every response's `extensions.token`), the line a PDP express checkout added (rolled back on cancel), the payment
/// waiting for its 3DS step, the latest order.
///
/// Layout (`CentraSection`, one typed decoder used by every reader):
/// `{"centra": {"session": "<token>", "addedLine": "<line id>", "paymentStarted": true, "lastOrder": "<id>"}}`
struct CentraState: Sendable {
    let store: StateStore?

    private static let root = JSONPath(components: [.key("centra")])
    /// The section as last decoded or written, by its very value (`DecodedSections`).
    private static let sections = DecodedSections<CentraSection>()

    static let check: FlowOperation.StateCheck = { (document: JSON, file: String) throws(Diagnostic) in
        _ = try sections.decode(document["centra"], at: root, in: file)
    }

    func read() throws(Diagnostic) -> CentraSection {
        guard let store else { return CentraSection() }
        return try Self.sections.decode(try store.read()["centra"], at: Self.root, in: store.path)
    }

    func update(_ change: (inout CentraSection) throws(Diagnostic) -> Void) throws(Diagnostic) {
        guard let store else { return }
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            var section = try Self.sections.decode(doc["centra"], at: Self.root, in: store.path)
            try change(&section)
            doc = Self.sections.encode(section, at: Self.root, in: doc)
        }
    }
}

struct CentraSection: StateSection {
    var session: String?
    var addedLine: String?
    /// A final payment was sent and its outcome is not known yet (lost, or waiting for 3DS): the cart must stay.
    var paymentStarted = false
    var lastOrder: String?
    var unknown: JSON.Object = [:]

    init() {}

    init(_ field: StateField) throws(Diagnostic) {
        _ = try field.members()  // the section is an object
        session = try field["session"].string()
        addedLine = try field["addedLine"].string()
        paymentStarted = try field["paymentStarted"].bool() ?? false
        lastOrder = try field["lastOrder"].string()
        unknown = field.unknownMembers(besides: ["session", "addedLine", "paymentStarted", "lastOrder"])
    }

    var json: JSON {
        var o = unknown
        o["session"] = session.map(JSON.string)
        o["addedLine"] = addedLine.map(JSON.string)
        o["paymentStarted"] = paymentStarted ? .bool(true) : nil
        o["lastOrder"] = lastOrder.map(JSON.string)
        return .object(o)
    }
}
