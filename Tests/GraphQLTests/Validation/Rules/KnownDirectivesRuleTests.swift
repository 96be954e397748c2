import Testing

@testable import GraphQL

/// KnownDirectivesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct KnownDirectivesRuleTests {
    @Test(arguments: [
        ("{ cart @nope { id } }", #"Unknown directive "@nope"."#),
        ("query @skip(if: true) { cart { id } }", #"Directive "@skip" may not be used on QUERY."#),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
