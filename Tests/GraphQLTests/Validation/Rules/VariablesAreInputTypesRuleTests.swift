import Testing

@testable import GraphQL

/// VariablesAreInputTypesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct VariablesAreInputTypesRuleTests {
    @Test(arguments: [
        ("query ($x: Cart) { amount(value: 1) }", #"Variable "$x" cannot be non-input type "Cart"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
