import Foundation
import Testing
@testable import CheckoutCLI
@testable import CheckoutKit
import TestSupport

/// A batch keeps of each run only what its reports need: JSON output has each run as the text it prints, made when the
/// run ended, and the document put together from those texts is the one serializing it whole would give.
@Suite struct BatchReportTests {
    static func result(_ name: String, output: JSON) -> FlowResult {
        let step = StepResult(name: "confirm", isFinally: false, optional: false, outcome: .passed, startedAt: Date(timeIntervalSince1970: 1_700_000_000),
                              duration: 0.012, requests: 1, polls: 0, status: 200, message: nil, output: output)
        return FlowResult(name: name, environment: "local", startedAt: Date(timeIntervalSince1970: 1_700_000_000), duration: 0.02,
                          steps: [step], failure: nil, captures: ["intent": "pi_1"])
    }

    @Test(arguments: [0, 1, 3])
    func theDocumentMadeOfRenderedRunsIsTheWholeDocumentsText(runs: Int) {
        let redactor = Redactor(secrets: ["sk_secret_value"])
        let results = (0..<runs).map { Self.result("flow-\($0)", output: ["payment_intent": ["id": .string("pi_\($0)"), "nested": [1, 2, ["a": "sk_secret_value"]]]]) }
        let summary: JSON = ["runs": .number(JSON.Number(runs)), "passed": .number(JSON.Number(runs))]
        let whole = JSON.object(["flows": .array(results.map { EventJSON.flow($0, redactor: redactor) }), "summary": summary]).serialized(pretty: true)
        let pieces = results.map { FlowSuite.rendered($0, format: .json, redactor: redactor) ?? [] }
        #expect(FlowSuite.document(flows: pieces, summary: summary) == whole)
        #expect(!whole.contains("sk_secret_value"))
        for (piece, result) in zip(results.map { FlowSuite.rendered($0, format: .jsonl, redactor: redactor) ?? [] }, results) {
            #expect(String(decoding: piece, as: UTF8.self) == EventJSON.event(.flowFinished(result), redactor: redactor).serialized())
        }
        #expect(FlowSuite.rendered(results.first ?? Self.result("x", output: .null), format: .text, redactor: redactor) == nil)
    }

    @Test func aRunThatIsOverKeepsHowItsStepsEndedNotWhatTheyAnswered() {
        var result = Self.result("flow", output: ["big": .array(Array(repeating: "x", count: 100))])
        result.forgetAnswers()
        #expect(result.steps.count == 1 && result.steps[0].outcome == .passed && result.steps[0].requests == 1)
        #expect(result.steps[0].output == nil && result.captures.isEmpty)
    }
}
