import Testing

@testable import GraphQL

/// VariablesInAllowedPositionRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct VariablesInAllowedPositionRuleTests {
    @Test(arguments: [
        (
            "query ($id: ID) { product(id: $id) { id } }",
            #"Variable "$id" of type "ID" used in position expecting type "ID!"."#
        ),
        (
            "query ($n: String) { amount(value: $n) }",
            #"Variable "$n" of type "String" used in position expecting type "Int"."#
        ),
        (
            "mutation ($p: String!) { addLine(line: {product: $p}) { id } }",
            #"Variable "$p" of type "String!" used in position expecting type "ID!"."#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
