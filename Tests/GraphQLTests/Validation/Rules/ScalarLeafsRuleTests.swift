import Testing

@testable import GraphQL

/// ScalarLeafsRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct ScalarLeafsRuleTests {
    @Test(arguments: [
        ("{ cart { id { x } } }", #"Field "id" must not have a selection since type "ID!" has no subfields."#),
        ("{ cart }", #"Field "cart" of type "Cart!" must have a selection of subfields. Did you mean "cart { ... }"?"#),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
