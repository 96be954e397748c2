import CheckoutKit
import Foundation

/// `--ci`: which CI service's own way of showing a run to speak, besides the output asked for.
enum CIService: String, CaseIterable, Sendable {
    /// GitHub Actions when `GITHUB_ACTIONS=true` (as its runner sets it), else none.
    case auto
    case github
    case none

    /// What `auto` comes to in this environment.
    func resolved(_ environment: [String: String]) -> CIService {
        self == .auto ? (environment["GITHUB_ACTIONS"] == "true" ? .github : .none) : self
    }
}

/// A run as GitHub Actions shows it (docs/ci.md): an `::error` annotation for each flow that failed or left an outcome
/// unknown, pointing at the step in its flow file; a `::warning` for each retry storm and each open outcome; each run's
/// output in a `::group::`; and a Markdown job summary appended to `$GITHUB_STEP_SUMMARY`. Everything in them has gone
/// through the redactor.
struct GitHubActions {
    let redactor: Redactor

    /// The runner shows this many annotations of a kind for a step and drops the rest: the last one shown then says
    /// how many more there are.
    static let annotationsShown = 10
    /// The runner takes a step's summary up to 1 MiB; a summary is cut (saying so) to stay under it with room to spare.
    static let summaryLimit = 1_000_000
    /// Retries in one run from which it is a storm worth a warning: the sandbox failed or limited it again and again.
    static let retryStorm = 3

    // MARK: Workflow commands

    /// A message as the runner reads it: `%`, CR and LF escaped (so a message of several lines stays one command).
    static func escapedData(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            case "\r\n": out += "%0D%0A"
            default: out.append(c)
            }
        }
        return out
    }

    /// A property's value: as a message, and `:` and `,`, which end a property.
    static func escapedProperty(_ text: String) -> String {
        escapedData(text).replacingOccurrences(of: ":", with: "%3A").replacingOccurrences(of: ",", with: "%2C")
    }

    /// `::name key=value,…::message`.
    static func command(_ name: String, _ properties: [(String, String)], _ message: String) -> String {
        let props = properties.map { "\($0.0)=\(escapedProperty($0.1))" }.joined(separator: ",")
        return "::\(name)\(props.isEmpty ? "" : " " + props)::\(escapedData(message))"
    }

    /// An annotation for an error that stopped a command before or outside any flow's report.
    func commandError(_ error: Diagnostic, title: String) -> String {
        var message = redactor.text(error.message)
        if let hint = error.hint { message += "\nhint: " + redactor.text(hint) }
        return Self.command("error", [("title", title)], message)
    }

    // MARK: Annotations

    /// The annotations of a suite's runs, errors first: at most `annotationsShown` of each kind, the last of them then
    /// counting those left out.
    func annotations(_ outcomes: [FlowSuite.Outcome]) -> [String] {
        var errors: [String] = []
        var warnings: [String] = []
        for outcome in outcomes {
            let result = outcome.result
            if outcome.verdict == .failed || outcome.verdict == .unknown {
                errors.append(error(outcome))
            }
            if outcome.retries >= Self.retryStorm {
                warnings.append(
                    Self.command(
                        "warning", [("title", "\(result.label): \(outcome.retries) retries")],
                        "\(result.label) retried \(outcome.retries) times over \(outcome.requests) requests: the sandbox failed or limited them again and again (-v or --record shows each attempt)"
                    ))
            }
            for step in result.steps {
                for movement in step.money where movement.outcome == .unknown {
                    var message = "the \(movement.kind.rawValue) of \(movement.money) is unknown: money may have moved"
                    for way in movement.settle { message += "\n" + way }
                    warnings.append(
                        Self.command(
                            "warning", [("title", "\(result.label) › \(step.name): open outcome")],
                            redactor.text(message)))
                }
            }
        }
        return Self.capped(errors, kind: "error", what: "flows that did not pass")
            + Self.capped(warnings, kind: "warning", what: "warnings")
    }

    /// The first annotations the runner will show, the last of them saying how many more there are.
    static func capped(_ all: [String], kind: String, what: String) -> [String] {
        guard all.count > annotationsShown else { return all }
        let more = all.count - (annotationsShown - 1)
        return all.prefix(annotationsShown - 1)
            + [
                command(
                    kind, [("title", "checkout-driver: \(more) more \(what)")],
                    "\(more) more \(what) than the runner shows: every one is in the job summary and the --junit report"
                )
            ]
    }

    /// A failed or unknown run: titled with its flow and failing step, at that step's line when its flow is a file.
    private func error(_ outcome: FlowSuite.Outcome) -> String {
        let result = outcome.result
        let step = result.steps.first { $0.outcome == .failed && !$0.optional }
        var properties: [(String, String)] = [
            ("title", step.map { "\(result.label) › \($0.isFinally ? "finally " : "")\($0.name)" } ?? result.label)
        ]
        if let flow = outcome.flow, !flow.source.isEmpty, FileManager.default.fileExists(atPath: flow.source) {
            properties.insert(("file", flow.source), at: 0)
            let steps = step.map { $0.isFinally ? flow.finally : flow.steps } ?? []
            if let step, let declared = steps.first(where: { $0.name == step.name }),
                let line = FlowFile.line(of: declared.location, in: flow.source)
            {
                properties.insert(("line", String(line)), at: 1)
            }
        }
        var message = "\(outcome.verdict.rawValue): " + redactor.text(result.failure?.message ?? "no step ran")
        if let hint = result.failure?.hint { message += "\nhint: " + redactor.text(hint) }
        return Self.command("error", properties, message)
    }

    // MARK: Groups

    /// A run's output as one group, written whole when it ends (so that parallel runs never interleave): its steps as
    /// text output shows them, and how it ended.
    func group(_ outcome: FlowSuite.Outcome, console: Console) -> String {
        let result = outcome.result
        var lines = ["::group::\(Self.escapedData("\(result.label): \(outcome.verdict.rawValue)"))"]
        for step in result.steps { lines.append(redactor.text(TextReporter.stepLine(step, console: console))) }
        lines.append(
            "\(outcome.verdict.rawValue): \(result.label), \(TextReporter.summary(result.steps, duration: result.duration))"
        )
        if let failure = result.failure {
            lines.append("error: " + redactor.text(failure.message))
            if let hint = failure.hint { lines.append("hint: " + redactor.text(hint)) }
        }
        lines.append("::endgroup::")
        return lines.joined(separator: "\n")
    }

    // MARK: The job summary

    /// The suite in Markdown: its totals, its table, what money did, how to settle what is unknown, and why runs did
    /// not pass — each part cut to what fits under `limit`, saying how much was left out.
    func summary(
        _ outcomes: [FlowSuite.Outcome], line: String, table: [[String]], limit: Int = summaryLimit
    ) -> String {
        var out = "## checkout-driver\n\n**\(Self.cell(line))**\n\n"
        // Each part keeps room for those after it.
        var budget = limit - out.utf8.count
        func add(_ part: String, reserve: Int) {
            let room = max(0, budget - reserve)
            let text = part.utf8.count <= room ? part : Self.cut(part, to: room)
            out += text
            budget -= text.utf8.count
        }
        add(Self.markdownTable(table), reserve: limit / 4)
        var money: [[String]] = [["flow", "step", "movement", "amount", "status", "reference"]]
        var settle: [String] = []
        for outcome in outcomes {
            for step in outcome.result.steps {
                for m in step.money {
                    money.append([
                        outcome.result.label, step.name, m.kind.rawValue, m.money, m.status, m.reference ?? "",
                    ])
                    guard m.outcome == .unknown else { continue }
                    var text =
                        "- **\(Self.cell(outcome.result.label)) › \(Self.cell(step.name))**: the \(m.kind.rawValue) of \(m.money) is unknown\n"
                    for way in m.settle { text += "  - \(way)\n" }
                    settle.append(text)
                }
            }
        }
        add(
            "\n### Money\n\n"
                + (money.count == 1 ? "No step moved money or was refused.\n" : Self.markdownTable(money)),
            reserve: limit / 8)
        if !settle.isEmpty {
            add("\n### Settle what is unknown\n\n" + settle.joined(), reserve: limit / 16)
        }
        let notPassed = FlowSuite.whyNotPassed(outcomes, redactor: redactor)
        if !notPassed.isEmpty {
            add("\n### Did not pass\n\n" + notPassed.map { "    \($0)\n" }.joined(), reserve: 0)
        }
        return redactor.text(out)
    }

    /// Rows as a Markdown table, the first row its head.
    static func markdownTable(_ rows: [[String]]) -> String {
        guard let head = rows.first else { return "" }
        var out = "| " + head.map(cell).joined(separator: " | ") + " |\n"
        out += "|" + String(repeating: "---|", count: head.count) + "\n"
        for row in rows.dropFirst() { out += "| " + row.map(cell).joined(separator: " | ") + " |\n" }
        return out
    }

    /// A table cell's text: a `|` would end the cell and a line break the row.
    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    /// The whole lines of `text` that fit in `room` bytes, then a line saying how many were left out.
    static func cut(_ text: String, to room: Int) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var out = ""
        var kept = 0
        for line in lines {
            // Room for the line that says what was left out.
            guard out.utf8.count + line.utf8.count + 1 + 80 <= room else { break }
            out += line + "\n"
            kept += 1
        }
        let left = lines.count - kept
        return left > 0 ? out + "\n*… \(left) more lines left out: the summary stays under GitHub's 1 MiB*\n" : out
    }

    /// Appends `text` to `$GITHUB_STEP_SUMMARY`, when the runner set it.
    static func appendSummary(_ text: String, environment: [String: String]) throws(Diagnostic) {
        guard let path = environment["GITHUB_STEP_SUMMARY"], !path.isEmpty else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0, FileIO.writeAll(fd, Data((text + "\n").utf8)) else {
            let reason = String(cString: strerror(errno))
            if fd >= 0 { close(fd) }
            throw .ioError(
                "cannot write the job summary to \(path) (GITHUB_STEP_SUMMARY): \(reason)",
                hint: "check the file and its directory are writable, or give --ci none")
        }
        close(fd)
    }
}
