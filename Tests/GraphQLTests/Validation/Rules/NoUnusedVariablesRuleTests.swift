import Testing

@testable import GraphQL

/// NoUnusedVariablesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct NoUnusedVariablesRuleTests {
    @Test(arguments: [
        ("query Q($unused: Int) { amount(value: 1) }", #"Variable "$unused" is never used in operation "Q"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
