import Testing

@testable import GraphQL

/// UniqueInputFieldNamesRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct UniqueInputFieldNamesRuleTests {
    @Test(arguments: [
        (
            "mutation { addLine(line: {product: \"a\", product: \"b\"}) { id } }",
            #"There can be only one input field named "product"."#
        )
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
