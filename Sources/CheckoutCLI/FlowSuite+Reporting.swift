import CheckoutKit
import Foundation

/// What a suite tells when it ends: the reports it was asked for, the table of runs and flows, and why a run did not
/// pass.
extension FlowSuite {
    /// The reports kept to the end, in the runs' order whatever order they finished in: the JUnit file, the JSON
    /// document (or, for jsonl, each run's flow_finished line when a batch hid them) and the summary.
    func report(
        _ outcomes: [Outcome], planned: Int, elapsed: Duration, live: Bool, environment: RunEnvironment
    ) throws(Diagnostic) {
        let settings = environment.settings
        let console = environment.console
        let redactor = environment.redactor
        let summary = Summary(outcomes, planned: planned, elapsed: elapsed)
        if let path = settings.output.junitPath {
            let junit = JUnitReporter(path: path, redactor: redactor)
            for outcome in outcomes { junit.handle(.flowFinished(outcome.result)) }
            try junit.finish()
        }
        if let path = settings.output.htmlPath {
            let batch = live ? nil : HTMLReport.Batch(summary: summary, durations: outcomes.map(\.result.duration))
            try HTMLReport.write(
                outcomes.map { HTMLReport.Section(result: $0.result, exchanges: $0.exchanges) }, batch: batch, to: path,
                redactor: redactor)
        }
        switch settings.output.format {
        case .json:
            console.outOutcome(Self.document(flows: outcomes.map { $0.rendered ?? [] }, summary: summary.json))
        case .jsonl:
            if !live {
                for outcome in outcomes { console.out(String(decoding: outcome.rendered ?? [], as: UTF8.self)) }
            }
            var line = summary.json.objectValue ?? [:]
            line["event"] = "summary"
            console.outOutcome(JSON.object(line).serialized())
        case .text:
            // -q: a suite that passed says nothing, as a flow that passed says nothing.
            if !(settings.output.quiet && summary.passed == planned) {
                console.out("")
                for row in Self.table(live ? runRows(outcomes) : flowRows(outcomes)) { console.out(row) }
                console.out(summary.line(batch: !live))
                for line in Self.whyNotPassed(outcomes, redactor: redactor) { console.out(line) }
            }
        }
        // After the output a person or a script reads first, so that a metrics file or a job summary that cannot be
        // written loses none of it; an open outcome's 75 still wins over their 74 (the error is said, not thrown).
        do throws(Diagnostic) {
            try writeCIOutputs(
                outcomes, summary: summary, live: live, settings: settings, console: console, redactor: redactor)
        } catch {
            guard outcomes.contains(where: \.leftMoneyOpen) else { throw error }
            CheckoutDriver.report(error, console: console)
        }
    }

    /// GitHub Actions' annotations, then the files: `--metrics` and the job summary.
    private func writeCIOutputs(
        _ outcomes: [Outcome], summary: Summary, live: Bool, settings: GlobalSettings, console: Console,
        redactor: Redactor
    ) throws(Diagnostic) {
        let actions = settings.output.github ? GitHubActions(redactor: redactor) : nil
        // Beside a JSON document, on standard error (the runner reads both), so that stdout stays one document.
        for line in actions?.annotations(outcomes) ?? [] {
            if settings.output.format == .text { console.out(line) } else { console.err(line) }
        }
        if let path = settings.output.metricsPath {
            var metrics = Metrics()
            for outcome in outcomes { metrics.add(outcome) }
            try Metrics.write(redactor.text(metrics.text), to: path)
        }
        if let actions {
            try GitHubActions.appendSummary(
                actions.summary(
                    outcomes, line: summary.line(batch: !live), table: live ? runRows(outcomes) : flowRows(outcomes)),
                environment: ProcessInfo.processInfo.environment)
        }
    }

    /// How many runs that did not pass are told one by one under the table; the others are counted.
    static let toldAtMost = 10

    /// A run as JSON output prints it: for `--format json` its member of the document's `flows` (pretty, at the depth
    /// it takes there), for `jsonl` its `flowFinished` line; nothing for text.
    static func rendered(_ result: FlowResult, format: OutputFormat, redactor: Redactor) -> [UInt8]? {
        var out: [UInt8] = []
        switch format {
        case .json: EventJSON.flow(result, redactor: redactor).write(into: &out, pretty: true, indent: 2)
        case .jsonl:
            EventJSON.event(.flowFinished(result), redactor: redactor).write(into: &out, pretty: false, indent: 0)
        case .text: return nil
        }
        return out
    }

    /// `{"flows": [...], "summary": {...}}` pretty, its runs given as `rendered` made them: the very text of the whole
    /// document serialized at once (a test holds them equal).
    static func document(flows: [[UInt8]], summary: JSON) -> String {
        var out = Array("{\n  \"flows\": ".utf8)
        // Megabytes for a long batch: made room for once, not grown (and its pages touched) a doubling at a time.
        out.reserveCapacity(flows.reduce(4096) { $0 + $1.count + 6 })
        if flows.isEmpty {
            out += "[]".utf8
        } else {
            out += "[".utf8
            for (i, flow) in flows.enumerated() {
                out += (i > 0 ? ",\n    " : "\n    ").utf8
                out += flow
            }
            out += "\n  ]".utf8
        }
        out += ",\n  \"summary\": ".utf8
        summary.write(into: &out, pretty: true, indent: 1)
        out += "\n}".utf8
        return String(decoding: out, as: UTF8.self)
    }

    /// Under the table, each run that did not pass, as a single flow run tells it: its error and its hint (for an open
    /// outcome, the commands that settle it) — the first `toldAtMost`, then how many more there are and where they are.
    static func whyNotPassed(_ outcomes: [Outcome], redactor: Redactor) -> [String] {
        let notPassed = outcomes.filter { $0.verdict != .passed }
        var lines: [String] = []
        for outcome in notPassed.prefix(toldAtMost) {
            let failure = outcome.result.failure
            lines.append(
                "\(outcome.verdict.rawValue): \(outcome.result.label): \(redactor.text(failure?.message ?? "no step ran"))"
            )
            if let hint = failure?.hint { lines.append("  hint: \(redactor.text(hint))") }
        }
        if notPassed.count > toldAtMost {
            lines.append(
                "… and \(notPassed.count - toldAtMost) more that did not pass: every one is in --junit FILE and --format json"
            )
        }
        return lines
    }

    /// A suite's table: a row per run.
    private func runRows(_ outcomes: [Outcome]) -> [[String]] {
        [["flow", "result", "duration", "requests", "retries"]]
            + outcomes.map { o in
                [
                    o.result.label, o.result.expectedFailure == nil ? o.verdict.rawValue : "failed as expected",
                    Format.milliseconds(o.result.duration), String(o.requests),
                    String(o.retries),
                ]
            }
    }

    /// A batch's table: a row per flow, over its runs; an `interrupted` column when Ctrl-C stopped any.
    private func flowRows(_ outcomes: [Outcome]) -> [[String]] {
        var order: [String] = []
        var byFlow: [String: [Outcome]] = [:]
        for o in outcomes {
            if byFlow[o.result.name] == nil { order.append(o.result.name) }
            byFlow[o.result.name, default: []].append(o)
        }
        let verdicts: [Verdict] =
            [.passed, .failed, .unknown] + (outcomes.contains { $0.verdict == .interrupted } ? [.interrupted] : [])
        return [["flow", "runs"] + verdicts.map(\.rawValue) + ["p50", "p95", "max"]]
            + order.map { name in
                let runs = byFlow[name]!
                let d = Summary.percentiles(runs.map(\.result.duration))
                return [name, String(runs.count)]
                    + verdicts.map { verdict in String(runs.filter { $0.verdict == verdict }.count) }
                    + [Format.milliseconds(d.p50), Format.milliseconds(d.p95), Format.milliseconds(d.max)]
            }
    }

    /// Columns padded to their widest cell.
    static func table(_ rows: [[String]]) -> [String] {
        let widths = (0..<(rows.first?.count ?? 0)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
    }

    /// Counts, rate and durations of the runs that ran.
    struct Summary {
        var runs: Int
        var passed: Int
        var failed: Int
        var unknown: Int
        var interrupted: Int
        var notRun: Int
        var seconds: Double
        var durations: (p50: Double, p95: Double, max: Double)

        init(_ outcomes: [Outcome], planned: Int, elapsed: Duration) {
            runs = outcomes.count
            passed = outcomes.filter { $0.verdict == .passed }.count
            failed = outcomes.filter { $0.verdict == .failed }.count
            unknown = outcomes.filter { $0.verdict == .unknown }.count
            interrupted = outcomes.filter { $0.verdict == .interrupted }.count
            notRun = planned - outcomes.count
            seconds = Self.seconds(elapsed)
            durations = Self.percentiles(outcomes.map(\.result.duration))
        }

        static func seconds(_ d: Duration) -> Double {
            Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        }

        var flowsPerSecond: Double { seconds > 0 ? Double(runs) / seconds : 0 }

        /// Nearest-rank percentiles (the value below which that share of the runs fell); zeros for no runs.
        static func percentiles(_ values: [Double]) -> (p50: Double, p95: Double, max: Double) {
            let sorted = values.sorted()
            guard !sorted.isEmpty else { return (0, 0, 0) }
            func rank(_ p: Double) -> Double { sorted[max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1)] }
            return (rank(0.5), rank(0.95), sorted.last!)
        }

        /// "3 flows: 2 passed, 1 failed, 0 unknown in 1.20 s"; a batch adds its rate and durations.
        func line(batch: Bool) -> String {
            var text =
                "\(runs) \(batch ? "run" : "flow")\(runs == 1 ? "" : "s"): \(passed) passed, \(failed) failed, \(unknown) unknown"
            if interrupted > 0 { text += ", \(interrupted) interrupted" }
            if notRun > 0 { text += ", \(notRun) not run" }
            text += " in \(Format.milliseconds(seconds))"
            if batch {
                text +=
                    String(format: " (%.1f flows/s); duration p50 ", flowsPerSecond)
                    + Format.milliseconds(durations.p50)
                    + ", p95 " + Format.milliseconds(durations.p95) + ", max " + Format.milliseconds(durations.max)
            }
            return text
        }

        var json: JSON {
            func ms(_ s: Double) -> JSON { .number((s * 1000).rounded()) }
            return [
                "runs": JSON(runs), "passed": JSON(passed), "failed": JSON(failed), "unknown": JSON(unknown),
                "interrupted": JSON(interrupted), "notRun": JSON(notRun), "durationMs": ms(seconds),
                "flowsPerSecond": .number((flowsPerSecond * 100).rounded() / 100),
                "p50Ms": ms(durations.p50), "p95Ms": ms(durations.p95), "maxMs": ms(durations.max),
            ]
        }
    }

    /// The batch's live line: done of total, failed, rate.
    struct Progress: Sendable {
        let total: Int
        private let counts = Collector((done: 0, failed: 0))

        init(total: Int) { self.total = total }

        func record(_ outcome: Outcome, since start: ContinuousClock.Instant) -> String {
            var now = (done: 0, failed: 0)
            counts.mutate { c in
                c.done += 1
                if outcome.verdict != .passed { c.failed += 1 }
                now = c
            }
            let seconds = Summary.seconds(ContinuousClock.now - start)
            return String(
                format: "%d/%d done, %d failed, %.1f flows/s", now.done, total, now.failed,
                seconds > 0 ? Double(now.done) / seconds : 0)
        }
    }
}
