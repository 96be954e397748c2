import Foundation
import Testing

@testable import GraphQL

/// The parser: executable documents and SDL, and errors at the token that broke the grammar.
@Suite struct ParserTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func centraSDL() throws -> String {
        try String(
            contentsOf: repoRoot.appendingPathComponent(
                "Sources/SandboxEmulator/Centra/Schema/storefront_api_schema.graphql"), encoding: .utf8)
    }

    @Test func anOperationWithEverything() throws {
        let doc = try Parser.parse(
            """
            query Cart($mode: VOUCHER_MODE = LINES, $ids: [Int!]!) @live {
              sel: selection(voucherMode: $mode) { id ...Lines ... on Selection @include(if: true) { grandTotal { value } } }
              other(list: [1, 2.5, "s", true, null, E, {a: {b: $ids}}])
            }
            fragment Lines on Selection { lines { id } }
            """)
        let op = try #require(doc.operations.first)
        #expect(op.operation == .query && op.name == "Cart")
        #expect(op.variables.map(\.name) == ["mode", "ids"])
        #expect(op.variables[0].defaultValue == .enumValue("LINES"))
        #expect(op.variables[1].type == .nonNull(.list(.nonNull(.named("Int")))))
        #expect(op.directives.map(\.name) == ["live"])
        guard case .field(let sel) = op.selectionSet[0] else {
            Issue.record("a field")
            return
        }
        #expect(sel.alias == "sel" && sel.name == "selection" && sel.responseKey == "sel")
        #expect(sel.arguments.first?.value == .variable("mode"))
        let inner = sel.selectionSet ?? []
        #expect(inner.count == 3)
        if case .fragmentSpread(let s) = inner[1] { #expect(s.name == "Lines") } else { Issue.record("a spread") }
        if case .inlineFragment(let i) = inner[2] {
            #expect(i.typeCondition == "Selection" && i.directives.first?.name == "include")
        } else {
            Issue.record("an inline fragment")
        }
        guard case .field(let other) = op.selectionSet[1] else {
            Issue.record("a field")
            return
        }
        #expect(other.arguments.first?.value.text == #"[1, 2.5, "s", true, null, E, {a: {b: $ids}}]"#)
        #expect(doc.fragments.first?.typeCondition == "Selection")
    }

    @Test func anonymousShorthandAndMutation() throws {
        let doc = try Parser.parse("{ a } mutation M { b(x: 1) { c } }")
        #expect(doc.operations.map(\.operation) == [.query, .mutation])
        #expect(doc.operations[0].name == nil)
    }

    @Test func everySDLConstruct() throws {
        let doc = try Parser.parse(
            #"""
            "The schema" schema { query: Q mutation: M }
            """A scalar"""
            scalar Map @specifiedBy(url: "https://example.com")
            directive @limit(n: Int = 10) repeatable on FIELD_DEFINITION | OBJECT
            interface Node { id: ID! }
            interface Named implements Node & Other { id: ID! name: String }
            type Q implements Node @limit { id: ID! "a field" find(first: Int = 5 @deprecated, "the filter" where: In): [R!]! }
            union R = | Q | M
            enum E { A "b" B @deprecated(reason: "old") }
            input In { a: Int! = 1, b: [E] = [A] }
            extend type Q { extra: Map }
            """#)
        var kinds: [String] = []
        for d in doc.definitions {
            switch d {
            case .schema(let s):
                kinds.append("schema:\(s.description ?? "")")
                #expect(s.operationTypes.map(\.1) == ["Q", "M"])
            case .directive(let d):
                kinds.append("directive")
                #expect(d.repeatable && d.locations == ["FIELD_DEFINITION", "OBJECT"])
            case .type(let t): kinds.append(t.name)
            case .typeExtension(let t): kinds.append("extend " + t.name)
            default: kinds.append("?")
            }
        }
        #expect(kinds == ["schema:The schema", "Map", "directive", "Node", "Named", "Q", "R", "E", "In", "extend Q"])
        guard case .type(let q) = doc.definitions[5], case .object(let interfaces, let fields) = q.kind else {
            Issue.record("type Q")
            return
        }
        #expect(interfaces == ["Node"] && q.directives.map(\.name) == ["limit"])
        #expect(fields[1].description == "a field" && fields[1].arguments.map(\.name) == ["first", "where"])
        #expect(fields[1].arguments[0].defaultValue == .int("5") && fields[1].arguments[1].description == "the filter")
        #expect(fields[1].type == .nonNull(.list(.nonNull(.named("R")))))
        guard case .type(let r) = doc.definitions[6], case .union(let members) = r.kind else {
            Issue.record("union")
            return
        }
        #expect(members == ["Q", "M"])
        guard case .type(let e) = doc.definitions[7], case .enumeration(let values) = e.kind else {
            Issue.record("enum")
            return
        }
        #expect(values.map(\.name) == ["A", "B"] && values[1].description == "b")
        guard case .type(let i) = doc.definitions[8], case .inputObject(let inputs) = i.kind else {
            Issue.record("input")
            return
        }
        #expect(inputs[1].defaultValue == .list([.enumValue("A")]))
        guard case .type(let m) = doc.definitions[1] else {
            Issue.record("scalar")
            return
        }
        #expect(m.description == "A scalar")
    }

    /// Every production of the type system grammar (§3), each extension kind with each thing it may add, directives
    /// at every location, descriptions of every form: the schema "kitchen sink" of this project's own.
    @Test func theWholeTypeSystemGrammar() throws {
        let doc = try Parser.parse(
            #"""
            """The schema as a whole."""
            schema @onSchema { query: Root mutation: Change }
            extend schema @onSchema
            extend schema @onSchema { subscription: Feed }
            extend schema { subscription: Feed }
            """
            A multi-line
            description.
            """
            type Item implements & Node & Named @onObject(arg: "value") {
              "single-line" one: Int
              two("""an argument""" argument: In! = {key: "v", list: [1, 2.5e3]} @onArgumentDefinition): [Item!]! @onFieldDefinition
            }
            type Bare
            extend type Item implements Other
            extend type Item @onObject
            extend type Item { three: String }
            interface Node implements Base @onInterface { id: ID! }
            interface Empty
            extend interface Node implements More
            extend interface Node @onInterface
            extend interface Node { more: Int }
            union Choice @onUnion = | A | B
            union Nothing
            extend union Choice = C | D
            extend union Choice @onUnion
            scalar Stamp @onScalar
            extend scalar Stamp @onScalar
            enum Mode @onEnum { """first""" ON @onEnumValue "second" OFF }
            enum NoModes
            extend enum Mode { AUTO }
            extend enum Mode @onEnum
            input In @onInputObject { key: String! = "k" @onInputFieldDefinition list: [Float] }
            input NoFields
            extend input In { more: Int }
            extend input In @onInputObject
            """A directive."""
            directive @onEverything(a: Int = 1) repeatable on | SCHEMA | SCALAR | OBJECT | FIELD_DEFINITION | ARGUMENT_DEFINITION
              | INTERFACE | UNION | ENUM | ENUM_VALUE | INPUT_OBJECT | INPUT_FIELD_DEFINITION | QUERY | MUTATION | SUBSCRIPTION
              | FIELD | FRAGMENT_DEFINITION | FRAGMENT_SPREAD | INLINE_FRAGMENT | VARIABLE_DEFINITION
            """#)
        #expect(doc.definitions.count == 29)
        var schemaExtensions: [SchemaDefinition] = []
        var extensions: [String] = []
        for definition in doc.definitions {
            if case .schemaExtension(let s) = definition { schemaExtensions.append(s) }
            if case .typeExtension(let t) = definition { extensions.append(t.name) }
        }
        #expect(schemaExtensions.map(\.directives.count) == [1, 1, 0])
        #expect(schemaExtensions.map { $0.operationTypes.map(\.1) } == [[], ["Feed"], ["Feed"]])
        #expect(
            extensions == [
                "Item", "Item", "Item", "Node", "Node", "Node", "Choice", "Choice", "Stamp", "Mode", "Mode", "In", "In",
            ])
        guard case .directive(let directive) = doc.definitions.last else {
            Issue.record("directive")
            return
        }
        #expect(directive.locations.count == 19 && directive.repeatable && directive.description == "A directive.")
    }

    @Test(arguments: [
        ("extend type Item", "Syntax Error: Unexpected <EOF>."),
        ("extend type Item {}", "Syntax Error: Expected Name, found \"}\"."),
        ("extend interface Node", "Syntax Error: Unexpected <EOF>."),
        ("extend union U", "Syntax Error: Unexpected <EOF>."),
        ("extend enum E type T", "Syntax Error: Unexpected Name \"type\"."),
        ("extend input I", "Syntax Error: Unexpected <EOF>."),
        ("extend scalar S", "Syntax Error: Unexpected <EOF>."),
        ("extend schema", "Syntax Error: Unexpected <EOF>."),
        (
            "\"no description on an extension\" extend type T @d",
            "Syntax Error: Unexpected String \"no description on an extension\"."
        ),
        ("directive @d on FIELD | NOWHERE", "Syntax Error: Unexpected Name \"NOWHERE\"."),
        ("directive @d on field", "Syntax Error: Unexpected Name \"field\"."),
    ])
    func incompleteTypeSystemDefinitionsAreSyntaxErrors(text: String, message: String) {
        do {
            _ = try Parser.parse(text)
            Issue.record("\(text) parsed")
        } catch {
            #expect(error.message == message, "\(text)")
        }
    }

    @Test func aSchemaExtensionAddsRootTypesOnce() throws {
        let schema = try Schema(
            sdl: "schema { query: Q } type Q { a: Int } type S { b: Int } extend schema { subscription: S }")
        #expect(schema.subscriptionType == "S")
        #expect(throws: GraphQLError.self) {
            try Schema(sdl: "schema { query: Q } type Q { a: Int } extend schema { query: Q }")
        }
    }

    @Test func theRealSchemasParse() throws {
        let centra = try Parser.parse(try Self.centraSDL())
        #expect(centra.definitions.count > 250)
        let schema = try Schema(document: centra)
        #expect(schema.mutationType == "Mutation")
        #expect(
            schema.field("paymentInstructions", on: "Mutation")?.arguments.first?.type
                == .nonNull(.named("PaymentInstructionsInput")))
        #expect(
            schema.possibleTypes(of: "PaymentAction") == [
                "FormPaymentAction", "JavascriptPaymentAction", "RedirectPaymentAction", "SuccessPaymentAction",
                "SuccessStoredPaymentAction",
            ])
    }

    @Test(arguments: [
        ("{ a", "Syntax Error: Expected Name, found <EOF>.", 1, 4),
        ("query { a(x: ) }", "Syntax Error: Unexpected \")\".", 1, 14),
        ("query Q($v Int) { a }", "Syntax Error: Expected \":\", found Name \"Int\".", 1, 12),
        ("fragment on on T { a }", "Syntax Error: Unexpected Name \"on\".", 1, 10),
        ("{ a }\n\"desc\" query { b }", "Syntax Error: Unexpected String \"desc\".", 2, 1),
        ("type T { f: }", "Syntax Error: Expected Name, found \"}\".", 1, 13),
        ("enum E { true }", "Syntax Error: true is reserved and cannot be used for an enum value.", 1, 10),
        ("query { a(x: $v) }\nfragment F on T @d(x: $v) { a }", "", 0, 0),
    ])
    func syntaxErrorsPointAtTheToken(text: String, message: String, line: Int, column: Int) {
        do {
            _ = try Parser.parse(text)
            #expect(message.isEmpty, "\(text) parsed")
        } catch {
            #expect(error.message == message, "\(text)")
            #expect(error.locations == [SourceLocation(line: line, column: column)], "\(text)")
        }
    }

    /// Nesting is bounded, so a hostile document cannot exhaust a stack: a syntax error, not a crash.
    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "{a", count: 5000) + String(repeating: "}", count: 5000)
        #expect((try? Parser.parse(deep)) == nil)
        do { _ = try Parser.parse(deep) } catch {
            #expect(error.message == "Syntax Error: Document nests deeper than 128 levels.")
        }
        let values = "{ f(a: " + String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000) + ") }"
        #expect(throws: GraphQLError.self) { try Parser.parse(values) }
        let fine = String(repeating: "{a", count: 100) + String(repeating: "}", count: 100)
        #expect((try? Parser.parse(fine)) != nil)
    }

    @Test func variablesAreNotAllowedInConstantPositions() {
        #expect(throws: GraphQLError.self) { try Parser.parse("query Q($a: Int = $b) { f }") }
        #expect(throws: GraphQLError.self) { try Parser.parse("type T { f(a: Int = $x): Int }") }
    }
}
