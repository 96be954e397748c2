import Testing

@testable import GraphQL

/// PossibleFragmentSpreadsRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct PossibleFragmentSpreadsRuleTests {
    @Test(arguments: [
        (
            "{ cart { ... on Product { id } } }",
            #"Fragment cannot be spread here as objects of type "Cart" can never be of type "Product"."#
        ),
        (
            "{ cart { ...P } } fragment P on Product { id }",
            #"Fragment "P" cannot be spread here as objects of type "Cart" can never be of type "Product"."#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
