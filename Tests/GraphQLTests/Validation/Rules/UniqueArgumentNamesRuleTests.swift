import Testing

@testable import GraphQL

/// UniqueArgumentNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueArgumentNamesRuleTests {
    @Test(arguments: [
        ("{ amount(value: 1, value: 2) }", #"There can be only one argument named "value"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
