import Testing

@testable import GraphQL

/// NoUndefinedVariablesRule (through a fragment too): a document that breaks it gets the message a GraphQL server
/// gives.
@Suite struct NoUndefinedVariablesRuleTests {
    @Test(arguments: [
        ("query Q { amount(value: $nope) }", #"Variable "$nope" is not defined by operation "Q"."#),
        (
            "query Q { ...F } fragment F on Query { amount(value: $inFragment) }",
            #"Variable "$inFragment" is not defined by operation "Q"."#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
