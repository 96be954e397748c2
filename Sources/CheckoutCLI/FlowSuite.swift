import CheckoutKit
import Foundation

/// Several flows in one process (`flow run A B dir/ 'smoke-*.json'`, `flow run --all`): one after another in one
/// environment, each in a state scope of its own, reported as one — one JUnit file with a testsuite per flow, one JSON
/// document, a HAR per flow under `--record DIR/` — and summed up in one table.
struct FlowSuite: Sendable {
    struct Member: Sendable {
        var flow: Flow
        var vars: [String: JSON]
        var origins: [String: VariableOrigin] = [:]
    }

    var members: [Member]
    var failFast: Bool
    /// `--repeat N`: each member runs N times.
    var repeatCount = 1
    /// `--parallel P`: P runs at a time, each with its own state scope, connections and listeners.
    var parallel = 1
    /// `--shard i/n`: only this shard's runs (after the repeats).
    var shard: Shard?

    /// What one flow of the suite did, for the summary.
    struct Outcome: Sendable {
        var result: FlowResult
        var retries: Int
        /// For the HTML page: the run's exchanges as the HAR keeps them (redacted).
        var exchanges: [JSON] = []
        /// For JSON and JSONL output: the run as they print it (redacted), made when it ended, so that the run's answers
        /// need not be kept until the batch ends.
        var rendered: [UInt8]?
        var requests: Int { result.steps.reduce(0) { $0 + $1.requests } }
        var verdict: Verdict {
            switch result.exitCode {
            case .ok: .passed
            case .outcomeUnknown: .unknown
            case _ where result.interrupted: .interrupted
            default: .failed
            }
        }
    }

    /// How a run ended, as the summary counts it: money may have moved in an `unknown` one; an `interrupted` one was
    /// stopped by Ctrl-C or SIGTERM, not failed by what it met.
    enum Verdict: String, Sendable {
        case passed, failed, unknown, interrupted
    }

    // MARK: Finding the flows

    /// Built-in names and flow files as `resolve` takes them, every `*.json` file of a directory (in name order), and
    /// the files a quoted glob matches (in name order).
    static func flows(_ words: [String], registry: OperationRegistry) throws(Diagnostic) -> [Flow] {
        var flows: [Flow] = []
        for word in words {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: word, isDirectory: &isDirectory), isDirectory.boolValue {
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: word)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
                guard !names.isEmpty else {
                    throw .usage("the directory \(word) has no flow files (*.json)", hint: "give a directory of flow files, or the files themselves")
                }
                for name in names { flows.append(try FlowFile.load(path: (word as NSString).appendingPathComponent(name), registry: registry)) }
            } else if word.contains(where: { "*?[".contains($0) }) {
                let paths = glob(word).filter { $0.hasSuffix(".json") }
                guard !paths.isEmpty else {
                    throw .usage("no flow file matches '\(word)'", hint: "check the pattern; it is matched against files ending in .json")
                }
                for path in paths { flows.append(try FlowFile.load(path: path, registry: registry)) }
            } else {
                flows.append(try FlowCommands.resolve(word, registry: registry))
            }
        }
        return flows
    }

    /// The paths matching a shell pattern, sorted; none when nothing matches.
    private static func glob(_ pattern: String) -> [String] {
        var found = glob_t()
        defer { globfree(&found) }
        guard Glibc.glob(pattern, 0, nil, &found) == 0 else { return [] }
        return (0..<Int(found.gl_pathc)).compactMap { found.gl_pathv[$0].map { String(cString: $0) } }.sorted()
    }

    // MARK: Shards

    /// `--shard i/n` (1 ≤ i ≤ n) or `auto`, which reads `CI_NODE_INDEX` and `CI_NODE_TOTAL` as GitLab's `parallel:`
    /// sets them (1-based).
    struct Shard: Equatable {
        var index: Int
        var total: Int

        static func parse(_ text: String, environment: [String: String]) throws(Diagnostic) -> Shard {
            if text == "auto" {
                guard let index = environment["CI_NODE_INDEX"].flatMap({ Int($0) }), let total = environment["CI_NODE_TOTAL"].flatMap({ Int($0) }),
                      total >= 1, (1...total).contains(index) else {
                    throw .usage("--shard auto reads CI_NODE_INDEX and CI_NODE_TOTAL (1-based, as GitLab's parallel: sets them), and they are \(environment["CI_NODE_INDEX"] ?? "unset") and \(environment["CI_NODE_TOTAL"] ?? "unset")",
                                 hint: "set both, or give --shard i/n, e.g. --shard 2/4")
                }
                return Shard(index: index, total: total)
            }
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let total = Int(parts[1]), total >= 1, (1...total).contains(index) else {
                throw .usage("--shard expects i/n with 1 ≤ i ≤ n (e.g. 2/4) or auto, got '\(text)'",
                             hint: "shard i of n runs one n-th of the runs: give each of n CI jobs its own i, from 1 to n (docs/qa-ci.md, \"CI shards\")")
            }
            return Shard(index: index, total: total)
        }
    }

    /// The runs of one shard: every run (a flow and which repetition of that name it is) is ranked by a hash of its
    /// name and that number, and dealt round-robin in rank order — so the shards are disjoint, together complete, sized
    /// within one of each other, and the same on every machine whatever order the files were found in.
    static func runs(_ runs: [Member], shard: Shard?) -> [Member] {
        guard let shard else { return runs }
        return offsets(of: runs.map(\.flow.name), shard: shard).map { runs[$0] }
    }

    /// Which of the runs (flows named `names`, in the suite's order) are shard `shard`'s, as offsets in order.
    static func offsets(of names: [String], shard: Shard) -> [Int] {
        guard shard.total > 1 else { return Array(names.indices) }
        var seen: [String: Int] = [:]
        let keyed = names.enumerated().map { offset, name -> (hash: UInt64, offset: Int) in
            let k = seen[name, default: 0]
            seen[name] = k + 1
            return (fnv1a("\(name)#\(k)"), offset)
        }
        let ranked = keyed.sorted { ($0.hash, $0.offset) < ($1.hash, $1.offset) }
        return ranked.enumerated().filter { $0.offset % shard.total == shard.index - 1 }.map(\.element.offset).sorted()
    }

    /// 64-bit FNV-1a of the UTF-8 bytes: small, and the same everywhere (Swift's own hashing is seeded per process).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }

    // MARK: Running

    /// Runs every member, `repeatCount` times each, `parallel` at a time — in order, one at a time, when both are 1
    /// (each flow's own output shown as it runs) — stopping early under `--fail-fast` at the first run that does not
    /// pass, and on Ctrl-C. Answers the suite's exit code: 75 when any outcome is unknown, else 1 when any run failed
    /// (or the interruption's code), else 0.
    func run(in environment: RunEnvironment, registry: OperationRegistry) async throws(Diagnostic) -> ExitCode {
        // Each run keeps its place in the whole suite (its HAR file is numbered by it, the same on every shard).
        let all = members.flatMap { Array(repeating: $0, count: repeatCount) }
        let places = shard.map { Self.offsets(of: all.map(\.flow.name), shard: $0) } ?? Array(all.indices)
        let runs = places.map { all[$0] }
        // A member's repeats are next to each other in `all`: a place's repetition is its offset among them.
        let repetitions = places.map { repeatCount > 1 ? $0 % repeatCount + 1 : nil }
        let live = parallel == 1 && repeatCount == 1 && shard == nil
        let settings = environment.settings, console = environment.console, redactor = environment.redactor
        // Live: each flow's steps as they run (text, jsonl, -v). A batch shows a progress line, then the summary.
        let shared = live ? Reporters(all: environment.makeReporters(recording: false).all.filter { !($0 is JSONReporter) && !($0 is JUnitReporter) && !($0 is HTMLReporter) })
                          : Reporters(all: [])
        let interruption = environment.makeInterruption(stopping: live ? "the current step" : "the runs in flight")
        defer { interruption.stop() }
        let started = ContinuousClock.now
        let progress = Progress(total: runs.count)
        let outcomes = Collector<[Int: Outcome]>([:])
        let stop = Collector(false)

        /// One run; whatever it throws (a listener that cannot start, a report that cannot be written) is that run's
        /// failure, never the batch's: the other runs' outcomes, an unknown one above all, are still reported.
        @Sendable func one(_ index: Int) async {
            let member = runs[index]
            let retries = RetryTally()
            var reporters = shared
            reporters.all.append(retries)
            var recording: HARReporter?
            if let path = settings.recordPath {
                let file = settings.recordsDirectory
                    ? (path as NSString).appendingPathComponent(HARReporter.fileName(flow: member.flow.name, index: places[index] + 1))
                    : path  // one run in all (checked by the command)
                let har = HARReporter(path: file, redactor: redactor)
                reporters.all.append(har)
                recording = har
            }
            // The HTML page is the whole suite's: each run keeps its section, written with the others at the end.
            let page = settings.htmlPath.map { _ in HTMLReporter(path: nil, redactor: redactor) }
            if let page { reporters.all.append(page) }
            let begun = Date()
            // The run's secrets are its own (`Redactor.run`), forgotten once everything the run prints is written — but
            // for the HTML page, which masks every run's answers at the end.
            let secretsOf = settings.htmlPath == nil ? "run \(index)" : nil
            var result: FlowResult = await Redactor.$run.withValue(secretsOf) {
                do throws(Diagnostic) {
                    return try await environment.run(member.flow, vars: member.vars, origins: member.origins, registry: registry, reporters: reporters,
                                                     interruption: interruption, separate: true)
                } catch {
                    return FlowResult(name: member.flow.name, environment: environment.configuration.environment, startedAt: begun,
                                      duration: Date().timeIntervalSince(begun), steps: [], failure: error, captures: [:])
                }
            }
            do throws(Diagnostic) { try recording?.finish() } catch {
                if result.failure == nil { result.failure = error }
            }
            result.repetition = repetitions[index]
            let rendered = Self.rendered(result, format: settings.format, redactor: redactor)
            // The summaries and JUnit read a run's steps, never what they answered, and JSON output has the run as text
            // already: a long batch keeps no run's documents (the HTML page shows them, so it keeps them).
            if settings.htmlPath == nil { result.forgetAnswers() }
            var outcome = Outcome(result: result, retries: retries.count)
            outcome.rendered = rendered
            if let secretsOf {
                // What the summary and JUnit print of the run at the end is masked now, while its secrets are known.
                outcome.result.maskMessages(redactor)
                redactor.forget(run: secretsOf)
            }
            outcome.exchanges = page?.sections.flatMap(\.exchanges) ?? []
            outcomes.mutate { $0[index] = outcome }
            if live, let failure = outcome.result.failure, settings.format == .text { CheckoutDriver.report(failure, console: console) }
            if failFast && !result.passed { stop.mutate { $0 = true } }
            if !live && !settings.quiet { console.progress(progress.record(outcome, since: started)) }
        }

        // `parallel` workers take the next run until none is left (or the suite stops).
        let next = Collector(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(parallel, runs.count) {
                group.addTask {
                    while true {
                        var index = 0
                        next.mutate { index = $0; $0 += 1 }
                        guard index < runs.count, !stop.current, interruption.caught == nil else { return }
                        await one(index)
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        let done = outcomes.current.sorted { $0.key < $1.key }.map(\.value)
        try report(done, planned: runs.count, elapsed: elapsed, live: live, environment: environment)
        var codes = done.map(\.result.exitCode)
        // A signal that came between two runs stopped none of them, yet the suite did not finish.
        if let signal = interruption.caught { codes.append(Interruption.exitCode(for: signal)) }
        return Self.exitCode(codes)
    }

    /// 75 wins (money may have moved), then an interruption, then any other failure.
    static func exitCode(_ codes: [ExitCode]) -> ExitCode {
        if codes.contains(.outcomeUnknown) { return .outcomeUnknown }
        if let stop = codes.first(where: { $0 == .interrupted || $0 == .terminated }) { return stop }
        return codes.allSatisfy { $0 == .ok } ? .ok : .failure
    }

    // MARK: Reporting

    /// The reports kept to the end, in the runs' order whatever order they finished in: the JUnit file, the JSON
    /// document (or, for jsonl, each run's flow_finished line when a batch hid them) and the summary.
    private func report(_ outcomes: [Outcome], planned: Int, elapsed: Duration, live: Bool, environment: RunEnvironment) throws(Diagnostic) {
        let settings = environment.settings, console = environment.console, redactor = environment.redactor
        let summary = Summary(outcomes, planned: planned, elapsed: elapsed)
        if let path = settings.junitPath {
            let junit = JUnitReporter(path: path, redactor: redactor)
            for outcome in outcomes { junit.handle(.flowFinished(outcome.result)) }
            try junit.finish()
        }
        if let path = settings.htmlPath {
            let batch = live ? nil : HTMLReport.Batch(summary: summary, durations: outcomes.map(\.result.duration))
            try HTMLReport.write(outcomes.map { HTMLReport.Section(result: $0.result, exchanges: $0.exchanges) }, batch: batch, to: path, redactor: redactor)
        }
        switch settings.format {
        case .json:
            console.outOutcome(Self.document(flows: outcomes.map { $0.rendered ?? [] }, summary: summary.json))
        case .jsonl:
            if !live { for outcome in outcomes { console.out(String(decoding: outcome.rendered ?? [], as: UTF8.self)) } }
            var line = summary.json.objectValue ?? [:]
            line["event"] = "summary"
            console.outOutcome(JSON.object(line).serialized())
        case .text:
            // -q: a suite that passed says nothing, as a flow that passed says nothing.
            if settings.quiet && summary.passed == planned { return }
            console.out("")
            for row in Self.table(live ? runRows(outcomes) : flowRows(outcomes)) { console.out(row) }
            console.out(summary.line(batch: !live))
            for line in Self.whyNotPassed(outcomes, redactor: redactor) { console.out(line) }
        }
    }

    /// How many runs that did not pass are told one by one under the table; the others are counted.
    static let toldAtMost = 10

    /// A run as JSON output prints it: for `--format json` its member of the document's `flows` (pretty, at the depth it
    /// takes there), for `jsonl` its `flowFinished` line; nothing for text.
    static func rendered(_ result: FlowResult, format: OutputFormat, redactor: Redactor) -> [UInt8]? {
        var out: [UInt8] = []
        switch format {
        case .json: EventJSON.flow(result, redactor: redactor).write(into: &out, pretty: true, indent: 2)
        case .jsonl: EventJSON.event(.flowFinished(result), redactor: redactor).write(into: &out, pretty: false, indent: 0)
        case .text: return nil
        }
        return out
    }

    /// `{"flows": [...], "summary": {...}}` pretty, its runs given as `rendered` made them: the very text of the whole
    /// document serialized at once (a test holds them equal).
    static func document(flows: [[UInt8]], summary: JSON) -> String {
        var out = Array("{\n  \"flows\": ".utf8)
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
            lines.append("\(outcome.verdict.rawValue): \(outcome.result.label): \(redactor.text(failure?.message ?? "no step ran"))")
            if let hint = failure?.hint { lines.append("  hint: \(redactor.text(hint))") }
        }
        if notPassed.count > toldAtMost {
            lines.append("… and \(notPassed.count - toldAtMost) more that did not pass: every one is in --junit FILE and --format json")
        }
        return lines
    }

    /// A suite's table: a row per run.
    private func runRows(_ outcomes: [Outcome]) -> [[String]] {
        [["flow", "result", "duration", "requests", "retries"]] + outcomes.map { o in
            [o.result.label, o.verdict.rawValue, Format.milliseconds(o.result.duration), String(o.requests), String(o.retries)]
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
        let verdicts: [Verdict] = [.passed, .failed, .unknown] + (outcomes.contains { $0.verdict == .interrupted } ? [.interrupted] : [])
        return [["flow", "runs"] + verdicts.map(\.rawValue) + ["p50", "p95", "max"]] + order.map { name in
            let runs = byFlow[name]!
            let d = Summary.percentiles(runs.map(\.result.duration))
            return [name, String(runs.count)] + verdicts.map { verdict in String(runs.filter { $0.verdict == verdict }.count) }
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
            var text = "\(runs) \(batch ? "run" : "flow")\(runs == 1 ? "" : "s"): \(passed) passed, \(failed) failed, \(unknown) unknown"
            if interrupted > 0 { text += ", \(interrupted) interrupted" }
            if notRun > 0 { text += ", \(notRun) not run" }
            text += " in \(Format.milliseconds(seconds))"
            if batch {
                text += String(format: " (%.1f flows/s); duration p50 ", flowsPerSecond) + Format.milliseconds(durations.p50)
                    + ", p95 " + Format.milliseconds(durations.p95) + ", max " + Format.milliseconds(durations.max)
            }
            return text
        }

        var json: JSON {
            func ms(_ s: Double) -> JSON { .number((s * 1000).rounded()) }
            return ["runs": JSON(runs), "passed": JSON(passed), "failed": JSON(failed), "unknown": JSON(unknown),
                    "interrupted": JSON(interrupted), "notRun": JSON(notRun), "durationMs": ms(seconds), "flowsPerSecond": .number((flowsPerSecond * 100).rounded() / 100),
                    "p50Ms": ms(durations.p50), "p95Ms": ms(durations.p95), "maxMs": ms(durations.max)]
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
            return String(format: "%d/%d done, %d failed, %.1f flows/s", now.done, total, now.failed, seconds > 0 ? Double(now.done) / seconds : 0)
        }
    }
}

/// Counts one run's retries (the suite's summary column).
struct RetryTally: Reporter {
    private let tally = Collector(0)

    func handle(_ event: FlowEvent) {
        if case .retrying = event { tally.mutate { $0 += 1 } }
    }

    var count: Int { tally.current }
}
