import Testing

@testable import GraphQL

/// ValuesOfCorrectTypeRule: a document that breaks it gets the message a GraphQL server gives.
@Suite struct ValuesOfCorrectTypeRuleTests {
    @Test(arguments: [
        (
            "{ amount(value: \"5\") }",
            #"Expected value of type "Int", found "5"; Int cannot represent non-integer value: "5""#
        ),
        (
            "{ amount(value: 2147483648) }",
            #"Expected value of type "Int", found 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648"#
        ),
        (
            "{ product(id: \"1\") { price(currency: \"EUR\") { amount } } }",
            #"Expected value of type "Currency", found "EUR"; Value ""EUR"" does not exist in "Currency" enum. Did you mean the enum value "EUR"?"#
        ),
        (
            "mutation { addLine(line: {quantity: 2}) { id } }",
            #"Expected value of type "LineInput!", found {quantity: 2}; Field "LineInput.product" of required type "ID!" was not provided."#
        ),
        (
            "mutation { addLine(line: {product: \"p\", extra: 1}) { id } }",
            #"Expected value of type "LineInput!", found {product: "p", extra: 1}; Field "extra" is not defined by type "LineInput"."#
        ),
        (
            "mutation { addLines(lines: [{product: \"p\", quantity: 1.5}]) { id } }",
            #"Expected value of type "[LineInput!]" at "0.quantity", found [{product: "p", quantity: 1.5}]; Int cannot represent non-integer value: 1.5"#
        ),
        (
            "query ($a: Int = \"x\") { amount(value: $a) }",
            #"Expected value of type "Int", found "x"; Int cannot represent non-integer value: "x""#
        ),
    ])
    func reportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }
}
