import Testing

@testable import GraphQL

/// SingleFieldSubscriptionsRule: one root field, no introspection, no @skip/@include at the top.
@Suite struct SingleFieldSubscriptionsRuleTests {
    @Test(arguments: [
        // Subscriptions: one root field, no introspection, no @skip/@include at the top.
        ("subscription S { ticks personChanged { id } }", #"Subscription "S" must select only one top level field."#),
        (
            "subscription { ...F } fragment F on Subscription { ticks t: ticks }",
            "Anonymous Subscription must select only one top level field."
        ),
        ("subscription { __typename }", "Anonymous Subscription must not select an introspection top level field."),
        (
            "subscription ($b: Boolean!) { ticks @include(if: $b) }",
            "Anonymous Subscription must not use `@skip` or `@include` directives in the top level selection."
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try HarnessSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }

    @Test(arguments: [
        // Subscriptions whose one field comes through a fragment or twice under one key.
        "subscription { ...F } fragment F on Subscription { ticks }",
        "subscription { ticks ticks ... on Subscription { ticks } }",
    ])
    func documentsThatOnlySeemToBreakIt(query: String) throws {
        #expect(try HarnessSchema.validate(query) == [], "\(query)")
    }
}
