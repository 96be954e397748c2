import Testing

@testable import GraphQL

/// NoUnusedFragmentsRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct NoUnusedFragmentsRuleTests {
    @Test(arguments: [
        ("{ cart { id } } fragment Unused on Cart { id }", #"Fragment "Unused" is never used."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
