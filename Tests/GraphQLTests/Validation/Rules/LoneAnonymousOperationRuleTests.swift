import Testing

@testable import GraphQL

/// LoneAnonymousOperationRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct LoneAnonymousOperationRuleTests {
    @Test(arguments: [
        ("{ cart { id } } query B { cart { id } }", "This anonymous operation must be the only defined operation.")
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
