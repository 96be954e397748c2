import Testing

@testable import GraphQL

/// UniqueOperationNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueOperationNamesRuleTests {
    @Test(arguments: [
        ("query A { cart { id } } query A { cart { id } }", #"There can be only one operation named "A"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
