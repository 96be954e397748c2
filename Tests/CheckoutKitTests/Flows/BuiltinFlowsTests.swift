import Foundation
import Testing
@testable import CheckoutKit

/// The built-in flows are the flow files of `Flows/Builtin/`, embedded at build time: each decodes, is named and
/// described by its own file, and says what each of its variables means (what `flow describe` shows).
@Suite struct BuiltinFlowsTests {
    @Test func everyFileDecodesUnderItsOwnName() throws {
        #expect(BuiltinFlows.all.count == 14)
        #expect(Set(BuiltinFlows.all.map(\.name)).count == BuiltinFlows.all.count, "names are unique")
        for entry in BuiltinFlows.all {
            let flow = try BuiltinFlows.load(entry, registry: CommandFlowTests.registry)
            #expect(!entry.name.isEmpty && flow.name == entry.name)
            #expect(!entry.description.isEmpty && flow.description == entry.description, "\(entry.name)")
            #expect(BuiltinFlows.named(entry.name)?.source == entry.source)
        }
    }

    @Test func everyVariableOfABuiltinFlowIsDescribed() throws {
        for entry in BuiltinFlows.all {
            let flow = try BuiltinFlows.load(entry, registry: CommandFlowTests.registry)
            #expect(Set(flow.varDescriptions.keys) == Set(flow.vars.keys), "\(entry.name)")
        }
    }

    /// The source is the file as written (a person copies it), not a re-serialisation: its layout is kept.
    @Test func theSourceIsTheFileAsWritten() throws {
        let entry = try #require(BuiltinFlows.named("bahn-apple-pay"))
        #expect(entry.source.hasPrefix("{\n  \"name\": \"bahn-apple-pay\",\n"))
        #expect(entry.source.contains("\n    { \"name\": \"make-token\",\n"))
    }
}
