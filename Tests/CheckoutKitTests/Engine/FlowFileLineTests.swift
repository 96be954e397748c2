import Foundation
import Testing

@testable import CheckoutKit

/// `FlowFile.line(of:in:)`: the line a step's object starts on, which a CI annotation points at.
@Suite struct FlowFileLineTests {
    static let text = """
        {
          "name": "x", "note": "steps: [ {\\"a\\": 1}, ] and a } brace",
          "vars": { "steps": [1, 2, 3] },
          "steps": [
            { "name": "one", "request": { "url": "http://h/[x]", "headers": { "a": "{" } } },
            {
              "name": "two\\"s",
              "request": { "url": "http://h/\\\\" }
            },

            {"name": "three", "expect": { "status": [200, 201] }}
          ],
          "finally": [
            { "name": "last" }
          ]
        }
        """

    @Test(arguments: [
        ("$.steps[0]", 5), ("$.steps[1]", 6), ("$.steps[2]", 11), ("$.finally[0]", 14),
    ])
    func aStepsLineIsWhereItsObjectStarts(location: String, line: Int) throws {
        let bytes = Array(Self.text.utf8)
        let parts = location.split(whereSeparator: { "[].".contains($0) })
        #expect(FlowFile.line(ofElement: Int(parts[2])!, inArray: String(parts[1]), of: bytes) == line)
    }

    @Test func whatIsNotThereHasNoLine() throws {
        let bytes = Array(Self.text.utf8)
        #expect(FlowFile.line(ofElement: 3, inArray: "steps", of: bytes) == nil)
        #expect(FlowFile.line(ofElement: 0, inArray: "vars", of: bytes) == nil)
        #expect(FlowFile.line(ofElement: 0, inArray: "name", of: bytes) == nil)
        #expect(FlowFile.line(of: "$.steps[0]", in: "/nonexistent/flow.json") == nil)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("line-\(UUID()).json").path
        try Data(Self.text.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(FlowFile.line(of: "$.steps[2]", in: path) == 11)
        #expect(FlowFile.line(of: "$.steps[2].request", in: path) == nil)
        #expect(FlowFile.line(of: "steps", in: path) == nil)
    }
}

/// `FlowResult.judge`: what a data row's expected outcome makes of a run.
@Suite struct FlowResultJudgeTests {
    static func result(_ failure: Diagnostic?) -> FlowResult {
        var r = FlowResult(
            name: "f", environment: "local", startedAt: Date(), duration: 0, steps: [], failure: failure, captures: [:])
        r.row = "r1"
        return r
    }

    @Test func aFailureTheRowExpectsPassesAndNothingElseChanges() {
        var failed = Self.result(Diagnostic(.failure, "declined"))
        failed.judge(expectingFailure: true)
        #expect(failed.passed && failed.expectedFailure == "declined")

        var passed = Self.result(nil)
        passed.judge(expectingFailure: true)
        #expect(passed.failure?.code == .failure && passed.failure?.message.contains("row r1 expects") == true)

        // Money in doubt, an interruption, a usage error: never what a row expects.
        for code in [ExitCode.outcomeUnknown, .interrupted, .usage, .dataError] {
            var other = Self.result(Diagnostic(code, "x"))
            other.judge(expectingFailure: true)
            #expect(other.failure?.code == code && other.expectedFailure == nil)
        }
        // A failure after money went into doubt (an optional step's lost answer, a `finally` void) passes no row.
        var doubt = Self.result(Diagnostic(.failure, "declined"))
        doubt.steps = [
            StepResult(
                name: "void", isFinally: true, optional: false, outcome: .failed, startedAt: Date(), duration: 0,
                requests: 1, polls: 0, status: nil, message: nil, output: nil,
                money: [MoneyMovement(provider: "bahn", kind: .void, outcome: .unknown)])
        ]
        doubt.judge(expectingFailure: true)
        #expect(!doubt.passed && doubt.expectedFailure == nil && doubt.leftMoneyOpen)
        var uncertain = Diagnostic(.failure, "lost")
        uncertain.outcomeUncertain = true
        var marked = Self.result(uncertain)
        marked.judge(expectingFailure: true)
        #expect(!marked.passed)

        var asked = Self.result(Diagnostic(.failure, "declined"))
        asked.judge(expectingFailure: false)
        #expect(asked.failure?.message == "declined" && asked.expectedFailure == nil)
    }
}
