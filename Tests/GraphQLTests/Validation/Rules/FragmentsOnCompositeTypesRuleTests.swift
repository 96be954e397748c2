import Testing

@testable import GraphQL

/// FragmentsOnCompositeTypesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct FragmentsOnCompositeTypesRuleTests {
    @Test(arguments: [
        ("{ cart { ...F } } fragment F on Int { a }", #"Fragment "F" cannot condition on non composite type "Int"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
