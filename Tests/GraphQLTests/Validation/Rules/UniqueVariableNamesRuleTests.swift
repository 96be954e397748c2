import Testing

@testable import GraphQL

/// UniqueVariableNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueVariableNamesRuleTests {
    @Test(arguments: [
        ("query ($a: Int, $a: Int) { amount(value: $a) }", #"There can be only one variable named "$a"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
