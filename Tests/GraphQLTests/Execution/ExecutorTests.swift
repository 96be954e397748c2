import Foundation
import Testing

@testable import GraphQL

/// Execution: exactly the selected fields, aliases, fragments, `__typename`, variables and defaults, input coercion,
/// errors with locations and paths, and null propagation.
@Suite struct ExecutorTests {
    static var product: [String: Any] {
        [
            "__typename": "Product", "id": "p1", "name": "Shirt", "tags": ["a", "b"], "old": "x",
            "price": { (info: ResolveInfo) in
                ["amount": 1999, "currency": info.arguments["currency"]?.stringValue ?? "?"] as [String: Any]
            } as FieldFunction,
        ]
    }

    static func service() -> GraphQLService {
        var resolvers = Resolvers()
        resolvers["Query", "product"] = { _, info in
            info.arguments["id"]?.stringValue == "p1" ? ExecutorTests.product : nil
        }
        resolvers["Query", "cart"] = { _, _ in
            [
                "__typename": "Cart", "id": "c1", "total": ["amount": 1999, "currency": "SEK"],
                "lines": [
                    [
                        "id": "l1", "quantity": 2, "product": ExecutorTests.product, "broken": nil as String? as Any,
                        "maybe": nil as String? as Any,
                    ]
                ],
            ] as [String: Any]
        }
        resolvers["Query", "search"] = { _, info in
            [
                ExecutorTests.product,
                ["__typename": "Cart", "id": "c9", "lines": [], "total": ["amount": 0, "currency": "EUR"]]
                    as [String: Any],
            ]
            .prefix(info.arguments["first"]?.intValue ?? 0).map { $0 }
        }
        resolvers["Query", "node"] = { _, _ in ExecutorTests.product }
        resolvers["Query", "echo"] = { _, info in info.arguments["value"] }
        resolvers["Query", "amount"] = { _, info in info.arguments["value"] }
        resolvers["Query", "failing"] = { _, _ in throw GraphQLError("the store is closed") }
        resolvers["Mutation", "addLine"] = { _, info in
            [
                "id": "c1", "lines": [],
                "total": ["amount": info.arguments["line"]?["quantity"]?.intValue ?? -1, "currency": "EUR"],
            ] as [String: Any]
        }
        return GraphQLService(schema: TestSchema.schema, resolvers: resolvers)
    }

    func run(_ query: String, _ variables: GraphQLValue? = nil, operation: String? = nil) -> String {
        Self.service().execute(query: query, operationName: operation, variables: variables).jsonText
    }

    @Test func exactlyTheSelectedFieldsInSelectionOrderWithAliases() {
        #expect(
            run(#"{ p: product(id: "p1") { name id } cart { total { currency } } }"#)
                == #"{"data":{"p":{"name":"Shirt","id":"p1"},"cart":{"total":{"currency":"SEK"}}}}"#)
    }

    @Test func fragmentsInlineFragmentsAndTypename() {
        #expect(
            run(#"{ search(text: "x") { __typename ... on Product { name } ...C } } fragment C on Cart { id }"#)
                == #"{"data":{"search":[{"__typename":"Product","name":"Shirt"},{"__typename":"Cart","id":"c9"}]}}"#)
        #expect(
            run(#"{ node(id: "p1") { id ... on Product { tags } } }"#)
                == #"{"data":{"node":{"id":"p1","tags":["a","b"]}}}"#)
        // The same field twice (directly and through a fragment) is merged, once in the response.
        #expect(
            run(#"{ cart { id ...C } } fragment C on Cart { id total { amount } }"#)
                == #"{"data":{"cart":{"id":"c1","total":{"amount":1999}}}}"#)
    }

    @Test func argumentDefaultsVariablesAndEnums() {
        #expect(
            run(#"{ product(id: "p1") { price { currency } } }"#)
                == #"{"data":{"product":{"price":{"currency":"EUR"}}}}"#)
        #expect(
            run(
                #"query ($c: Currency) { product(id: "p1") { price(currency: $c) { currency } } }"#,
                .object([("c", .string("USD"))]))
                == #"{"data":{"product":{"price":{"currency":"USD"}}}}"#)
        // An absent variable leaves the argument's default in place.
        #expect(
            run(#"query ($c: Currency) { product(id: "p1") { price(currency: $c) { currency } } }"#)
                == #"{"data":{"product":{"price":{"currency":"EUR"}}}}"#)
        // A variable's default applies only when no value is given.
        let withDefault = #"query ($c: Currency = SEK) { product(id: "p1") { price(currency: $c) { currency } } }"#
        #expect(run(withDefault) == #"{"data":{"product":{"price":{"currency":"SEK"}}}}"#)
        #expect(
            run(withDefault, .object([("c", .string("USD"))])) == #"{"data":{"product":{"price":{"currency":"USD"}}}}"#)
        #expect(run(#"{ search(text: "x") { __typename } }"#).contains("Cart"), "first: 10 by default")
        #expect(
            run(#"{ search(text: "x", first: 1) { __typename } }"#)
                == #"{"data":{"search":[{"__typename":"Product"}]}}"#)
    }

    @Test func inputObjectsAreCoercedWithTheirDefaults() {
        #expect(
            run(#"mutation { addLine(line: {product: "p1"}) { total { amount } } }"#)
                == #"{"data":{"addLine":{"total":{"amount":1}}}}"#)
        #expect(
            run(
                #"mutation ($l: LineInput!) { addLine(line: $l) { total { amount } } }"#,
                .object([("l", .object([("product", .int(7)), ("quantity", .int(3))]))]))
                == #"{"data":{"addLine":{"total":{"amount":3}}}}"#, "an int is a fine ID")
    }

    @Test func customScalarsPassThrough() {
        #expect(
            run(#"{ echo(value: {b: [1, "x", true], a: null}) }"#) == #"{"data":{"echo":{"b":[1,"x",true],"a":null}}}"#)
    }

    @Test func skipAndInclude() {
        #expect(
            run(
                #"query ($s: Boolean!) { cart { id @skip(if: $s) total @include(if: false) { amount } } }"#,
                .object([("s", .bool(true))]))
                == #"{"data":{"cart":{}}}"#)
    }

    @Test func aFieldErrorNullsTheFieldWithItsPathAndLocation() {
        #expect(
            run("{\n  cart { id }\n  failing\n}")
                == #"{"errors":[{"message":"the store is closed","locations":[{"line":3,"column":3}],"path":["failing"]}],"data":{"cart":{"id":"c1"},"failing":null}}"#
        )
    }

    @Test func aNullInANonNullFieldNullsTheNearestNullableParent() {
        // Line.broken is String! and resolves to null: the line cannot be null either (Line!), nor the list
        // ([Line!]!), nor the cart (Cart!) — so data itself is null.
        let response = run("{ cart { lines { id broken } } }")
        #expect(
            response
                == #"{"errors":[{"message":"Cannot return null for non-nullable field Line.broken.","locations":[{"line":1,"column":21}],"path":["cart","lines",0,"broken"]}],"data":null}"#
        )
        // A nullable field stops it: maybe is String, so it is only null.
        #expect(run("{ cart { lines { maybe } } }") == #"{"data":{"cart":{"lines":[{"maybe":null}]}}}"#)
    }

    @Test func requestErrorsHaveNoData() {
        #expect(
            run("{ cart { nope } }")
                == #"{"errors":[{"message":"Cannot query field \"nope\" on type \"Cart\".","locations":[{"line":1,"column":10}]}]}"#
        )
        #expect(
            run("{ cart ")
                == #"{"errors":[{"message":"Syntax Error: Expected Name, found <EOF>.","locations":[{"line":1,"column":8}]}]}"#
        )
        #expect(
            run(#"query ($id: ID!) { product(id: $id) { id } }"#)
                == #"{"errors":[{"message":"Variable \"$id\" of required type \"ID!\" was not provided.","locations":[{"line":1,"column":8}]}]}"#
        )
        #expect(
            run(#"query ($v: Int) { amount(value: $v) }"#, .object([("v", .string("5"))]))
                == #"{"errors":[{"message":"Variable \"$v\" got invalid value \"5\"; Int cannot represent non-integer value: \"5\"","locations":[{"line":1,"column":8}]}]}"#
        )
        // GraphQL's Int is 32-bit: a bigger variable value is refused, not truncated or passed on.
        #expect(
            run(#"query ($v: Int) { amount(value: $v) }"#, .object([("v", .int(2_147_483_648))]))
                == #"{"errors":[{"message":"Variable \"$v\" got invalid value 2147483648; Int cannot represent non 32-bit signed integer value: 2147483648","locations":[{"line":1,"column":8}]}]}"#
        )
        #expect(
            run(#"query ($v: Int) { amount(value: $v) }"#, .object([("v", .int(2_147_483_647))]))
                == #"{"data":{"amount":2147483647}}"#)
        #expect(
            run(
                #"mutation ($l: LineInput!) { addLine(line: $l) { id } }"#,
                .object([("l", .object([("quantity", .int(1))]))])
            )
            .contains(#"Field \"product\" of required type \"ID!\" was not provided."#))
    }

    @Test func theOperationIsChosenByName() {
        let doc = "query A { amount(value: 1) } query B { amount(value: 2) }"
        #expect(run(doc, operation: "B") == #"{"data":{"amount":2}}"#)
        #expect(
            run(doc)
                == #"{"errors":[{"message":"Must provide operation name if query contains multiple operations."}]}"#)
        #expect(run(doc, operation: "C") == #"{"errors":[{"message":"Unknown operation named \"C\"."}]}"#)
    }

    /// A document's plans (which fields each selection set selects on each type) are kept with it, so these run each
    /// document again on one service: what a kept plan answers must still follow the request.
    @Test func keptPlansAnswerEachRequestAsAFreshOneWould() {
        let service = Self.service()
        func twice(_ query: String, _ variables: GraphQLValue? = nil, operation: String? = nil) -> [String] {
            (0..<2).map { _ in service.execute(query: query, operationName: operation, variables: variables).jsonText }
        }
        // One selection set on two object types (a union's members), in one response and again in the next.
        let search = #"{ search(text: "x") { __typename ... on Product { name } ...C } } fragment C on Cart { id }"#
        #expect(twice(search) == Array(repeating: run(search), count: 2))
        #expect(run(search).contains(#""name":"Shirt""#) && run(search).contains(#""id":"c9""#))
        // Variables still reach the arguments of a planned field.
        let price = #"query ($c: Currency) { product(id: "p1") { price(currency: $c) { currency } } }"#
        #expect(service.execute(query: price, variables: .object([("c", .string("USD"))])).jsonText.contains("USD"))
        #expect(service.execute(query: price, variables: .object([("c", .string("SEK"))])).jsonText.contains("SEK"))
        // `@skip`/`@include` with a variable select other fields by request.
        let conditional = #"query ($s: Boolean!) { cart { id @skip(if: $s) } }"#
        #expect(
            service.execute(query: conditional, variables: .object([("s", .bool(true))])).jsonText
                == #"{"data":{"cart":{}}}"#)
        #expect(
            service.execute(query: conditional, variables: .object([("s", .bool(false))])).jsonText
                == #"{"data":{"cart":{"id":"c1"}}}"#)
        // One fragment's field alone in one operation, merged with another selection of the same key in the next.
        let merged = #"query X { ...F } query Y { ...F cart { total { amount } } } fragment F on Query { cart { id } }"#
        #expect(twice(merged, operation: "X") == Array(repeating: #"{"data":{"cart":{"id":"c1"}}}"#, count: 2))
        #expect(
            twice(merged, operation: "Y")
                == Array(repeating: #"{"data":{"cart":{"id":"c1","total":{"amount":1999}}}}"#, count: 2))
    }

    /// A resolver's value inside `Any` may be an optional, however deeply; anything else is itself.
    @Test func optionalsInsideAnyAreUnwrapped() {
        #expect(Executor.unwrap(Optional(Optional(5)) as Any) as? Int == 5)
        #expect(Executor.unwrap(Optional<Int?>.some(nil) as Any) == nil)
        #expect(Executor.unwrap(nil as String? as Any) == nil)
        #expect((Executor.unwrap(["a": 1] as [String: Any]) as? [String: Any])?["a"] as? Int == 1)
        #expect((Executor.unwrap(Optional([1, 2]) as Any) as? [Int]) == [1, 2])
        // Through the engine: a dictionary member that is an optional holding a value answers that value.
        let service = Self.service()
        #expect(
            service.execute(query: #"{ product(id: "p1") { name } }"#).jsonText
                == #"{"data":{"product":{"name":"Shirt"}}}"#)
    }

    /// A resolver is told where its field lies in the response, list indexes included.
    @Test func aResolverIsToldItsFieldsPath() {
        var resolvers = Resolvers()
        resolvers["Query", "cart"] = { _, _ in ["id": "c1", "lines": [["id": "l1"], ["id": "l2"]]] as [String: Any] }
        resolvers["Line", "maybe"] = { _, info in
            info.path.map { component -> String in
                switch component {
                case .key(let key): key
                case .index(let index): String(index)
                }
            }.joined(separator: ".")
        }
        let service = GraphQLService(schema: TestSchema.schema, resolvers: resolvers)
        #expect(
            service.execute(query: "{ cart { lines { maybe } } }").jsonText
                == #"{"data":{"cart":{"lines":[{"maybe":"cart.lines.0.maybe"},{"maybe":"cart.lines.1.maybe"}]}}}"#)
    }

    @Test func documentsAreCachedByTheirText() {
        let service = Self.service()
        let query = #"{ product(id: "p1") { name } }"#
        #expect(service.execute(query: query) == service.execute(query: query))
        #expect(service.problems(in: "{ nope }").map(\.message) == [#"Cannot query field "nope" on type "Query"."#])
        #expect(service.problems(in: "{ nope }").count == 1, "a cached failure answers the same")
    }
}
