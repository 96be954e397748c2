import Foundation
import Testing

@testable import CheckoutKit

@Suite struct TemplateTests {
    let scope = TemplateScope(
        vars: ["x": "ex", "n": 8000, "obj": ["field": "inner", "list": [1, 2]], "flag": true],
        steps: ["create": ["order": ["id": "ord_1", "amount": 12]]],
        env: { $0 == "BASE" ? "http://127.0.0.1:1" : nil },
        state: ["bahn": ["intent": "pi_9"]])

    @Test func everyReferenceKind() throws {
        #expect(try scope.render("${vars.x}") == "ex")
        #expect(try scope.render("${vars.obj.field}") == "inner")
        #expect(try scope.render("${vars.obj.list[1]}") == 2)
        #expect(try scope.render("${steps.create.order.id}") == "ord_1")
        #expect(try scope.render("${env.BASE}/x") == "http://127.0.0.1:1/x")
        #expect(try scope.render("${state.bahn.intent}") == "pi_9")
    }

    @Test func uuidIsALowercaseV4UUID() throws {
        let value = try #require(try scope.render("${uuid}").stringValue)
        #expect(
            value.range(
                of: "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$", options: .regularExpression
            ) != nil)
        #expect(try scope.render("${uuid}") != scope.render("${uuid}"))
    }

    @Test func nowIsISO8601UTCCloseToNow() throws {
        let value = try #require(try scope.render("${now}").stringValue)
        #expect(value.range(of: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#, options: .regularExpression) != nil)
        let date = try Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(value)
        #expect(abs(date.timeIntervalSinceNow) < 5)
    }

    @Test func fallbackAppliesOnlyWhenTheValueIsMissing() throws {
        #expect(try scope.render("${vars.missing|plan-b}") == "plan-b")
        #expect(try scope.render("${env.NOPE|http://fallback}") == "http://fallback")
        #expect(try scope.render("${vars.x|plan-b}") == "ex")
        #expect(try scope.render("id=${steps.create.order.nope|none}") == "id=none")
    }

    @Test func wholeStringReferenceKeepsItsType() throws {
        #expect(try scope.render("${vars.n}") == .number(8000))
        #expect(try scope.render("${vars.flag}") == .bool(true))
        #expect(try scope.render("${vars.obj}") == ["field": "inner", "list": [1, 2]])
        // Interpolated into text, the same values become text.
        #expect(try scope.render("amount ${vars.n}") == "amount 8000")
        #expect(try scope.render("${vars.n}${vars.x}") == "8000ex")
        #expect(try scope.render("o=${vars.obj}") == #"o={"field":"inner","list":[1,2]}"#)
    }

    @Test func rendersNestedJSON() throws {
        let rendered = try scope.render(
            .object(["amount": "${vars.n}", "items": ["${vars.x}", 3], "${vars.x}-key": nil]))
        #expect(rendered == ["amount": 8000, "items": ["ex", 3], "ex-key": nil])
    }

    @Test func dollarDollarEscapesAReference() throws {
        #expect(try scope.render("$${vars.x}") == "${vars.x}")
        #expect(try scope.render("cost: $${vars.n} is ${vars.n}") == "cost: ${vars.n} is 8000")
        #expect(try Template.references(in: "$${env.NOT_A_REFERENCE}").isEmpty)
    }

    @Test func textWithoutReferencesIsUntouched() throws {
        #expect(try scope.render("plain $ text {x}") == "plain $ text {x}")
    }

    @Test func syntaxErrors() {
        #expect(throws: Template.SyntaxError.self) { try Template.parse("${vars.x") }
        #expect(throws: Template.SyntaxError.self) { try Template.parse("${foo.bar}") }
        #expect(throws: Template.SyntaxError.self) { try Template.parse("${vars}") }
        #expect(throws: Template.SyntaxError.self) { try Template.parse("${uuid.x}") }
        do {
            _ = try Template.parse("a ${secrets.x} b")
            Issue.record("an unknown root parsed")
        } catch {
            #expect(error.description.contains("${secrets.x}"))
        }
    }

    @Test func unresolvedReferencesNameWhatIsMissing() {
        do {
            _ = try scope.render("${env.MISSING_VAR}")
            Issue.record("rendered a missing env var")
        } catch let u as TemplateScope.Unresolved {
            #expect(u.missingVariable == "MISSING_VAR")
        } catch { Issue.record("unexpected \(error)") }
        do {
            _ = try scope.render("${steps.create.order.nope}")
            Issue.record("rendered a missing step value")
        } catch let u as TemplateScope.Unresolved {
            #expect(u.missingVariable == nil)
            #expect(u.description.contains("$.order.nope"))
        } catch { Issue.record("unexpected \(error)") }
    }

    @Test func referencesListsEveryReference() throws {
        let refs = try Template.references(in: ["u": "${env.A}/${vars.b}", "list": ["${steps.s.id}"], "k": 1])
        let kinds = refs.compactMap { if case .reference(let r, _, _) = $0 { r } else { nil } }
        #expect(kinds.count == 3)
        #expect(kinds.contains(.env("A")))
        #expect(kinds.contains(.vars("b", .root)))
        #expect(kinds.contains(.steps("s", JSONPath(components: [.key("id")]))))
    }
}
