import Testing

@testable import GraphQL

/// NoFragmentCyclesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct NoFragmentCyclesRuleTests {
    @Test(arguments: [
        (
            "{ cart { ...A } } fragment A on Cart { ...B } fragment B on Cart { ...A }",
            #"Cannot spread fragment "A" within itself via "B"."#
        )
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
