import Testing

@testable import GraphQL

/// ProvidedRequiredArgumentsRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct ProvidedRequiredArgumentsRuleTests {
    @Test(arguments: [
        ("{ product { id } }", #"Field "product" argument "id" of type "ID!" is required, but it was not provided."#),
        (
            "{ cart @include { id } }",
            #"Directive "@include" argument "if" of type "Boolean!" is required, but it was not provided."#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
