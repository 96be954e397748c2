import Testing

@testable import GraphQL

/// KnownRootTypeRule (the test schema has no subscriptions): a document that breaks it gets the message a GraphQL
/// server gives.
@Suite struct KnownRootTypeRuleTests {
    @Test(arguments: [
        ("subscription { cart { id } }", "Schema is not configured to execute subscription operation.")
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
