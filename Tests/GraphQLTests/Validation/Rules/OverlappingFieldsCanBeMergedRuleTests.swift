import Testing

@testable import GraphQL

/// OverlappingFieldsCanBeMergedRule on documents that break it and documents that only seem to, against the harness
/// schema.
@Suite struct OverlappingFieldsCanBeMergedRuleTests {
    @Test(arguments: [
        // Two fields under one response key must be one field…
        (
            "{ car(id: 1) { x: doors x: wheels } }",
            #"Fields "x" conflict because "doors" and "wheels" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        // …with the same arguments…
        (
            "{ car(id: 1) { passengers(limit: 1) { id } passengers(limit: 2) { id } } }",
            #"Fields "passengers" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        (
            "{ car(id: 1) { passengers(limit: 1) { id } passengers { id } } }",
            #"Fields "passengers" conflict because they have differing arguments. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        // …even on different object types when their types cannot merge…
        (
            "{ garage { ... on Car { size } ... on Bike { size } } }",
            #"Fields "size" conflict because they return conflicting types "Size" and "Int". Use different aliases on the fields to fetch both if this was intentional."#
        ),
        (
            "{ garage { ... on Car { x: doors } ... on Bike { x: gears } } }",
            #"Fields "x" conflict because they return conflicting types "Int" and "Int!". Use different aliases on the fields to fetch both if this was intentional."#
        ),
        (
            "{ garage { ... on Bike { tags } ... on Car { tags } } }",
            #"Fields "tags" conflict because they return conflicting types "[String]" and "[String!]". Use different aliases on the fields to fetch both if this was intentional."#
        ),
        // …to every depth…
        (
            "{ person(id: 1) { favourite { id } favourite { id: label } } }",
            #"Fields "favourite" conflict because subfields "id" conflict because "id" and "label" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        // …through fragments, and fragments against each other…
        (
            "{ car(id: 1) { doors ...A } } fragment A on Car { doors: wheels }",
            #"Fields "doors" conflict because "doors" and "wheels" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        (
            "{ car(id: 1) { ...A ...B } } fragment A on Car { n: doors } fragment B on Car { n: wheels }",
            #"Fields "n" conflict because "doors" and "wheels" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        (
            "{ car(id: 1) { ...A } } fragment A on Car { owner { ...B } owner { name } } fragment B on Person { name: label }",
            #"Fields "owner" conflict because subfields "name" conflict because "name" and "label" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
        // …and parents that are interfaces may be the same object.
        (
            "{ vehicle(id: 1) { ... on Thing { l: label } ... on Vehicle { l: id } } }",
            #"Fields "l" conflict because "label" and "id" are different fields. Use different aliases on the fields to fetch both if this was intentional."#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try HarnessSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }

    @Test(arguments: [
        // Fields that only seem to conflict.
        "{ car(id: 1) { doors doors } }",
        "{ car(id: 1) { passengers(limit: 1, seated: false) { id } passengers(seated: false, limit: 1) { id } } }",
        "{ echo(value: {a: 1, b: [2]}) e: echo(value: {a: 1, b: [2]}) echo(value: {b: [2], a: 1}) }",
        // Different object types may select different fields under one key when the types can merge.
        "{ garage { ... on Car { x: doors } ... on Bike { x: size } } }",
        "{ garage { ... on Car { x: owner { id } } ... on Truck { x: owner { label } } } }",
        "{ anything { ... on Car { thing: label } ... on Person { thing: name } } }",
        // A fragment compared with itself, and fragments spread twice.
        "{ car(id: 1) { ...A ...A owner { ...P } } } fragment A on Car { doors owner { ...P } } fragment P on Person { name }",
    ])
    func documentsThatOnlySeemToBreakIt(query: String) throws {
        #expect(try HarnessSchema.validate(query) == [], "\(query)")
    }

    @Test func fragmentCyclesEndAndTheCostStaysLinear() throws {
        let cycle = try HarnessSchema.validate(
            "{ car(id: 1) { ...A } } fragment A on Car { doors ...B } fragment B on Car { wheels ...A }")
        #expect(cycle == [#"Cannot spread fragment "A" within itself via "B"."#])
        // Fifty fragments each spreading the next twice would be 2^50 paths without the pair cache.
        var document = "{ car(id: 1) { ...F0 } }\n"
        for i in 0..<50 { document += "fragment F\(i) on Car { doors w\(i): wheels ...F\(i + 1) ...F\(i + 1) }\n" }
        document += "fragment F50 on Car { doors: doors }"
        let clock = ContinuousClock()
        var errors: [String] = ["not validated"]
        let took = clock.measure { errors = (try? HarnessSchema.validate(document)) ?? ["does not parse"] }
        #expect(errors == [])
        #expect(took < .seconds(2), "\(took)")
        // A conflict at the bottom of the chain is still found.
        let conflicting = document.replacingOccurrences(
            of: "fragment F50 on Car { doors: doors }", with: "fragment F50 on Car { doors: wheels }")
        #expect(
            try HarnessSchema.validate(conflicting).contains {
                $0.hasPrefix(#"Fields "doors" conflict because "doors" and "wheels" are different fields."#)
            })
    }

    @Test func aFragmentChainPastTheLimitIsRefusedBeforeTheRecursiveRules() throws {
        var document = "{ car(id: 1) { ...F0 x: doors } }\n"
        for i in 0..<200 { document += "fragment F\(i) on Car { x: doors ...F\(i + 1) }\n" }
        document += "fragment F200 on Car { x: wheels }"
        let errors = try HarnessSchema.validate(document)
        #expect(errors == ["Fragments nest deeper than 128 levels (201)."], "\(errors)")
    }

    /// A chain of fragments no operation spreads is bounded too: the recursive rules never walk a hostile one, and
    /// many fragments cost linear time (twenty thousand validate in seconds, without exhausting the stack).
    @Test func anUnusedFragmentChainPastTheLimitIsNotWalked() throws {
        var document = "{ count }\n"
        let count = 20_000
        for i in 0..<count { document += "fragment F\(i) on Car { x: doors x: wheels ...F\(i + 1) }\n" }
        document += "fragment F\(count) on Car { doors }"
        var errors: [String] = []
        let took = ContinuousClock().measure { errors = (try? HarnessSchema.validate(document)) ?? ["does not parse"] }
        #expect(errors.contains(#"Fragment "F0" is never used."#), "\(errors.prefix(3))")
        #expect(!errors.contains { $0.hasPrefix("Fields \"x\" conflict") }, "the merging rule did not walk the chain")
        #expect(took < .seconds(20), "\(took)")
    }
}
