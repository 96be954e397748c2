import CheckoutKit
import Foundation
import Synchronization

/// Human output: a line per step with its outcome and duration on stdout; on a terminal, a live
/// progress line on stderr while a step runs.
struct TextReporter: Reporter {
    let console: Console
    let quiet: Bool
    /// The links shown so far: a later step offering the same link (the wait after the request that made it) does not
    /// draw it twice.
    private let shownLinks = ShownLinks()

    init(console: Console, quiet: Bool) {
        self.console = console
        self.quiet = quiet
    }

    func handle(_ event: FlowEvent) {
        switch event {
        case .flowStarted(let name, _, let steps, let finally):
            if !quiet { console.out("flow \(name) (\(Flow.countText(steps: steps, finally: finally)))") }
        case .stepStarted(let name, _, let isFinally):
            console.progress("\(console.paint("…", "2")) \(isFinally ? "finally " : "")\(name)")
        case .retrying(let step, let attempt, let delay, let reason):
            if !quiet { console.err("  \(step): \(reason); attempt \(attempt) in \(Format.milliseconds(delay))") }
        case .polling(let step, let poll, let reason):
            console.progress("\(console.paint("…", "2")) \(step): poll \(poll), \(reason)")
        case .note(let step, let message):
            if !quiet { console.err("note: \(step): \(message)") }
        case .money:
            break
        case .link(let step, let label, let url):
            guard shownLinks.first(url) else { return }
            // Shown even with -q: the run waits for someone to act on it.
            var lines = ["\(step): \(label): \(url)"]
            if console.stderrIsTerminal, let code = QRCode(url) { lines = code.terminalLines() + lines }
            console.err(lines.joined(separator: "\n"))
        case .listening:
            break  // where a 3DS return comes back to is said with the link the person opens
        case .stepFinished(let r):
            guard !quiet || r.outcome == .failed else { return }
            console.out(Self.stepLine(r, console: console))
        case .flowFinished(let r):
            // A flow stopped before its first step (the error line says why) has nothing to sum up.
            guard !r.steps.isEmpty else { return }
            let verdict =
                r.passed
                ? console.paint("passed", "32")
                : r.interrupted ? console.paint("interrupted", "33") : console.paint("failed", "31")
            if !quiet || !r.passed {
                console.out("\(verdict): \(r.name), \(Self.summary(r.steps, duration: r.duration))")
            }
            // The error line that follows explains the flow's failure (its first failed step's); any later step that
            // failed is explained here, so that a rollback failing after a decline is not lost.
            for step in r.steps.filter({ $0.outcome == .failed && !$0.optional }).dropFirst() {
                if let message = step.message {
                    console.err("also failed: \(step.isFinally ? "finally " : "")\(step.name): \(message)")
                }
            }
        case .exchange:
            break
        }
    }

    /// A finished step's line: its mark, name, HTTP status, time, requests and polls.
    static func stepLine(_ r: StepResult, console: Console) -> String {
        let mark =
            switch r.outcome {
            case .passed: console.paint("✓", "32")
            case .failed: r.optional ? console.paint("!", "33") : console.paint("✗", "31")
            case .skipped: console.paint("-", "2")
            }
        var line = "\(mark) \(r.isFinally ? "finally " : "")\(r.name)"
        if let status = r.status { line += "  \(status)" }
        if r.outcome != .skipped { line += "  \(Format.milliseconds(r.duration))" } else { line += "  skipped" }
        if r.requests > 1 { line += "  (\(r.requests) requests)" }
        if r.polls > 0 { line += "  (\(r.polls) polls)" }
        if r.optional && r.outcome == .failed, let m = r.message { line += "  optional step failed: \(m)" }
        return line
    }

    /// "5 steps in 45 ms", "1 step in 3 ms", "3 of 5 steps ran in 12 ms, 2 failed", "4 steps in 9 ms, 1 optional
    /// failed", "9 steps, 1 finally in 80 ms": the main steps, then the finally steps apart, as `Flow.countText` counts
    /// them.
    static func summary(_ steps: [StepResult], duration: Double) -> String {
        func plural(_ n: Int) -> String { n == 1 ? "step" : "steps" }
        let main = steps.filter { !$0.isFinally }
        let ran = main.filter { $0.outcome != .skipped }.count
        var text = ran == main.count ? "\(ran) \(plural(ran))" : "\(ran) of \(main.count) \(plural(main.count)) ran"
        let finally = steps.count - main.count
        if finally > 0 { text += ", \(finally) finally" }
        text += " in \(Format.milliseconds(duration))"
        let failed = steps.filter { $0.outcome == .failed && !$0.optional }.count
        let optional = steps.filter { $0.outcome == .failed && $0.optional }.count
        if failed > 0 { text += ", \(failed) failed" }
        if optional > 0 { text += ", \(optional) optional failed" }
        return text
    }
}

/// The links a run has shown (the reporter is a value; what it remembers is shared).
private final class ShownLinks: Sendable {
    private let urls = Mutex<Set<String>>([])

    /// Whether `url` is shown for the first time.
    func first(_ url: String) -> Bool { urls.withLock { $0.insert(url).inserted } }
}

/// `-v`: every exchange, redacted, on stderr.
struct TraceReporter: Reporter {
    let console: Console
    let redactor: Redactor

    func handle(_ event: FlowEvent) {
        guard case .exchange(let x) = event else { return }
        var lines = [
            "> \(x.request.method) \(redactor.text(x.request.url))\(x.attempt > 1 ? "  (attempt \(x.attempt))" : "")"
        ]
        for h in redactor.headers(x.request.headers) { lines.append("> \(h.name): \(h.value)") }
        if let body = x.request.body, !body.isEmpty {
            lines.append("> " + redactor.body(body, contentType: x.request.headers["Content-Type"]))
        }
        switch x.outcome {
        case .success(let r):
            lines.append(
                "< \(r.httpVersion) \(r.status)  \(Format.milliseconds(x.duration))\(r.reusedConnection ? "  (reused connection)" : "")"
            )
            for h in redactor.headers(r.headers) { lines.append("< \(h.name): \(h.value)") }
            if !r.body.isEmpty { lines.append("< " + redactor.body(r.body, contentType: r.headers["Content-Type"])) }
        case .failure(let e):
            lines.append("! \(redactor.text(e.description))  \(Format.milliseconds(x.duration))")
        }
        console.err(lines.joined(separator: "\n"))
    }
}
