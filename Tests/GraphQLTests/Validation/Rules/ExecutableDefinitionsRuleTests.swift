import Testing

@testable import GraphQL

/// ExecutableDefinitionsRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct ExecutableDefinitionsRuleTests {
    @Test(arguments: [
        ("{ cart { id } } type T { a: Int }", #"The "T" definition is not executable."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
