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

    /// A fragment is a built-in flow file that other built-in flows include: found by name (for `include` and `flow
    /// show`), never listed as a flow of its own, and included by at least one flow.
    @Test func fragmentsAreIncludedNotListed() throws {
        #expect(!BuiltinFlows.fragments.isEmpty)
        for fragment in BuiltinFlows.fragments {
            #expect(!BuiltinFlows.all.contains { $0.name == fragment.name }, "\(fragment.name) is listed as a flow")
            #expect(BuiltinFlows.named(fragment.name)?.source == fragment.source)
            let flow = try BuiltinFlows.load(fragment, registry: CommandFlowTests.registry)
            #expect(flow.name == fragment.name && Set(flow.varDescriptions.keys) == Set(flow.vars.keys))
            #expect(
                BuiltinFlows.all.contains { $0.source.contains(#""include": "\#(fragment.name)""#) },
                "\(fragment.name) is included by no flow")
        }
    }

    /// The Centra variants share their steps through the fragment and run the steps they ran before, with the same
    /// variables: the cart's checkout, and the PDP one with its item added and rolled back.
    @Test func theCentraVariantsRunTheSameStepsThroughTheFragment() throws {
        let shared = ["shipping", "shipping-method", "make-token", "payment", "order"]
        let express = try BuiltinFlows.load(
            #require(BuiltinFlows.named("centra-express")), registry: CommandFlowTests.registry)
        #expect(express.steps.map(\.name) == ["express-config"] + shared)
        #expect(express.finally.isEmpty && Set(express.vars.keys) == ["contact", "open"])
        let pdp = try BuiltinFlows.load(
            #require(BuiltinFlows.named("centra-express-pdp")), registry: CommandFlowTests.registry)
        #expect(pdp.steps.map(\.name) == ["express-config", "add-item"] + shared)
        #expect(pdp.finally.map(\.name) == ["rollback"] && Set(pdp.vars.keys) == ["contact", "open", "item"])
        #expect(
            pdp.vars["item"] == "1002-M" && pdp.vars["open"] == false && express.vars["contact"] == pdp.vars["contact"])
    }

    /// The source is the file as written (a person copies it), not a re-serialisation: its layout is kept.
    @Test func theSourceIsTheFileAsWritten() throws {
        let entry = try #require(BuiltinFlows.named("bahn-apple-pay"))
        #expect(entry.source.hasPrefix("{\n  \"name\": \"bahn-apple-pay\",\n"))
        #expect(entry.source.contains("\n    { \"name\": \"make-token\",\n"))
    }
}
