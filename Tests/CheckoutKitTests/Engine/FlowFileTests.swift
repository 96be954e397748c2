import Crypto
import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutKit

@Suite struct FlowFileTests {
    let registry = OperationRegistry([fetchOperation])

    func decode(_ text: String) throws(Diagnostic) -> Flow {
        try FlowFile.decode(Data(text.utf8), source: "flow.json", registry: registry)
    }

    /// The diagnostic for an invalid flow file; it must be a data error (exit 65).
    func problem(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
        guard let d = diagnostic({ () throws(Diagnostic) in try decode(text) }) else {
            Issue.record("the flow decoded", sourceLocation: sourceLocation)
            return ""
        }
        #expect(d.code == .dataError, sourceLocation: sourceLocation)
        return d.message
    }

    @Test func validFileLoads() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/flow.json"
        try Data(
            #"""
            { "name": "demo", "description": "d", "vars": {"amount": 5}, "deadline": "2s",
              "steps": [
                { "name": "create", "request": { "method": "post", "url": "${env.BASE}/orders",
                    "headers": {"Idempotency-Key": "${uuid}"}, "json": {"amount": "${vars.amount}"} },
                  "expect": { "status": [200, 201], "equals": {"order.amount": 5}, "matches": {"order.id": "^ord_"}, "exists": ["order"] },
                  "capture": { "id": "order.id" }, "retry": {"attempts": 5, "interval": "100ms", "backoff": 1.5} },
                { "name": "poll", "use": "test.fetch", "with": {"url": "${env.BASE}/orders/${vars.id}", "count": 2},
                  "until": { "path": "order.status", "in": ["paid", "failed"], "interval": 0.1, "timeout": "1m" }, "optional": true }
              ],
              "finally": [ { "name": "cleanup", "request": { "method": "DELETE", "url": "${env.BASE}/orders/${steps.create.order.id}" } } ]
            }
            """#.utf8
        ).write(to: URL(fileURLWithPath: path))
        let flow = try FlowFile.load(path: path, registry: registry)
        #expect(flow.name == "demo")
        #expect(flow.vars == ["amount": 5])
        #expect(flow.deadline == 2)
        #expect(flow.steps.map { $0.name } == ["create", "poll"])
        #expect(flow.finally.map { $0.name } == ["cleanup"])
        let create = flow.steps[0]
        guard case .request(let r) = create.action else {
            Issue.record("not a request")
            return
        }
        #expect(r.method == "POST")
        #expect(r.headers.map { $0.name } == ["Idempotency-Key"])
        #expect(create.expect.status == [200, 201])
        #expect(create.expect.conditions.count == 3)
        #expect(create.capture["id"] == JSONPath(components: [.key("order"), .key("id")]))
        #expect(create.retry == RetryPolicy(attempts: 5, interval: 0.1, backoff: 1.5))
        #expect(create.location == "$.steps[0]")
        let poll = flow.steps[1]
        guard case .operation(let name, let args) = poll.action else {
            Issue.record("not an operation")
            return
        }
        #expect(name == "test.fetch")
        #expect(args["count"] == 2)
        #expect(poll.optional)
        #expect(poll.until?.interval == 0.1)
        #expect(poll.until?.timeout == 60)
    }

    /// What `flow describe` shows of a flow: what each variable means and what a step is for.
    @Test func variableAndStepDescriptionsAreKept() throws {
        let flow = try decode(
            #"""
            {"name": "f", "vars": {"amount": 5}, "varDescriptions": {"amount": "minor units"},
             "steps": [{"name": "a", "description": "reads it", "request": {"url": "http://x"}}]}
            """#)
        #expect(flow.varDescriptions == ["amount": "minor units"])
        #expect(flow.steps[0].description == "reads it")
    }

    @Test func aDescriptionOfAnUndeclaredVariableIsRefused() {
        let m = problem(
            #"{"name": "f", "vars": {"amount": 5}, "varDescriptions": {"amout": "minor units"}, "steps": [{"name": "a", "request": {"url": "http://x"}}]}"#
        )
        #expect(
            m.contains("$.varDescriptions.amout: describes 'amout', which is not in \"vars\"; did you mean 'amount'?"),
            "\(m)")
        #expect(
            problem(
                #"{"name": "f", "vars": {"a": 1}, "varDescriptions": {"a": 1}, "steps": [{"name": "a", "request": {"url": "http://x"}}]}"#
            )
            .contains("$.varDescriptions.a: expected a string"))
    }

    @Test func missingFileIsADataError() {
        let d = diagnostic { () throws(Diagnostic) in
            try FlowFile.load(path: "/nonexistent/flow.json", registry: registry)
        }
        #expect(d?.code == .dataError)
        #expect(d?.message.contains("/nonexistent/flow.json") == true)
    }

    @Test func invalidJSON() {
        #expect(problem(#"{"name": "x", "steps": ["#).contains("flow.json: not valid JSON"))
    }

    @Test func unknownKeyWithDidYouMean() {
        let m = problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"expcet":{"status":200}}]}"#)
        #expect(m.contains("$.steps[0].expcet"))
        #expect(m.contains("did you mean 'expect'?"))
    }

    @Test func wrongType() {
        let m = problem(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x"}},
                                 {"name":"b","request":{"url":"http://x"},"expect":{"status":"200"}}]}
            """#)
        #expect(m.contains("$.steps[1].expect.status"))
        #expect(m.contains("found a string"))
    }

    @Test func statusOutOfRange() {
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"expect":{"status":[200,99]}}]}"#)
                .contains("$.steps[0].expect.status[1]"))
    }

    @Test func missingURL() {
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","request":{"method":"GET"}}]}"#).contains(
                "$.steps[0].request.url"))
    }

    @Test func bothOrNeitherRequestAndUse() {
        let both = problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"use":"test.fetch"}]}"#)
        #expect(both.contains("$.steps[0]:"))
        #expect(both.contains("not both"))
        let neither = problem(#"{"name":"f","steps":[{"name":"ok","request":{"url":"http://x"}},{"name":"a"}]}"#)
        #expect(neither.contains("$.steps[1]:"))
        #expect(neither.contains("either 'request'"))
    }

    @Test func duplicateStepNames() {
        let m = problem(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x"}}],
             "finally":[{"name":"a","request":{"url":"http://x"}}]}
            """#)
        #expect(m.contains("$.finally[0].name"))
        #expect(m.contains("duplicate step name 'a'"))
    }

    @Test func stepNamesAreLettersDigitsDashesAndUnderscores() throws {
        // Letters of any script are letters; ASCII is read on bytes, anything else by its Unicode properties.
        let flow = try decode(
            #"{"name":"f","steps":[{"name":"get-1_a","request":{"url":"http://x"}},{"name":"größe2","request":{"url":"http://x"}}]}"#
        )
        #expect(flow.steps.map(\.name) == ["get-1_a", "größe2"])
        for bad in ["a.b", "a b", "größe.x", "a$"] {
            let m = problem(#"{"name":"f","steps":[{"name":"\#(bad)","request":{"url":"http://x"}}]}"#)
            #expect(m.contains("$.steps[0].name: step name '\(bad)' may hold only letters"), "\(bad): \(m)")
        }
    }

    @Test func aMethodIsASCIILetters() throws {
        let flow = try decode(#"{"name":"f","steps":[{"name":"a","request":{"method":"patch","url":"http://x"}}]}"#)
        guard case .request(let r) = flow.steps[0].action else { Issue.record("not a request"); return }
        #expect(r.method == "PATCH")
        for bad in ["GÉT", "GE T", "POST1"] {
            let m = problem(#"{"name":"f","steps":[{"name":"a","request":{"method":"\#(bad)","url":"http://x"}}]}"#)
            #expect(m.contains("$.steps[0].request.method:") && m.contains("is not an HTTP method"), "\(bad): \(m)")
        }
    }

    @Test func referenceToALaterStep() {
        let m = problem(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x/${steps.b.id}"}},
                                 {"name":"b","request":{"url":"http://x"}}]}
            """#)
        #expect(m.contains("$.steps[0]"))
        #expect(m.contains("runs later"))
        let unknown = problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x/${steps.zz.id}"}}]}"#)
        #expect(unknown.contains("does not exist"))
        // A finally step is named by its place in its own list.
        let inFinally = problem(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x"}},{"name":"b","request":{"url":"http://x"}}],
             "finally":[{"name":"c","request":{"url":"http://x"}},{"name":"d","request":{"url":"http://x/${steps.zz.id}"}}]}
            """#)
        #expect(
            inFinally.contains("$.finally[1]: ") && inFinally.contains("'zz', which does not exist"), "\(inFinally)")
    }

    @Test func referenceToAVariableCapturedLater() {
        let m = problem(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x/${vars.id}"}},
                                 {"name":"b","request":{"url":"http://x"},"capture":{"id":"id"}}]}
            """#)
        #expect(m.contains("$.steps[0]"))
        #expect(m.contains("captured by a later step"))
    }

    @Test func finallyMayReferenceAnyStep() throws {
        let flow = try decode(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"capture":{"id":"id"}}],
             "finally":[{"name":"z","request":{"url":"http://x/${steps.a.id}/${vars.id}"}}]}
            """#)
        #expect(flow.finally.count == 1)
    }

    @Test func badRegex() {
        let m = problem(
            #"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"expect":{"matches":{"id":"(unclosed"}}}]}"#
        )
        #expect(m.contains("$.steps[0].expect.matches.id"))
        #expect(m.contains("invalid regular expression"))
    }

    @Test func templateSyntaxErrorNamesThePath() {
        let m = problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x/${vars.id"}}]}"#)
        #expect(m.contains("$.steps[0].request.url"))
        #expect(m.contains("unclosed"))
    }

    @Test func unknownOperationWithDidYouMean() {
        let m = problem(#"{"name":"f","steps":[{"name":"a","use":"test.fecth"}]}"#)
        #expect(m.contains("$.steps[0].use"))
        #expect(m.contains("did you mean 'test.fetch'?"))
    }

    @Test func operationArgumentValidation() {
        let unknown = problem(
            #"{"name":"f","steps":[{"name":"a","use":"test.fetch","with":{"url":"http://x","cuont":1}}]}"#)
        #expect(unknown.contains("$.steps[0].with.cuont"))
        #expect(unknown.contains("did you mean 'count'?"))
        let wrongType = problem(
            #"{"name":"f","steps":[{"name":"a","use":"test.fetch","with":{"url":"http://x","count":"two"}}]}"#)
        #expect(wrongType.contains("$.steps[0].with.count"))
        #expect(wrongType.contains("expected integer, found a string"))
        let missing = problem(#"{"name":"f","steps":[{"name":"a","use":"test.fetch","with":{"count":1}}]}"#)
        #expect(missing.contains("$.steps[0].with"))
        #expect(missing.contains("needs argument 'url'"))
    }

    @Test func templateStringsAreAcceptedForAnyArgumentKind() throws {
        // `count` is an integer parameter: a template is accepted (its value is only known when the step runs) …
        let flow = try decode(
            #"{"name":"f","vars":{"n":2},"steps":[{"name":"a","use":"test.fetch","with":{"url":"http://x","count":"${vars.n}"}}]}"#
        )
        guard case .operation(let name, let arguments) = flow.steps[0].action else {
            Issue.record("not an operation")
            return
        }
        #expect(name == "test.fetch")
        #expect(arguments == ["url": "http://x", "count": "${vars.n}"])
        // … but a plain string is not.
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","use":"test.fetch","with":{"url":"http://x","count":"two"}}]}"#)
                .contains("$.steps[0].with.count: expected integer, found a string"))
    }

    @Test func otherShapeErrors() {
        #expect(problem(#"{"name":"f","steps":[]}"#).contains("$.steps: a flow needs at least one step"))
        #expect(problem(#"{"name":"f"}"#).contains("missing required key 'steps'"))
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a b","request":{"url":"http://x"}}]}"#).contains("$.steps[0].name"))
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x","json":{},"body":"x"}}]}"#).contains(
                "not json and body"))
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"retry":{"backoff":50}}]}"#)
                .contains("$.steps[0].retry.backoff"))
        #expect(
            problem(#"{"name":"f","steps":[{"name":"a","request":{"url":"http://x"},"until":{"path":"s"}}]}"#).contains(
                "$.steps[0].until"))
        #expect(
            problem(#"{"name":"f","deadline":"soon","steps":[{"name":"a","request":{"url":"http://x"}}]}"#).contains(
                "$.deadline"))
    }

    @Test func builtinFlowsDecode() throws {
        // The built-in flows use the real provider operations.
        var real = OperationRegistry(
            BahnOperations.all + CentraOperations.all + CashAppOperations.all + BraintreeOperations.all)
        let signer = try PaymentTokenSigner(
            leafPEM: TestCredentials.applePayLeafCertificatePEM, leafKeyPEM: TestCredentials.applePayLeafPrivateKeyPEM,
            intermediatePEMs: [TestCredentials.applePayIntermediateCertificatePEM])
        let recipient = try P256PublicKey(pem: TestCredentials.paymentProcessingPublicKeyPEM)
        real.register(
            ApplePayOperations.makeToken(
                keys: { (signer, recipient) }, merchantIdentifier: TestCredentials.merchantIdentifier))
        for entry in BuiltinFlows.all {
            let flow = try BuiltinFlows.load(entry, registry: real)
            #expect(flow.name == entry.name)
        }
    }

    @Test func durationsInEveryForm() {
        let cases: [(String, Double?)] = [
            ("1.5", 1.5), ("30", 30), ("250ms", 0.25), ("2s", 2), ("1m", 60), ("5h", 18_000),
            ("1m30s", 90), ("2h15m", 8_100), ("1s500ms", 1.5), (" 2m ", 120), ("\t5s", 5), ("5s\u{A0}", 5),
            ("1M30S", 90),
            ("1s1m", nil), ("1m1m", nil), ("-1", nil), ("+1", nil), ("5 h", nil), ("h", nil), ("", nil),
            ("1x", nil), ("inf", nil),
        ]
        for (text, seconds) in cases { #expect(Duration.seconds(from: text) == seconds, "\(text)") }
    }
}
