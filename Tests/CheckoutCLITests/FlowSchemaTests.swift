import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI
@testable import CheckoutKit

/// `flow schema`: the flow format as JSON Schema, built from the decoder's declarations. These tests hold the schema to
/// the decoder and export it, with files it must accept and files it must refuse, for Scripts/check-flow-schema (an
/// independent validator, PyPI `jsonschema`, after the tests).
@Suite struct FlowSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let export = root.appendingPathComponent(".build/flow-schema")

    static let header = #"{"name": "bad", "steps": ["#
    static let token = #"{"name": "t", "use": "applepay.makeToken", "with": "#

    /// Files the decoder refuses, each for a reason the schema can see: the schema must refuse them too.
    static let invalid: [(name: String, text: String)] = [
        ("unknown-key", #"{"name": "bad", "stpes": [], "steps": [{"name": "a", "request": {"url": "http://x"}}]}"#),
        ("no-steps", #"{"name": "bad"}"#),
        ("empty-steps", #"{"name": "bad", "steps": []}"#),
        ("request-and-use", header + #"{"name": "a", "request": {"url": "http://x"}, "use": "bahn.getIntent"}]}"#),
        ("neither-request-nor-use", header + #"{"name": "a"}]}"#),
        ("unknown-operation", header + #"{"name": "a", "use": "bahn.confrim"}]}"#),
        ("unknown-argument", header + token + #"{"amount": 1, "currency": "USD", "amout": 2}}]}"#),
        ("missing-argument", header + token + #"{"amount": 1}}]}"#),
        ("missing-with", header + #"{"name": "a", "use": "applepay.makeToken"}]}"#),
        ("argument-out-of-range", header + token + #"{"amount": 0, "currency": "USD"}}]}"#),
        ("argument-wrong-type", header + token + #"{"amount": "ten", "currency": "USD"}}]}"#),
        ("amount-with-a-comma", header + token + #"{"amount": "12,00", "currency": "USD"}}]}"#),
        ("amount-and-total", header + token + #"{"amount": 1200, "total": "12.00", "currency": "USD"}}]}"#),
        ("neither-amount-nor-total", header + token + #"{"currency": "USD"}}]}"#),
        (
            "choice-unknown",
            header
                + #"{"name": "c", "use": "bahn.confirm", "with": {"intent": "pi_1", "tokenFile": "t.json", "captureMethod": "later"}}]}"#
        ),
        (
            "duration-not-positive",
            header
                + #"{"name": "w", "use": "bahn.awaitWebhook", "with": {"type": "payment_intent.status.succeeded", "timeout": 0}}]}"#
        ),
        ("with-on-a-request", header + #"{"name": "a", "request": {"url": "http://x"}, "with": {}}]}"#),
        ("status-out-of-range", header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"status": 99}}]}"#),
        ("status-empty-list", header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"status": []}}]}"#),
        (
            "until-two-tests",
            header
                + #"{"name": "a", "request": {"url": "http://x"}, "until": {"path": "s", "equals": 1, "exists": true}}]}"#
        ),
        ("retry-no-attempts", header + #"{"name": "a", "request": {"url": "http://x"}, "retry": {"attempts": 0}}]}"#),
        ("header-name", header + #"{"name": "a", "request": {"url": "http://x", "headers": {"Bad Name": "v"}}}]}"#),
        ("two-bodies", header + #"{"name": "a", "request": {"url": "http://x", "json": {}, "body": "b"}}]}"#),
        ("step-name", header + #"{"name": "a b", "request": {"url": "http://x"}}]}"#),
        ("duration", #"{"name": "bad", "deadline": "soon", "steps": [{"name": "a", "request": {"url": "http://x"}}]}"#),
        ("include-with-a-name", header + #"{"include": "emulator-orders", "name": "orders"}]}"#),
        ("include-not-a-string", header + #"{"include": 1}]}"#),
        (
            "compare-not-a-decimal",
            header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"compare": {"n": {"<": "1,000"}}}}]}"#
        ),
        (
            "compare-unknown-operator",
            header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"compare": {"n": {"=<": 1}}}}]}"#
        ),
        (
            "count-negative",
            header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"count": {"n": -1}}}]}"#
        ),
        (
            "type-unknown",
            header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"type": {"n": "float"}}}]}"#
        ),
        (
            "header-two-tests",
            header
                + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"headers": {"X-A": {"equals": "1", "exists": true}}}}]}"#
        ),
        (
            "duration-not-a-duration",
            header + #"{"name": "a", "request": {"url": "http://x"}, "expect": {"duration": {"<": "soon"}}}]}"#
        ),
    ]

    /// A file that uses every part of the format, which both must accept.
    static let everything = #"""
        {"$schema": "./flow.schema.json", "name": "all", "description": "d", "deadline": "1m30s",
         "vars": {"n": 5, "contact": {"a": 1}}, "varDescriptions": {"n": "minor units"},
         "steps": [
           {"name": "a", "description": "raw", "request": {"method": "POST", "url": "http://x/${vars.n}", "headers": {"X-A": "1"}, "json": {"k": "${vars.n}"}},
            "capture": {"id": "$.id"}, "expect": {"status": [200, 201], "equals": {"ok": true}, "matches": {"id": "^i"}, "exists": ["id"]},
            "retry": {"attempts": 4, "interval": "500ms", "backoff": 2}, "optional": true},
           {"name": "b", "use": "applepay.makeToken", "with": {"amount": "${vars.n}", "currency": "USD"},
            "until": {"path": "path", "exists": true, "interval": 1, "timeout": "5s"}},
           {"name": "c", "use": "centra.paymentInstructions", "with": {"shippingAddress": "${vars.contact}", "open": false}},
           {"include": "emulator-orders", "vars": {"amount": 100}, "description": "the emulator's tour"},
           {"name": "d", "request": {"url": "http://x"},
            "expect": {"compare": {"total": {">": 0, "<=": "99.99"}, "n": {"between": [1, "5.5"]}}, "contains": {"tags": "a"},
                       "count": {"lines": 2, "items": {">=": 1}}, "type": {"id": "string"},
                       "headers": {"X-A": "1", "X-B": {"matches": "^b"}, "X-C": {"exists": false}}, "duration": {"<": "500ms", ">=": 0}}}
         ],
         "finally": [{"name": "z", "request": {"url": "http://x", "bodyFile": "f.json"}}]}
        """#

    @Test func theSchemaDescribesWhatTheDecoderAllows() throws {
        let schema = FlowSchema.document(registry: Operations.registry)
        func keys(_ value: JSON?) -> Set<String> { Set(value?["properties"]?.objectValue?.keys ?? []) }
        let defs = try #require(schema["$defs"])
        #expect(keys(schema) == FlowDecoder.Keys.flow)
        #expect(keys(defs["actionStep"]) == FlowDecoder.Keys.step)
        #expect(keys(defs["includeStep"]) == FlowDecoder.Keys.include)
        #expect(keys(defs["request"]) == FlowDecoder.Keys.request)
        #expect(keys(defs["expect"]) == FlowDecoder.Keys.expect)
        #expect(keys(defs["until"]) == FlowDecoder.Keys.until)
        #expect(keys(defs["retry"]) == FlowDecoder.Keys.retry)
        #expect(
            defs["actionStep"]?["properties"]?["use"]?["enum"] == .array(Operations.registry.names.map(JSON.string)))
        for op in Operations.registry.all {
            let with = try #require(defs["with." + op.name], "\(op.name)")
            #expect(keys(with) == Set(op.parameters.map(\.name)), "\(op.name)")
            #expect(with["required"] == .array(op.parameters.filter(\.required).map { .string($0.name) }), "\(op.name)")
        }
        let amount = defs["with.bahn.createIntent"]?["properties"]?["amount"]
        // An amount is digits with an optional fraction, as a number or a string; the currency's digits are flow
        // validate's.
        #expect(
            amount?["anyOf"]?.arrayValue?.first == [
                "anyOf": [
                    ["type": "number", "exclusiveMinimum": 0], ["type": "string", "pattern": "^[0-9]+(\\.[0-9]+)?$"],
                ]
            ])
        #expect(amount?["description"] == "digits are minor units (8000), a decimal is major units (80.00 USD)")
    }

    /// The files the independent check reads: the schema as `flow schema` prints it, every built-in flow as `flow show`
    /// prints it and a file using every part of the format (valid/), and the known-bad files (invalid/), each of which
    /// the decoder is shown here to refuse, and each valid one to accept.
    @Test func schemaAndFilesAreExportedForTheIndependentCheck() async throws {
        let s = try Scratch()
        try? FileManager.default.removeItem(at: Self.export)
        let valid = Self.export.appendingPathComponent("valid")
        let invalid = Self.export.appendingPathComponent("invalid")
        try FileManager.default.createDirectory(at: valid, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: invalid, withIntermediateDirectories: true)

        let schema = try await BinaryRunner.run(["flow", "schema"], home: s.path)
        #expect(schema.status == 0, "\(schema.all)")
        #expect(try JSON.parse(Data(schema.stdout.utf8)) == FlowSchema.document(registry: Operations.registry))
        try Data(schema.stdout.utf8).write(to: Self.export.appendingPathComponent("schema.json"))

        for entry in BuiltinFlows.all {
            let shown = try await BinaryRunner.run(["flow", "show", entry.name], home: s.path)
            try Data(shown.stdout.utf8).write(to: valid.appendingPathComponent(entry.name + ".json"))
        }
        _ = try FlowFile.decode(Data(Self.everything.utf8), source: "everything", registry: Operations.registry)
        try Data(Self.everything.utf8).write(to: valid.appendingPathComponent("everything.json"))

        for (name, text) in Self.invalid {
            let refused: Diagnostic?
            do {
                _ = try FlowFile.decode(Data(text.utf8), source: name, registry: Operations.registry)
                refused = nil
            } catch { refused = error }
            #expect(refused?.code == .dataError, "the decoder refuses \(name)")
            try Data(text.utf8).write(to: invalid.appendingPathComponent(name + ".json"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: valid.path).count == BuiltinFlows.all.count + 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: invalid.path).count == Self.invalid.count)
    }
}
