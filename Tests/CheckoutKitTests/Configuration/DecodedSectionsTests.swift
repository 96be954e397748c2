import Testing

@testable import CheckoutKit

/// Sections kept typed by the very value they came from: another value — even one equal to it — is decoded on its own,
/// a section written is found again as written, and a wrong-typed one is refused every time it is read.
@Suite struct DecodedSectionsTests {
    let root = JSONPath(components: [.key("centra")])

    @Test func eachValueIsDecodedAsItIs() throws {
        let sections = DecodedSections<CentraSection>()
        let first: JSON = ["session": "cst_first", "lastOrder": "ord_1"]
        let second: JSON = ["session": "cst_second"]
        #expect(try sections.decode(first, at: root, in: "s.json").session == "cst_first")
        #expect(try sections.decode(second, at: root, in: "s.json").session == "cst_second")
        #expect(try sections.decode(second, at: root, in: "s.json").lastOrder == nil)
        #expect(try sections.decode(first, at: root, in: "s.json").lastOrder == "ord_1")
        #expect(try sections.decode(nil, at: root, in: "s.json").session == nil)
    }

    @Test func aSectionWrittenIsReadBackAsWritten() throws {
        let sections = DecodedSections<CentraSection>()
        var section = try sections.decode(["session": "cst_a"], at: root, in: "s.json")
        section.session = "cst_b"
        section.paymentStarted = true
        let document = sections.encode(section, at: root, in: ["other": 1])
        #expect(document["other"] == 1)
        let read = try sections.decode(document["centra"], at: root, in: "s.json")
        #expect(read.session == "cst_b" && read.paymentStarted)
        #expect(document["centra"] == section.json)
    }

    @Test func aWrongTypedSectionIsRefusedEachTime() throws {
        let sections = DecodedSections<CentraSection>()
        let wrong: JSON = ["session": 42]
        for _ in 0..<2 {
            #expect(throws: Diagnostic.self) { try sections.decode(wrong, at: root, in: "s.json") }
        }
    }

    /// More sections than are kept: the oldest go, and are decoded again when read (rightly).
    @Test func theOldestGoWhenMoreAreRead() throws {
        let sections = DecodedSections<CentraSection>()
        let values: [JSON] = (0..<40).map { .object(["session": .string("cst_\($0)")]) }
        for value in values { _ = try sections.decode(value, at: root, in: "s.json") }
        for (i, value) in values.enumerated() {
            #expect(try sections.decode(value, at: root, in: "s.json").session == "cst_\(i)")
        }
    }
}
