import Testing

@testable import GraphQL

/// KnownArgumentNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct KnownArgumentNamesRuleTests {
    @Test(arguments: [
        ("{ cart(nope: 1) { id } }", #"Unknown argument "nope" on field "Query.cart"."#),
        ("{ cart @skip(when: true) { id } }", #"Unknown argument "when" on directive "@skip"."#),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
