import CheckoutKit
import Foundation

/// Several flows in one process (`flow run A B dir/ 'smoke-*.json'`, `flow run --all`): one after another in one
/// environment, each in a state scope of its own, reported as one — one JUnit file with a testsuite per flow, one JSON
/// document, a HAR per flow under `--record DIR/` — and summed up in one table.
struct FlowSuite {
    struct Member {
        var flow: Flow
        var vars: [String: JSON]
    }

    var members: [Member]
    var failFast: Bool

    /// What one flow of the suite did, for the summary.
    struct Outcome {
        var result: FlowResult
        var retries: Int
        var requests: Int { result.steps.reduce(0) { $0 + $1.requests } }
        var verdict: String {
            switch result.exitCode {
            case .ok: "passed"
            case .outcomeUnknown: "unknown"
            default: "failed"
            }
        }
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

    // MARK: Running

    /// Runs every member in order (stopping at the first that does not pass under `--fail-fast`, or when one is
    /// interrupted) and answers the suite's exit code: 75 when any outcome is unknown, else 1 when any flow failed
    /// (or the interruption's code), else 0.
    func run(in environment: RunEnvironment, registry: OperationRegistry) async throws(Diagnostic) -> ExitCode {
        let shared = environment.makeReporters(recording: false)
        let retries = RetryTally()
        var outcomes: [Outcome] = []
        for (index, member) in members.enumerated() {
            var reporters = shared
            reporters.all.append(retries)
            var recording: HARReporter?
            if let directory = environment.settings.recordPath {
                let file = (directory as NSString).appendingPathComponent(HARReporter.fileName(flow: member.flow.name, index: index + 1))
                let har = HARReporter(path: file, redactor: environment.redactor)
                reporters.all.append(har)
                recording = har
            }
            let result = try await environment.run(member.flow, vars: member.vars, registry: registry, reporters: reporters, separate: true)
            try recording?.finish()
            outcomes.append(Outcome(result: result, retries: retries.take()))
            if let failure = result.failure, environment.settings.format == .text {
                CheckoutDriver.report(failure, console: environment.console)
            }
            if result.exitCode == .interrupted || result.exitCode == .terminated { break }
            if failFast && !result.passed { break }
        }
        try shared.finish()
        if environment.settings.format == .text { printSummary(outcomes, skipped: members.count - outcomes.count, console: environment.console, redactor: environment.redactor) }
        return Self.exitCode(outcomes.map(\.result.exitCode))
    }

    /// 75 wins (money may have moved), then an interruption, then any other failure.
    static func exitCode(_ codes: [ExitCode]) -> ExitCode {
        if codes.contains(.outcomeUnknown) { return .outcomeUnknown }
        if let stop = codes.first(where: { $0 == .interrupted || $0 == .terminated }) { return stop }
        return codes.allSatisfy { $0 == .ok } ? .ok : .failure
    }

    /// One line per flow (flow, result, duration, requests, retries) and the totals.
    private func printSummary(_ outcomes: [Outcome], skipped: Int, console: Console, redactor: Redactor) {
        let rows = [["flow", "result", "duration", "requests", "retries"]] + outcomes.map { o in
            [o.result.name, o.verdict, Format.milliseconds(o.result.duration), String(o.requests), String(o.retries)]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        console.out("")
        for row in rows {
            console.out(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces))
        }
        let count = { (verdict: String) in outcomes.filter { $0.verdict == verdict }.count }
        var line = "\(outcomes.count) flow\(outcomes.count == 1 ? "" : "s"): \(count("passed")) passed, \(count("failed")) failed, \(count("unknown")) unknown"
        if skipped > 0 { line += ", \(skipped) not run" }
        line += " in \(Format.milliseconds(outcomes.reduce(0) { $0 + $1.result.duration }))"
        console.out(line)
        // The runs whose money outcome is open, each with the commands that settle it (as its error said).
        for outcome in outcomes where outcome.verdict == "unknown" {
            console.out("unknown: \(outcome.result.name): \(redactor.text(outcome.result.failure?.hint ?? outcome.result.failure?.message ?? ""))")
        }
    }
}

/// Counts the retries of the flow running now (the suite's summary column).
final class RetryTally: Reporter, @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    func handle(_ event: FlowEvent) {
        if case .retrying = event { lock.withLock { count += 1 } }
    }

    /// The count so far, starting again from zero.
    func take() -> Int { lock.withLock { defer { count = 0 }; return count } }
}
