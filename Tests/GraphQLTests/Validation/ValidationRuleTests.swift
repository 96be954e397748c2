import Testing
@testable import GraphQL

/// Each validation rule on a document that breaks it, with the message a GraphQL server gives; and documents that
/// break none.
@Suite struct ValidationRuleTests {
    @Test func aValidDocumentHasNoErrors() throws {
        let errors = try TestSchema.validate("""
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

    @Test(arguments: [
        // ExecutableDefinitions
        ("{ cart { id } } type T { a: Int }", #"The "T" definition is not executable."#),
        // UniqueOperationNames
        ("query A { cart { id } } query A { cart { id } }", #"There can be only one operation named "A"."#),
        // LoneAnonymousOperation
        ("{ cart { id } } query B { cart { id } }", "This anonymous operation must be the only defined operation."),
        // KnownTypeNames
        ("query ($x: Nope) { amount(value: 1) }", #"Unknown type "Nope"."#),
        // FragmentsOnCompositeTypes
        ("{ cart { ...F } } fragment F on Int { a }", #"Fragment "F" cannot condition on non composite type "Int"."#),
        // VariablesAreInputTypes
        ("query ($x: Cart) { amount(value: 1) }", #"Variable "$x" cannot be non-input type "Cart"."#),
        // ScalarLeafs
        ("{ cart { id { x } } }", #"Field "id" must not have a selection since type "ID!" has no subfields."#),
        ("{ cart }", #"Field "cart" of type "Cart!" must have a selection of subfields. Did you mean "cart { ... }"?"#),
        // FieldsOnCorrectType
        ("{ cart { nope } }", #"Cannot query field "nope" on type "Cart"."#),
        ("{ search(text: \"a\") { id } }", #"Cannot query field "id" on type "SearchResult"."#),
        // UniqueFragmentNames
        ("{ cart { ...F } } fragment F on Cart { id } fragment F on Cart { id }", #"There can be only one fragment named "F"."#),
        // KnownFragmentNames
        ("{ cart { ...Missing } }", #"Unknown fragment "Missing"."#),
        // NoUnusedFragments
        ("{ cart { id } } fragment Unused on Cart { id }", #"Fragment "Unused" is never used."#),
        // PossibleFragmentSpreads
        ("{ cart { ... on Product { id } } }", #"Fragment cannot be spread here as objects of type "Cart" can never be of type "Product"."#),
        ("{ cart { ...P } } fragment P on Product { id }", #"Fragment "P" cannot be spread here as objects of type "Cart" can never be of type "Product"."#),
        // NoFragmentCycles
        ("{ cart { ...A } } fragment A on Cart { ...B } fragment B on Cart { ...A }", #"Cannot spread fragment "A" within itself via "B"."#),
        // UniqueVariableNames
        ("query ($a: Int, $a: Int) { amount(value: $a) }", #"There can be only one variable named "$a"."#),
        // NoUndefinedVariables (through a fragment too)
        ("query Q { amount(value: $nope) }", #"Variable "$nope" is not defined by operation "Q"."#),
        ("query Q { ...F } fragment F on Query { amount(value: $inFragment) }", #"Variable "$inFragment" is not defined by operation "Q"."#),
        // NoUnusedVariables
        ("query Q($unused: Int) { amount(value: 1) }", #"Variable "$unused" is never used in operation "Q"."#),
        // KnownDirectives
        ("{ cart @nope { id } }", #"Unknown directive "@nope"."#),
        ("query @skip(if: true) { cart { id } }", #"Directive "@skip" may not be used on QUERY."#),
        // UniqueDirectivesPerLocation
        ("{ cart @skip(if: true) @skip(if: false) { id } }", #"The directive "@skip" can only be used once at this location."#),
        // KnownArgumentNames
        ("{ cart(nope: 1) { id } }", #"Unknown argument "nope" on field "Query.cart"."#),
        ("{ cart @skip(when: true) { id } }", #"Unknown argument "when" on directive "@skip"."#),
        // UniqueArgumentNames
        ("{ amount(value: 1, value: 2) }", #"There can be only one argument named "value"."#),
        // ValuesOfCorrectType
        ("{ amount(value: \"5\") }", #"Expected value of type "Int", found "5"; Int cannot represent non-integer value: "5""#),
        ("{ amount(value: 2147483648) }", #"Expected value of type "Int", found 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648"#),
        ("{ product(id: \"1\") { price(currency: \"EUR\") { amount } } }", #"Expected value of type "Currency", found "EUR"; Value ""EUR"" does not exist in "Currency" enum. Did you mean the enum value "EUR"?"#),
        ("mutation { addLine(line: {quantity: 2}) { id } }", #"Expected value of type "LineInput!", found {quantity: 2}; Field "LineInput.product" of required type "ID!" was not provided."#),
        ("mutation { addLine(line: {product: \"p\", extra: 1}) { id } }", #"Expected value of type "LineInput!", found {product: "p", extra: 1}; Field "extra" is not defined by type "LineInput"."#),
        ("mutation { addLines(lines: [{product: \"p\", quantity: 1.5}]) { id } }", #"Expected value of type "[LineInput!]" at "0.quantity", found [{product: "p", quantity: 1.5}]; Int cannot represent non-integer value: 1.5"#),
        ("query ($a: Int = \"x\") { amount(value: $a) }", #"Expected value of type "Int", found "x"; Int cannot represent non-integer value: "x""#),
        // ProvidedRequiredArguments
        ("{ product { id } }", #"Field "product" argument "id" of type "ID!" is required, but it was not provided."#),
        ("{ cart @include { id } }", #"Directive "@include" argument "if" of type "Boolean!" is required, but it was not provided."#),
        // VariablesInAllowedPosition
        ("query ($id: ID) { product(id: $id) { id } }", #"Variable "$id" of type "ID" used in position expecting type "ID!"."#),
        ("query ($n: String) { amount(value: $n) }", #"Variable "$n" of type "String" used in position expecting type "Int"."#),
        ("mutation ($p: String!) { addLine(line: {product: $p}) { id } }", #"Variable "$p" of type "String!" used in position expecting type "ID!"."#),
        // KnownRootType (the test schema has no subscriptions)
        ("subscription { cart { id } }", "Schema is not configured to execute subscription operation."),
        // UniqueInputFieldNames
        ("mutation { addLine(line: {product: \"a\", product: \"b\"}) { id } }", #"There can be only one input field named "product"."#),
    ])
    func eachRuleReportsItsError(query: String, message: String) throws {
        let errors = try TestSchema.validate(query)
        #expect(errors.contains(message), "\(query)\n got: \(errors)")
    }

    @Test func aNullableVariableFitsANonNullPositionWhenADefaultCoversIt() throws {
        #expect(try TestSchema.validate("query ($c: Currency = SEK) { product(id: \"1\") { price(currency: $c) { amount } } }") == [])
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
