import Testing

@testable import GraphQL

/// UniqueDirectivesPerLocationRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueDirectivesPerLocationRuleTests {
    @Test(arguments: [
        (
            "{ cart @skip(if: true) @skip(if: false) { id } }",
            #"The directive "@skip" can only be used once at this location."#
        )
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
