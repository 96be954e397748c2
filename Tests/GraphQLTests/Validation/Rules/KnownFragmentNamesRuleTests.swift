import Testing

@testable import GraphQL

/// KnownFragmentNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct KnownFragmentNamesRuleTests {
    @Test(arguments: [
        ("{ cart { ...Missing } }", #"Unknown fragment "Missing"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
