import Testing

@testable import GraphQL

/// MaxIntrospectionDepthRule: the list fields of __Type nest at most two deep, through fragments too.
@Suite struct MaxIntrospectionDepthRuleTests {
    @Test(arguments: [
        // An introspection query nests the list fields of __Type at most two deep.
        (
            "{ __schema { types { fields { type { fields { type { fields { name } } } } } } } }",
            "Maximum introspection depth exceeded"
        ),
        (
            "{ __type(name: \"Car\") { ...T } } fragment T on __Type { interfaces { possibleTypes { fields { name } } } }",
            "Maximum introspection depth exceeded"
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try HarnessSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }

    @Test(arguments: [
        // Introspection two lists deep.
        "{ __schema { types { fields { type { name ofType { name } } } } } }"
    ])
    func documentsThatOnlySeemToBreakIt(query: String) throws {
        #expect(try HarnessSchema.validate(query) == [], "\(query)")
    }
}
