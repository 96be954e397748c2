import Testing

@testable import GraphQL

/// FieldsOnCorrectTypeRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct FieldsOnCorrectTypeRuleTests {
    @Test(arguments: [
        ("{ cart { nope } }", #"Cannot query field "nope" on type "Cart"."#),
        ("{ search(text: \"a\") { id } }", #"Cannot query field "id" on type "SearchResult"."#),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
