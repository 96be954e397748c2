import Foundation
import Synchronization
import Testing
import TestSupport

@testable import CheckoutKit

/// A batch's runs of one flow share what the first learnt of its checks (`PreflightRecord`): the runs after it skip
/// the checks that give the same answer, and make again every check that reads the state file or another file.
@Suite struct PreflightRecordTests {
    /// How often the counted operation's argument check and state check ran.
    final class Counts: Sendable {
        let arguments = Mutex(0)
        let state = Mutex(0)
    }

    /// `test.counted`: counts its checks; its state check refuses a state file whose `gate` is "closed".
    static func countedOperation(_ counts: Counts) -> FlowOperation {
        FlowOperation(
            name: "test.counted", summary: "counts its checks", arguments: FetchArguments.self,
            stateCheck: { document, file throws(Diagnostic) in
                counts.state.withLock { $0 += 1 }
                if document["gate"] == "closed" { throw .data("\(file): the gate is closed") }
            },
            argumentCheck: { _, _ throws(Diagnostic) in counts.arguments.withLock { $0 += 1 } }
        ) { _, _ throws(Diagnostic) in StepOutput(document: .null) }
    }

    /// `test.reads`: reads the JSON object file its `file` names (checked before the run when the path is known).
    struct ReadsArguments: OperationArguments {
        var file: String?
        var url = ""
        static let arguments: [Argument<ReadsArguments>] = [
            .string("file", \.file, input: .jsonObject(what: "test file")), .string("url", \.url),
        ]
    }

    static func readsOperation(_ counts: Counts) -> FlowOperation {
        FlowOperation(
            name: "test.reads", summary: "reads a file", arguments: ReadsArguments.self,
            argumentCheck: { _, _ throws(Diagnostic) in counts.arguments.withLock { $0 += 1 } }
        ) { _, _ throws(Diagnostic) in StepOutput(document: ["path": "x"]) }
    }

    struct Setup {
        var harness = Harness()
        let counts = Counts()
        let scratch: Scratch
        let state: StateStore

        init() throws {
            scratch = try Scratch()
            state = StateStore(path: scratch.path + "/state.json")
            harness.registry.register(PreflightRecordTests.countedOperation(counts))
            harness.registry.register(PreflightRecordTests.readsOperation(counts))
            harness.env = ["BASE": "http://127.0.0.1:9"]
            harness.state = state
        }

        /// A runner with `record`, as a batch's run has one.
        func runner(_ record: PreflightRecord) -> FlowRunner {
            var runner = harness.runner()
            runner.preflightRecord = record
            return runner
        }

        func setState(_ document: JSON) throws {
            try state.update { (doc: inout JSON) throws(Diagnostic) in doc = document }
        }
    }

    static let counted = #"""
        {"name":"f","vars":{"tag":"t"},"steps":[{"name":"a","use":"test.counted",
          "with":{"url":"${env.BASE}/a/${vars.who}","tag":"${vars.tag}"}}]}
        """#

    @Test func aRepeatMakesOnlyTheStateFilesChecksAgain() throws {
        let setup = try Setup()
        let flow = try setup.harness.flow(Self.counted)
        let record = PreflightRecord()
        for _ in 0..<3 { try setup.runner(record).preflight(flow, vars: ["who": "me"]) }
        #expect(setup.counts.arguments.withLock { $0 } == 1, "the argument check gives the same answer")
        #expect(setup.counts.state.withLock { $0 } == 3, "the state file's check is made for each run")
        // ... and still stops a run: another run closed the gate meanwhile.
        try setup.setState(["gate": "closed"])
        #expect(throws: Diagnostic.self) { try setup.runner(record).preflight(flow, vars: ["who": "me"]) }
        // Without a record, each run makes every check.
        try setup.setState(["gate": "open"])
        for _ in 0..<2 { try setup.runner(PreflightRecord()).preflight(flow, vars: ["who": "me"]) }
        #expect(setup.counts.arguments.withLock { $0 } == 3)
    }

    @Test func otherVariablesAreCheckedWhole() throws {
        let setup = try Setup()
        let flow = try setup.harness.flow(Self.counted)
        let record = PreflightRecord()
        try setup.runner(record).preflight(flow, vars: ["who": "me"])
        try setup.runner(record).preflight(flow, vars: ["who": "you"])
        #expect(setup.counts.arguments.withLock { $0 } == 2)
        let missing = diagnostic { () throws(Diagnostic) in try setup.runner(record).preflight(flow, vars: [:]) }
        #expect(missing?.message.contains("${vars.who}") == true, "\(String(describing: missing))")
    }

    @Test func aFlowThatReadsTheStateFileIsCheckedWholeEachTime() throws {
        let setup = try Setup()
        try setup.setState(["order": ["id": "ord_1"]])
        let flow = try setup.harness.flow(
            #"""
            {"name":"f","steps":[{"name":"a","use":"test.counted","with":{"url":"${env.BASE}/a",
              "tag":"${state.order.id}"}}]}
            """#)
        let record = PreflightRecord()
        try setup.runner(record).preflight(flow, vars: [:])
        try setup.setState([:])
        let gone = diagnostic { () throws(Diagnostic) in try setup.runner(record).preflight(flow, vars: [:]) }
        #expect(gone?.message.contains("is not in the state file") == true, "\(String(describing: gone))")
        // (A reference with a fallback reads the state file too: its value is rendered from it.)
        let fallback = try setup.harness.flow(
            #"""
            {"name":"f","steps":[{"name":"a","use":"test.counted","with":{"url":"${env.BASE}/a",
              "tag":"${state.order.id|none}"}}]}
            """#)
        for _ in 0..<2 { try setup.runner(record).preflight(fallback, vars: [:]) }
        #expect(setup.counts.arguments.withLock { $0 } == 3)
    }

    @Test func aFlowThatReadsAFileIsCheckedWholeEachTime() throws {
        let setup = try Setup()
        let body = try setup.scratch.write("body.json", "{}")
        let flow = try setup.harness.flow(
            #"{"name":"f","steps":[{"name":"a","request":{"method":"POST","url":"${env.BASE}/a","bodyFile":"\#(body)"}}]}"#
        )
        let record = PreflightRecord()
        try setup.runner(record).preflight(flow, vars: [:])
        try FileManager.default.removeItem(atPath: body)
        let gone = diagnostic { () throws(Diagnostic) in try setup.runner(record).preflight(flow, vars: [:]) }
        #expect(gone?.message.contains("cannot read bodyFile") == true, "\(String(describing: gone))")
    }

    @Test func anInputFileKnownBeforeTheRunIsReadForEachRun() throws {
        let setup = try Setup()
        let file = try setup.scratch.write("details.json", #"{"a": 1}"#)
        let flow = try setup.harness.flow(
            #"{"name":"f","steps":[{"name":"a","use":"test.reads","with":{"file":"${vars.file}","url":"u"}}]}"#)
        let record = PreflightRecord()
        try setup.runner(record).preflight(flow, vars: ["file": .string(file)])
        _ = try setup.scratch.write("details.json", "[1]")
        let wrong = diagnostic { () throws(Diagnostic) in
            try setup.runner(record).preflight(flow, vars: ["file": .string(file)])
        }
        #expect(wrong?.message.contains("test file") == true, "\(String(describing: wrong))")
        // One a step makes (a path known only as the run goes) is read by that step: the rest is checked once.
        let later = try setup.harness.flow(
            #"""
            {"name":"f","steps":[{"name":"make","use":"test.reads","with":{"url":"u"}},
              {"name":"use","use":"test.reads","with":{"file":"${steps.make.path}","url":"u"}}]}
            """#)
        let other = PreflightRecord()
        for _ in 0..<3 { try setup.runner(other).preflight(later, vars: [:]) }
        #expect(setup.counts.arguments.withLock { $0 } == 2 + 2, "two runs of the first flow, one of the second")
    }
}
