import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutCLI
@testable import CheckoutKit

/// A batch keeps of each run only what its reports need: JSON output has each run as the text it prints, made when the
/// run ended, and the document put together from those texts is the one serializing it whole would give.
@Suite struct BatchReportTests {
    static func result(_ name: String, output: JSON) -> FlowResult {
        let step = StepResult(
            name: "confirm", isFinally: false, optional: false, outcome: .passed,
            startedAt: Date(timeIntervalSince1970: 1_700_000_000),
            duration: 0.012, requests: 1, polls: 0, status: 200, message: nil, output: output)
        return FlowResult(
            name: name, environment: "local", startedAt: Date(timeIntervalSince1970: 1_700_000_000), duration: 0.02,
            steps: [step], failure: nil, captures: ["intent": "pi_1"])
    }

    @Test(arguments: [0, 1, 3])
    func theDocumentMadeOfRenderedRunsIsTheWholeDocumentsText(runs: Int) {
        let redactor = Redactor(secrets: ["sk_secret_value"])
        let results = (0..<runs).map {
            Self.result(
                "flow-\($0)",
                output: ["payment_intent": ["id": .string("pi_\($0)"), "nested": [1, 2, ["a": "sk_secret_value"]]]])
        }
        let summary: JSON = ["runs": .number(JSON.Number(runs)), "passed": .number(JSON.Number(runs))]
        let whole = JSON.object([
            "flows": .array(results.map { EventJSON.flow($0, redactor: redactor) }), "summary": summary,
        ]).serialized(pretty: true)
        let pieces = results.map { FlowSuite.rendered($0, format: .json, redactor: redactor) ?? [] }
        #expect(FlowSuite.document(flows: pieces, summary: summary) == whole)
        #expect(!whole.contains("sk_secret_value"))
        for (piece, result) in zip(
            results.map { FlowSuite.rendered($0, format: .jsonl, redactor: redactor) ?? [] }, results)
        {
            #expect(
                String(decoding: piece, as: UTF8.self)
                    == EventJSON.event(.flowFinished(result), redactor: redactor).serialized())
        }
        #expect(
            FlowSuite.rendered(results.first ?? Self.result("x", output: .null), format: .text, redactor: redactor)
                == nil)
    }

    /// What the summary prints of a run at the end is masked as the run ends, while its secrets are still known.
    @Test func aRunsMessagesAreMaskedBeforeItsSecretsAreForgotten() {
        let redactor = Redactor()
        var result = Redactor.$run.withValue("run 0") { () -> FlowResult in
            redactor.register("tok_secret_of_the_run")
            var result = Self.result("flow", output: .null)
            result.failure = .failure(
                "refused: tok_secret_of_the_run was declined", hint: "do not resend tok_secret_of_the_run")
            result.steps[0].message = "declined tok_secret_of_the_run"
            return result
        }
        result.maskMessages(redactor)
        redactor.forget(run: "run 0")
        #expect(result.failure?.message == "refused: \(Redactor.mask) was declined")
        #expect(result.failure?.hint == "do not resend \(Redactor.mask)")
        #expect(result.steps[0].message == "declined \(Redactor.mask)")
        #expect(redactor.text("tok_secret_of_the_run") == "tok_secret_of_the_run", "forgotten after")
    }

    /// A value a run learns is secret only after a step's message quoted it (a later step's check reads it under a
    /// secret key): the JUnit file, written when the batch ends and the run's secrets are forgotten, still masks it.
    @Test func aBatchsJUnitMasksWhatItsRunsLearnedLate() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let secret = "tok_live_learned_late_123456"
        let flow = try s.write(
            "late.json",
            #"""
            {"name": "late", "steps": [
              {"name": "quotes-it", "optional": true, "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "json": {"value": "\#(secret)"}},
               "expect": {"equals": {"json.value": "something else"}}},
              {"name": "learns-it", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "json": {"token": "\#(secret)"}},
               "expect": {"equals": {"json": "not this"}}}]}
            """#)
        let junit = s.path + "/report.xml"
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--env", "sandbox", "--repeat", "2", "-q", "--junit", junit], home: s.path,
            environment: ["EMULATOR_URL": emulator.baseURL])
        #expect(r.status == 1, "\(r.all)")
        #expect(!r.stdout.contains(secret) && !r.stderr.contains(secret), "\(r.all)")
        let report = try String(contentsOfFile: junit, encoding: .utf8)
        #expect(report.contains("quotes-it") && report.contains(Redactor.mask), "\(report)")
        #expect(!report.contains(secret), "\(report)")
    }

    @Test func aRunThatIsOverKeepsHowItsStepsEndedNotWhatTheyAnswered() {
        var result = Self.result("flow", output: ["big": .array(Array(repeating: "x", count: 100))])
        result.forgetAnswers()
        #expect(result.steps.count == 1 && result.steps[0].outcome == .passed && result.steps[0].requests == 1)
        #expect(result.steps[0].output == nil && result.captures.isEmpty)
    }
}
