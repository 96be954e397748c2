import CheckoutKit
import Foundation

/// Reports are written like every other file the driver produces: atomically, owner-only.
enum ReportFile {
    static func write(_ text: String, to path: String, what: String) throws(Diagnostic) {
        do { try FileIO.write(Data(text.utf8), to: path) } catch {
            throw Diagnostic(error.code, "cannot write the \(what): \(error.message)", hint: error.hint)
        }
    }
}

/// `--record FILE.har`, or `--record DIR/`: a file in that directory named after the flow.
struct HARReporter: Reporter {
    let path: String
    let redactor: Redactor
    let inDirectory: Bool
    private let entries = Collector<[JSON]>([])
    private let flow = Collector<String?>(nil)
    /// The run as `log._run` keeps it: flow, environment, variables, steps.
    private let run = Collector<JSON.Object>([:])

    init(path: String, redactor: Redactor, inDirectory: Bool = false) {
        self.path = path
        self.redactor = redactor
        self.inDirectory = inDirectory
    }

    /// Adds what the events do not carry to `log._run` (a data row's id), before `finish`.
    func note(_ key: String, _ value: JSON?) {
        guard let value else { return }
        run.mutate { $0[key] = value }
    }

    func handle(_ event: FlowEvent) {
        switch event {
        case .flowStarted(let name, let environment, _, _):
            flow.mutate { $0 = $0 ?? name }
            run.mutate {
                if $0["flow"] == nil {
                    $0["flow"] = .string(name)
                    $0["environment"] = .string(environment)
                }
            }
        case .stepFinished(let step):
            var o: JSON.Object = [
                "name": .string(step.name), "outcome": .string(step.outcome.rawValue), "finally": .bool(step.isFinally),
            ]
            if let output = step.output { o["output"] = redactor.json(output) }
            run.mutate { $0["steps"] = .array(($0["steps"]?.arrayValue ?? []) + [.object(o)]) }
        case .exchange(let x):
            let entry = HAR.entry(x, redactor: redactor)
            entries.mutate { $0.append(entry) }
        case .listening(_, let url):
            run.mutate { $0["listeners"] = .array(($0["listeners"]?.arrayValue ?? []) + [.string(redactor.text(url))]) }
        default: break
        }
    }

    func finish() throws(Diagnostic) {
        let recorded = run.current
        // Redacted once more as a whole: a secret learnt late in the run is masked in the entries recorded before it
        // too.
        let doc = redactor.json(
            HAR.document(
                entries: entries.current, creatorVersion: CheckoutDriver.version,
                run: recorded.isEmpty ? nil : .object(recorded)))
        let file =
            inDirectory ? (path as NSString).appendingPathComponent(Self.fileName(flow: flow.current ?? "run")) : path
        try ReportFile.write(doc.serialized(pretty: true) + "\n", to: file, what: "HAR recording")
    }

    /// What a replay needs to run the flow again (docs/qa-ci.md, "Record and replay"), all redacted: the flow as a flow
    /// file (a command's too), the variables it was run with, the environment's kind and non-secret values, and the
    /// state sections it started from (a single step continues a chain).
    func describe(flow: Flow, vars: JSON.Object, configuration: Configuration, state: JSON?) {
        let described: JSON.Object = [
            "definition": redactor.json(FlowEncoder.encode(flow)), "vars": redactor.json(.object(vars)),
            "kind": .string(configuration.kind.rawValue),
            "configuration": redactor.json(.object(JSON.Object(configuration.publicValues.mapValues(JSON.string)))),
        ]
        run.mutate { run in
            run.merge(described) { _, new in new }
            if let state { run["state"] = redactor.json(state) }
        }
    }

    /// `<flow>.har`, or `007-<flow>.har` for the 7th flow of a suite; anything but letters, digits and - becomes _.
    static func fileName(flow: String, index: Int? = nil) -> String {
        let safe = String(flow.map { $0.isLetter || $0.isNumber || $0 == "-" ? $0 : "_" })
        return (index.map { String(format: "%03d-", $0) } ?? "") + safe + ".har"
    }
}

/// `--junit FILE`: a testsuite per flow, a testcase per step.
struct JUnitReporter: Reporter {
    let path: String
    let redactor: Redactor
    private let flows = Collector<[FlowResult]>([])

    init(path: String, redactor: Redactor) {
        self.path = path
        self.redactor = redactor
    }

    func handle(_ event: FlowEvent) {
        if case .flowFinished(let r) = event { flows.mutate { $0.append(r) } }
    }

    func finish() throws(Diagnostic) {
        let results = flows.current
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        // A run that failed as its data row expects fails no test: its failed steps are told, not counted.
        func failing(_ flow: FlowResult) -> [StepResult] {
            flow.expectedFailure == nil ? flow.steps.filter { $0.outcome == .failed && !$0.optional } : []
        }
        // A run that failed with no step to show it (before its first step, or passing where its row expects a
        // failure) has one testcase more, `outcome`, which fails with its error: CI must not see it green.
        func outcomeCase(_ flow: FlowResult) -> Diagnostic? { failing(flow).isEmpty ? flow.failure : nil }
        let failures = results.reduce(0) { $0 + failing($1).count + (outcomeCase($1) == nil ? 0 : 1) }
        let total = results.reduce(0) { $0 + $1.steps.count + (outcomeCase($1) == nil ? 0 : 1) }
        let time = results.reduce(0) { $0 + $1.duration }
        xml +=
            "<testsuites name=\"checkout-driver\" tests=\"\(total)\" failures=\"\(failures)\" time=\(attr(seconds(time)))>\n"
        for flow in results {
            let outcome = outcomeCase(flow)
            let f = failing(flow).count + (outcome == nil ? 0 : 1)
            let skipped = flow.steps.filter { $0.outcome == .skipped }.count
            // A batch's repetitions each have a testsuite of their own name (flow#3), so CI can tell them apart.
            xml +=
                "  <testsuite name=\(attr(flow.label)) tests=\"\(flow.steps.count + (outcome == nil ? 0 : 1))\" failures=\"\(f)\" errors=\"0\" skipped=\"\(skipped)\" time=\(attr(seconds(flow.duration))) timestamp=\(attr(Timestamp.iso8601(flow.startedAt)))>\n"
            xml +=
                "    <properties><property name=\"environment\" value=\(attr(flow.environment))/>"
                + (flow.repetition.map { "<property name=\"repetition\" value=\"\($0)\"/>" } ?? "")
                + (flow.row.map { "<property name=\"row\" value=\(attr($0))/>" } ?? "") + "</properties>\n"
            for step in flow.steps {
                let name = (step.isFinally ? "finally " : "") + step.name
                xml +=
                    "    <testcase classname=\(attr(flow.label)) name=\(attr(name)) time=\(attr(seconds(step.duration)))"
                switch step.outcome {
                case .passed: xml += "/>\n"
                case .skipped:
                    xml += ">\n      <skipped message=\(attr(step.message ?? "skipped"))/>\n    </testcase>\n"
                case .failed:
                    let message = redactor.text(step.message ?? "failed")
                    if step.optional || flow.expectedFailure != nil {
                        let why = step.optional ? "optional step failed: " : "failed as its data row expects: "
                        xml += ">\n      <system-out>\(escape(why + message))</system-out>\n    </testcase>\n"
                    } else {
                        xml +=
                            ">\n      <failure message=\(attr(message)) type=\"StepFailed\">\(escape(message))</failure>\n    </testcase>\n"
                    }
                }
            }
            if let outcome {
                let message = redactor.text(outcome.message)
                xml +=
                    "    <testcase classname=\(attr(flow.label)) name=\"outcome\" time=\"0.000\">\n      <failure message=\(attr(message)) type=\"FlowFailed\">\(escape(message))</failure>\n    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        xml += "</testsuites>\n"
        try ReportFile.write(xml, to: path, what: "JUnit report")
    }

    private func seconds(_ s: Double) -> String { String(format: "%.3f", s) }
    private func attr(_ s: String) -> String { "\"" + escape(s) + "\"" }

    private func escape(_ s: String) -> String { redactor.text(s).markupEscaped }
}
