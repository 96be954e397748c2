import Foundation
import Testing

@testable import CheckoutKit

/// A flow written back as a flow file reads as the same flow: what a recording keeps of the flow it ran.
@Suite struct FlowEncoderTests {
    static func roundTrips(_ flow: Flow, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let encoded = FlowEncoder.encode(flow)
        let decoded = try FlowFile.decode(
            encoded.data, source: "encoded \(flow.name)", registry: CommandFlowTests.registry)
        #expect(FlowEncoder.encode(decoded) == encoded, "\(flow.name)", sourceLocation: sourceLocation)
        #expect(
            decoded.steps.map(\.name) == flow.steps.map(\.name)
                && decoded.finally.map(\.name) == flow.finally.map(\.name),
            sourceLocation: sourceLocation)
        #expect(
            decoded.vars == flow.vars && decoded.deadline == flow.deadline && decoded.description == flow.description,
            sourceLocation: sourceLocation)
    }

    @Test func everyBuiltinFlowRoundTrips() throws {
        for entry in BuiltinFlows.all {
            let flow = try BuiltinFlows.load(entry, registry: CommandFlowTests.registry)
            try Self.roundTrips(flow)
            // Nothing is lost on the way: the encoding is the source, key for key (the built-ins spell defaults out or
            // leave them out, as the encoder does) — but for includes, which a recording keeps resolved, as the steps
            // ran.
            let source = try JSON.parse(entry.source)
            let steps = FlowEncoder.encode(flow)["steps"]?.arrayValue ?? []
            if source["steps"]?.arrayValue?.contains(where: { $0["include"] != nil }) == true {
                #expect(steps.count == flow.steps.count && !steps.contains { $0["include"] != nil }, "\(entry.name)")
            } else {
                #expect(steps.count == source["steps"]?.arrayValue?.count, "\(entry.name)")
            }
        }
    }

    @Test func aCommandsFlowRoundTripsWithItsOptions() throws {
        var o = CommandFlows.BraintreeApplePay(amount: 1050)
        o.authorizeOnly = true
        o.orderID = "o-1"
        let flow = CommandFlows.braintreeApplePay(o)
        try Self.roundTrips(flow)
        #expect(FlowEncoder.encode(flow)["steps"]?.arrayValue?.last?["with"]?["amount"] == "10.50")
    }

    @Test func everyPartOfAStepIsWritten() throws {
        let text = #"""
            {"name": "all", "description": "d", "deadline": 12, "vars": {"n": 1}, "varDescriptions": {"n": "how many"},
             "steps": [
               {"name": "a", "description": "the first", "request": {"method": "POST", "url": "http://x/${vars.n}", "headers": {"X-A": "1"}, "json": {"k": "v"}},
                "capture": {"id": "$.id"}, "expect": {"status": [200, 201], "equals": {"$.ok": true}, "matches": {"$.id": "^i"}, "exists": ["$.id"]},
                "retry": {"attempts": 4, "interval": 0.5, "backoff": 3}, "optional": true},
               {"name": "b", "request": {"url": "http://x", "body": "raw"}, "until": {"path": "$.s", "in": ["a", "b"], "interval": 2, "timeout": 9}},
               {"name": "c", "request": {"url": "http://x", "bodyFile": "f.json"}, "until": {"path": "$.s", "matches": "^d", "interval": 1, "timeout": 3}},
               {"name": "d", "request": {"url": "http://x"},
                "expect": {"compare": {"total": {">": 0, "<=": "99.99"}, "n": {"between": [1, 5]}}, "contains": {"tags": "a"},
                           "count": {"lines": 2, "items": {">=": 1}}, "type": {"id": "string"},
                           "headers": {"X-A": "1", "X-B": {"matches": "^b"}, "X-C": {"exists": false}}, "duration": {"<": "500ms"}}}
             ],
             "finally": [{"name": "z", "request": {"url": "http://x"}, "until": {"path": "$.s", "exists": false, "interval": 1, "timeout": 3}}]}
            """#
        let flow = try FlowFile.decode(Data(text.utf8), source: "test", registry: CommandFlowTests.registry)
        try Self.roundTrips(flow)
        let encoded = FlowEncoder.encode(flow)
        let a = encoded["steps"]?.arrayValue?[0]
        #expect(
            a?["expect"] == [
                "status": [200, 201], "equals": ["$.ok": true], "matches": ["$.id": "^i"], "exists": ["$.id"],
            ])
        #expect(a?["retry"] == ["attempts": 4, "interval": 0.5, "backoff": 3])
        #expect(a?["capture"] == ["id": "$.id"] && a?["optional"] == true)
        #expect(a?["request"]?["headers"] == ["X-A": "1"] && a?["request"]?["json"] == ["k": "v"])
        #expect(
            encoded["steps"]?.arrayValue?[1]["until"] == [
                "path": "$.s", "in": ["a", "b"], "interval": 2, "timeout": 9,
            ])
        #expect(
            encoded["steps"]?.arrayValue?[1]["request"]?["body"] == "raw"
                && encoded["steps"]?.arrayValue?[2]["request"]?["bodyFile"] == "f.json")
        #expect(encoded["finally"]?.arrayValue?[0]["until"]?["exists"] == false)
        #expect(encoded["deadline"] == 12 && encoded["description"] == "d")
        #expect(encoded["varDescriptions"] == ["n": "how many"] && a?["description"] == "the first")
        #expect(
            encoded["steps"]?.arrayValue?[3]["expect"] == [
                "compare": ["$.total": [">": 0, "<=": "99.99"], "$.n": [">=": 1, "<=": 5]], "contains": ["$.tags": "a"],
                "count": ["$.lines": ["==": 2], "$.items": [">=": 1]], "type": ["$.id": "string"],
                "headers": ["X-A": ["equals": "1"], "X-B": ["matches": "^b"], "X-C": ["exists": false]],
                "duration": ["<": "500ms"],
            ])
    }
}
