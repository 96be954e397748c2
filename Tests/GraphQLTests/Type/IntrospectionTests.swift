import Foundation
import Testing

@testable import GraphQL

/// Introspection reads the schema back as GraphQL tools ask for it.
@Suite struct IntrospectionTests {
    let service = GraphQLService(schema: TestSchema.schema, resolvers: Resolvers())

    func object(_ query: String) throws -> [String: Any] {
        let data = service.execute(query: query).jsonData
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test func typeReadsBackFieldsArgumentsAndWrappedTypes() throws {
        let r = try object(
            #"{ __type(name: "Product") { kind name interfaces { name } fields { name args { name defaultValue type { name } } type { kind name ofType { kind name ofType { kind name } } } } } }"#
        )
        #expect(r["errors"] == nil, "\(r)")
        let type = try #require((r["data"] as? [String: Any])?["__type"] as? [String: Any])
        #expect(type["kind"] as? String == "OBJECT")
        #expect((type["interfaces"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Node"])
        let fields = try #require(type["fields"] as? [[String: Any]])
        #expect(
            fields.compactMap { $0["name"] as? String } == ["id", "name", "price", "tags"],
            "deprecated ones left out by default")
        let price = try #require(fields.first { $0["name"] as? String == "price" })
        let arg = try #require((price["args"] as? [[String: Any]])?.first)
        #expect(arg["name"] as? String == "currency" && arg["defaultValue"] as? String == "EUR")
        let tags = try #require(fields.first { $0["name"] as? String == "tags" }?["type"] as? [String: Any])
        #expect(tags["kind"] as? String == "LIST")
        let inner = try #require(tags["ofType"] as? [String: Any])
        #expect(
            inner["kind"] as? String == "NON_NULL"
                && (inner["ofType"] as? [String: Any])?["name"] as? String == "String")
    }

    /// The built-in scalars and directives carry the descriptions the spec gives them, arguments included.
    @Test func builtInsHaveTheSpecsDescriptions() throws {
        let r = try object(
            #"""
            { int: __type(name: "Int") { description } id: __type(name: "ID") { description }
              __schema { directives { name description args { name description defaultValue } } } }
            """#)
        let data = try #require(r["data"] as? [String: Any])
        #expect(
            (data["int"] as? [String: Any])?["description"] as? String
                == "The `Int` scalar type represents non-fractional signed whole numeric values. Int can represent values between -(2^31) and 2^31 - 1."
        )
        #expect(
            ((data["id"] as? [String: Any])?["description"] as? String)?.contains(
                "any string (such as `\"4\"`) or integer") == true)
        let directives = try #require((data["__schema"] as? [String: Any])?["directives"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: directives.map { ($0["name"] as? String ?? "", $0) })
        #expect(
            byName["skip"]?["description"] as? String
                == "Directs the executor to skip this field or fragment when the `if` argument is true.")
        #expect(
            (byName["include"]?["args"] as? [[String: Any]])?.first?["description"] as? String == "Included when true.")
        let reason = (byName["deprecated"]?["args"] as? [[String: Any]])?.first
        #expect((reason?["description"] as? String)?.hasPrefix("Explains why this element was deprecated") == true)
        #expect(reason?["defaultValue"] as? String == "\"No longer supported\"")
        #expect(
            byName["oneOf"]?["description"] as? String
                == "Indicates exactly one field must be supplied and this field must not be `null`.")
        for (name, directive) in byName { #expect((directive["description"] as? String)?.isEmpty == false, "@\(name)") }
    }

    @Test func deprecatedFieldsOnRequestAndEnumsUnionsInputs() throws {
        let r = try object(
            #"""
            { p: __type(name: "Product") { fields(includeDeprecated: true) { name isDeprecated deprecationReason } }
              e: __type(name: "Currency") { enumValues { name } }
              u: __type(name: "SearchResult") { kind possibleTypes { name } }
              i: __type(name: "LineInput") { inputFields { name defaultValue } }
              none: __type(name: "Nope") { name } }
            """#)
        let data = try #require(r["data"] as? [String: Any])
        let old = ((data["p"] as? [String: Any])?["fields"] as? [[String: Any]])?.first {
            $0["name"] as? String == "old"
        }
        #expect(old?["isDeprecated"] as? Bool == true && old?["deprecationReason"] as? String == "use name")
        #expect(
            ((data["e"] as? [String: Any])?["enumValues"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                == ["EUR", "SEK", "USD"])
        #expect(
            ((data["u"] as? [String: Any])?["possibleTypes"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                == ["Cart", "Product"])
        let inputs = (data["i"] as? [String: Any])?["inputFields"] as? [[String: Any]]
        #expect(inputs?.first { $0["name"] as? String == "quantity" }?["defaultValue"] as? String == "1")
        #expect(data["none"] is NSNull)
    }

    /// The query GraphQL tools send (graphql-js's getIntrospectionQuery, abridged to its structure) runs cleanly on
    /// the real Centra schema and lists every type.
    @Test func theToolsIntrospectionQueryRunsOnTheRealSchema() throws {
        let centra = GraphQLService(schema: try Schema(sdl: try ParserTests.centraSDL()), resolvers: Resolvers())
        let query = #"""
            query IntrospectionQuery {
              __schema {
                queryType { name } mutationType { name } subscriptionType { name }
                types { ...FullType }
                directives { name description locations args { ...InputValue } }
              }
            }
            fragment FullType on __Type {
              kind name description
              fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
              inputFields { ...InputValue }
              interfaces { ...TypeRef }
              enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
              possibleTypes { ...TypeRef }
            }
            fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
            fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }
            """#
        let response = try #require(
            try JSONSerialization.jsonObject(with: centra.execute(query: query).jsonData) as? [String: Any])
        #expect(response["errors"] == nil, "\(String(describing: response["errors"]))")
        let schema = try #require((response["data"] as? [String: Any])?["__schema"] as? [String: Any])
        #expect((schema["queryType"] as? [String: Any])?["name"] as? String == "Query")
        let names = Set(((schema["types"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
        #expect(names.isSuperset(of: ["Selection", "PaymentInstructionsInput", "AddressInput", "String", "__Schema"]))
        #expect(names.count == centra.schema.types.count)
    }
}
