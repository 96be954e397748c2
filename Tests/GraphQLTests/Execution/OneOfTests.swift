import Testing

@testable import GraphQL

/// OneOf input objects take exactly one field, not null — written in the document or given as a variable's value.
@Suite struct OneOfTests {
    static let pick = TypeReference.nonNull(.named("Pick"))

    @Test func aVariablesValueTakesExactlyOneNonNullField() throws {
        let schema = HarnessSchema.schema
        #expect(
            try InputCoercion.coerce(.object([("id", .string("1"))]), to: Self.pick, in: schema)
                == .object([("id", .string("1"))]))
        for bad: GraphQLValue in [
            .object([("id", .string("1")), ("label", .string("x"))]), .object([]), .object([("id", .null)]),
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try InputCoercion.coerce(bad, to: Self.pick, in: schema) }
        }
    }

    @Test func aLiteralTakesExactlyOneNonNullField() throws {
        #expect(try HarnessSchema.validate("{ pick(by: {label: \"x\"}) { id } }") == [])
        #expect(
            try HarnessSchema.validate("{ pick(by: {id: 1, label: \"x\"}) { id } }").contains {
                $0.contains("must specify exactly one key")
            })
        #expect(
            try HarnessSchema.validate("{ pick(by: {id: null}) { id } }").contains { $0.contains("must be non-null") })
    }
}
