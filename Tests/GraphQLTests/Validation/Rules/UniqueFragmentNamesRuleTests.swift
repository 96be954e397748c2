import Testing

@testable import GraphQL

/// UniqueFragmentNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueFragmentNamesRuleTests {
    @Test(arguments: [
        (
            "{ cart { ...F } } fragment F on Cart { id } fragment F on Cart { id }",
            #"There can be only one fragment named "F"."#
        )
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
