import Testing

@testable import GraphQL

/// KnownTypeNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct KnownTypeNamesRuleTests {
    @Test(arguments: [
        ("query ($x: Nope) { amount(value: 1) }", #"Unknown type "Nope"."#)
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
