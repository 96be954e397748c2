import CheckoutKit
import Foundation

/// Several flows in one process (`flow run A B dir/ 'smoke-*.json'`, `flow run --all`): one after another in one
/// environment, each in a state scope of its own, reported as one — one JUnit file with a testsuite per flow, one JSON
/// document, a HAR per flow under `--record DIR/` — and summed up in one table.
struct FlowSuite: Sendable {
    struct Member: Sendable {
        var flow: Flow
        var vars: JSON.Object
        var origins: [String: VariableOrigin] = [:]
        /// The `--data` row the run takes its values from.
        var row: DataRow?
        /// What the member's first run learnt of its checks, shared by its repeats (a copy shares it; a `--data` row,
        /// whose variables are its own, gets one of its own).
        var preflight = PreflightRecord()

        /// What shards rank a run by, with its repetition: the flow, and the row's id (so a row's runs go to the same
        /// shards on every machine whatever the file's order).
        var shardKey: String { flow.name + (row.map { "[\($0.id)]" } ?? "") }
    }

    var members: [Member]
    var failFast: Bool
    /// `--repeat N`: each member runs N times.
    var repeatCount = 1
    /// `--parallel P`: P runs at a time, each with its own state scope, connections and listeners.
    var parallel = 1
    /// `--shard i/n`: only this shard's runs (after the repeats).
    var shard: Shard?
    /// One flow run once, as a suite only for its reports (GitHub Actions, `--metrics`): its exit code is the run's
    /// own, as a single flow's is anywhere.
    var singleRun = false

    /// What one flow of the suite did, for the summary.
    struct Outcome: Sendable {
        var result: FlowResult
        var retries: Int
        /// For the HTML page: the run's exchanges as the HAR keeps them (redacted).
        var exchanges: [JSON] = []
        /// For JSON and JSONL output: the run as they print it (redacted), made when it ended, so that the run's
        /// answers need not be kept until the batch ends.
        var rendered: [UInt8]?
        /// The flow that ran: where it came from, for a CI annotation pointing at its failing step.
        var flow: Flow?
        /// The HTTP answers the run got, by status code ("error": none, a transport failure), for `--metrics`.
        var statuses: [String: Int] = [:]
        var requests: Int { result.steps.reduce(0) { $0 + $1.requests } }
        /// Money in doubt after the run: its exit code says so, or a step left a movement unknown before another
        /// failure decided the code.
        var leftMoneyOpen: Bool { verdict == .unknown || result.leftMoneyOpen }
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
                let names = ((try? FileManager.default.contentsOfDirectory(atPath: word)) ?? []).filter {
                    $0.hasSuffix(".json")
                }.sorted()
                guard !names.isEmpty else {
                    throw .usage(
                        "the directory \(word) has no flow files (*.json)",
                        hint: "give a directory of flow files, or the files themselves")
                }
                for name in names {
                    flows.append(
                        try FlowFile.load(path: (word as NSString).appendingPathComponent(name), registry: registry))
                }
            } else if word.contains(where: { "*?[".contains($0) }) {
                let paths = glob(word).filter { $0.hasSuffix(".json") }
                guard !paths.isEmpty else {
                    throw .usage(
                        "no flow file matches '\(word)'",
                        hint: "check the pattern; it is matched against files ending in .json")
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

    // MARK: Running

    /// Runs every member, `repeatCount` times each, `parallel` at a time — in order, one at a time, when both are 1
    /// (each flow's own output shown as it runs) — stopping early under `--fail-fast` at the first run that does not
    /// pass, and on Ctrl-C. Answers the suite's exit code: 75 when any outcome is unknown, else 1 when any run failed
    /// (or the interruption's code), else 0.
    func run(in environment: RunEnvironment, registry: OperationRegistry) async throws(Diagnostic) -> ExitCode {
        // Each run keeps its place in the whole suite (its HAR file is numbered by it, the same on every shard).
        let all = members.flatMap { Array(repeating: $0, count: repeatCount) }
        let places = shard.map { Self.offsets(of: all.map(\.shardKey), shard: $0) } ?? Array(all.indices)
        let runs = places.map { all[$0] }
        // A member's repeats are next to each other in `all`: a place's repetition is its offset among them.
        let repetitions = places.map { repeatCount > 1 ? $0 % repeatCount + 1 : nil }
        // A data file's rows are judged when each ends: JSON and JSONL print them then, as a batch's.
        let live =
            parallel == 1 && repeatCount == 1 && shard == nil
            && (environment.settings.output.format == .text || !members.contains { $0.row != nil })
        let settings = environment.settings
        let console = environment.console
        let redactor = environment.redactor
        // Live: each flow's steps as they run (text, jsonl, -v). A batch shows a progress line, then the summary.
        let shared =
            live
            ? Reporters(
                all: environment.session.makeReporters(recording: false).all.filter {
                    !($0 is JSONReporter) && !($0 is JUnitReporter) && !($0 is HTMLReporter)
                })
            : Reporters(all: [])
        let interruption = environment.session.makeInterruption(
            stopping: live ? "the current step" : "the runs in flight")
        defer { interruption.stop() }
        let started = ContinuousClock.now
        let progress = Progress(total: runs.count)
        let outcomes = Collector<[Int: Outcome]>([:])
        let stop = Collector(false)

        /// One run; whatever it throws (a listener that cannot start, a report that cannot be written) is that run's
        /// failure, never the batch's: the other runs' outcomes, an unknown one above all, are still reported.
        @Sendable func one(_ index: Int, with transport: CurlTransport?) async {
            let member = runs[index]
            let tally = RunTally()
            var reporters = shared
            reporters.all.append(tally)
            var recording: HARReporter?
            if let path = settings.output.recordPath {
                let file =
                    settings.output.recordsDirectory
                    ? (path as NSString).appendingPathComponent(
                        HARReporter.fileName(flow: member.flow.name, index: places[index] + 1))
                    : path  // one run in all (checked by the command)
                let har = HARReporter(path: file, redactor: redactor)
                reporters.all.append(har)
                recording = har
            }
            // The HTML page is the whole suite's: each run keeps its section, written with the others at the end.
            let page = settings.output.htmlPath.map { _ in HTMLReporter(path: nil, redactor: redactor) }
            if let page { reporters.all.append(page) }
            let begun = Date()
            // GitHub Actions folds each run's output; one run at a time shows it as it comes, inside its group.
            let groupedLive = live && settings.output.github && settings.output.format == .text
            if groupedLive {
                let label = member.flow.name + (member.row.map { "[\($0.id)]" } ?? "")
                console.out("::group::\(GitHubActions.escapedData(label))")
            }
            // The run's secrets are its own (`Redactor.run`), forgotten once everything the run prints is written — but
            // for the HTML page, which masks every run's answers at the end.
            let secretsOf = settings.output.htmlPath == nil ? "run \(index)" : nil
            var result: FlowResult = await Redactor.$run.withValue(secretsOf) {
                do throws(Diagnostic) {
                    return try await environment.session.run(
                        member.flow, vars: member.vars, origins: member.origins, registry: registry,
                        reporters: reporters,
                        interruption: interruption, separate: true, preflightRecord: member.preflight,
                        transport: transport)
                } catch {
                    return FlowResult(
                        name: member.flow.name, environment: environment.configuration.environment, startedAt: begun,
                        duration: Date().timeIntervalSince(begun), steps: [], failure: error, captures: [:])
                }
            }
            result.row = member.row?.id
            if let expected = member.row?.expected { result.judge(expectingFailure: expected == .failed) }
            recording?.note("row", member.row.map { .string($0.id) })
            do throws(Diagnostic) { try recording?.finish() } catch {
                if result.failure == nil { result.failure = error }
            }
            result.repetition = repetitions[index]
            let rendered = Self.rendered(result, format: settings.output.format, redactor: redactor)
            // The summaries and JUnit read a run's steps, never what they answered, and JSON output has the run as text
            // already: a long batch keeps no run's documents (the HTML page shows them, so it keeps them).
            if settings.output.htmlPath == nil { result.forgetAnswers() }
            var outcome = Outcome(result: result, retries: tally.retries)
            outcome.statuses = tally.statuses
            outcome.rendered = rendered
            outcome.flow = member.flow
            // Runs at once: each one's group written whole as it ends (one write, so never interleaved), while its
            // secrets are still known.
            if !live && settings.output.github && settings.output.format == .text
                && (!settings.output.quiet || outcome.verdict != .passed)
            {
                console.out(GitHubActions(redactor: redactor).group(outcome, console: console))
            }
            if let secretsOf {
                // What the summary and JUnit print of the run at the end is masked now, while its secrets are known.
                outcome.result.maskMessages(redactor)
                redactor.forget(run: secretsOf)
            }
            outcome.exchanges = page?.sections.flatMap(\.exchanges) ?? []
            outcomes.mutate { $0[index] = outcome }
            if live, let failure = outcome.result.failure, settings.output.format == .text {
                CheckoutDriver.report(failure, console: console)
            }
            // The run's error is in its group: the group ends after it.
            if groupedLive { console.out("::endgroup::") }
            if failFast && !result.passed { stop.mutate { $0 = true } }
            if !live && !settings.output.quiet { console.progress(progress.record(outcome, since: started)) }
        }

        // `parallel` workers take the next run until none is left (or the suite stops). Each works on a thread of its
        // own: what a run does besides its steps (its place in the state file, its finish, which waits for the group
        // commit that makes it durable; its JSON) then blocks only its worker, not Swift's cooperative pool — one
        // thread per core, which every other run needs between its steps (x1000 --parallel 8: 6-7% more flows/s, Bahn
        // and Centra, with a thread each). Its runs' transfers use the same thread, through one transport.
        let next = Collector(0)
        let held = runs.count > 1 ? await environment.session.holdSharedServices(for: runs.map(\.flow)) : []
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(parallel, runs.count) {
                group.addTask {
                    let thread = WorkerThread(name: "checkout-driver.run")
                    defer { thread.stop() }
                    let transport = environment.session.workerTransport(on: thread)
                    await withTaskExecutorPreference(thread) {
                        while true {
                            var index = 0
                            next.mutate {
                                index = $0
                                $0 += 1
                            }
                            guard index < runs.count, !stop.current, interruption.caught == nil else { return }
                            await one(index, with: transport)
                        }
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        for service in held { await service.stop() }
        let done = outcomes.current.sorted { $0.key < $1.key }.map(\.value)
        try report(done, planned: runs.count, elapsed: elapsed, live: live, environment: environment)
        var codes = done.map(\.result.exitCode)
        if singleRun, codes.count == 1 { return codes[0] }
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
}

/// Counts one run's retries (the suite's summary column) and its HTTP answers by status (`--metrics`).
struct RunTally: Reporter {
    private let tally = Collector((retries: 0, statuses: [String: Int]()))

    func handle(_ event: FlowEvent) {
        switch event {
        case .retrying: tally.mutate { $0.retries += 1 }
        case .exchange(let x):
            let status = (try? x.outcome.get()).map { String($0.status) } ?? "error"
            tally.mutate { $0.statuses[status, default: 0] += 1 }
        default: break
        }
    }

    var retries: Int { tally.current.retries }
    var statuses: [String: Int] { tally.current.statuses }
}
