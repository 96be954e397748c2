import Testing

@testable import GraphQL

/// Each validation rule on a document that breaks it, with the message a GraphQL server gives; and documents that
/// break none.
@Suite struct ValidationRuleTests {
    @Test func aValidDocumentHasNoErrors() throws {
        let errors = try TestSchema.validate(
            """
            query Q($id: ID!, $currency: Currency = SEK, $skip: Boolean!) {
              product(id: $id) { ...P price(currency: $currency) { amount } }
              search(text: "a") { __typename ... on Cart { id } ...P }
              node(id: $id) { id ... on Product { name @skip(if: $skip) } }
              echo(value: {any: [1, "thing"]})
              rate
            }
            mutation M($lines: [LineInput!]) { addLines(lines: $lines) { id } addLine(line: {product: "p1"}) { id } }
            fragment P on Product { id name }
            """)
        #expect(errors == [])
    }

    @Test func aNullableVariableFitsANonNullPositionWhenADefaultCoversIt() throws {
        #expect(
            try TestSchema.validate(
                "query ($c: Currency = SEK) { product(id: \"1\") { price(currency: $c) { amount } } }") == [])
        // The position's own default covers it too (`first: Int = 10` is nullable already; `currency` has a default).
        #expect(try TestSchema.validate("query ($t: String = \"x\") { search(text: $t) { __typename } }") == [])
    }

    @Test func aFragmentOnTheSameAbstractTypeFitsAndFragmentChainsAreBounded() throws {
        #expect(try TestSchema.validate("{ node(id: \"1\") { ... on Node { id } } }") == [])
        var chain = "query Q { ...F0 }\n"
        for i in 0..<200 { chain += "fragment F\(i) on Query { ...F\(i + 1) }\n" }
        chain += "fragment F200 on Query { amount(value: 1) }"
        #expect(try TestSchema.validate(chain).contains("Fragments nest deeper than 128 levels (201)."))
    }

    @Test func errorsCarryTheirLocations() throws {
        let errors = Validator.validate(try Parser.parse("{\n  cart {\n    nope\n  }\n}"), against: TestSchema.schema)
        #expect(errors.first?.locations == [SourceLocation(line: 3, column: 5)])
    }
}
