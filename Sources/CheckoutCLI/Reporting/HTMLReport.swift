import CheckoutKit
import Foundation

/// `--html FILE`: one page a person can attach to a ticket — every flow of the run or the suite, each step with its
/// outcome and its time on a timeline, the redacted requests and answers, and what money did. The page is
/// self-contained and static: its style is inline, it has no script and loads nothing (no fonts, images or links
/// out), so it reads the same offline, from a ticket, with JavaScript disabled. Everything in it went through the
/// one redactor (exchanges as the HAR recording keeps them).
struct HTMLReporter: Reporter {
    /// Where the page goes when this reporter writes it (a single run); nil when a suite gathers its runs' sections.
    let path: String?
    let redactor: Redactor
    private let collected = Collector<[HTMLReport.Section]>([])
    private let exchanges = Collector<[JSON]>([])

    init(path: String?, redactor: Redactor) {
        self.path = path
        self.redactor = redactor
    }

    func handle(_ event: FlowEvent) {
        switch event {
        case .exchange(let x): exchanges.mutate { $0.append(HAR.entry(x, redactor: redactor)) }
        case .flowFinished(let result):
            var taken: [JSON] = []
            exchanges.mutate {
                taken = $0
                $0 = []
            }
            collected.mutate { $0.append(HTMLReport.Section(result: result, exchanges: taken)) }
        default: break
        }
    }

    var sections: [HTMLReport.Section] { collected.current }

    func finish() throws(Diagnostic) {
        guard let path else { return }
        try HTMLReport.write(sections, to: path, redactor: redactor)
    }
}

enum HTMLReport {
    struct Section: Sendable {
        var result: FlowResult
        /// HAR entries (already redacted), each naming its step in `_step`.
        var exchanges: [JSON]
    }

    /// A batch's figures (`--repeat`, `--parallel`, `--shard`): the page shows them with a histogram of the runs'
    /// times.
    struct Batch: Sendable {
        var summary: FlowSuite.Summary
        var durations: [Double]
    }

    static func write(
        _ sections: [Section], batch: Batch? = nil, to path: String, redactor: Redactor
    ) throws(Diagnostic) {
        try ReportFile.write(
            page(sections, batch: batch, redactor: redactor, generated: Date()), to: path, what: "HTML report")
    }

    /// A body longer than this is cut in the page (the HAR recording keeps it whole).
    static let bodyLimit = 20_000

    static func page(_ sections: [Section], batch: Batch? = nil, redactor: Redactor, generated: Date) -> String {
        let passed = sections.filter(\.result.passed).count
        let unknown = sections.filter { $0.result.exitCode == .outcomeUnknown }.count
        let failed = sections.count - passed - unknown
        let duration = sections.reduce(0) { $0 + $1.result.duration }
        let environments = Set(sections.map(\.result.environment)).sorted().joined(separator: ", ")
        let flows = sections.count == 1 ? "1 flow" : "\(sections.count) flows"
        let totals = "\(flows): \(passed) passed, \(failed) failed, \(unknown) unknown"
        var html = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\("checkout-driver report — \(totals)".markupEscaped)</title>
            <style>\(style)</style>
            </head>
            <body>
            <header>
            <h1>checkout-driver report</h1>
            <p id="totals" class="\(failed + unknown == 0 ? "passed" : unknown > 0 ? "unknown" : "failed")">\(totals.markupEscaped)</p>
            <p class="meta">environment \(environments.markupEscaped) · \(Format.milliseconds(duration).markupEscaped) in all · generated \(Timestamp.iso8601(generated).markupEscaped) by checkout-driver \(CheckoutDriver.version.markupEscaped)</p>
            </header>

            """
        if let batch { html += figures(batch) }
        html += money(sections, redactor: redactor)
        for (index, section) in sections.enumerated() { html += flow(section, index: index + 1, redactor: redactor) }
        html += "</body>\n</html>\n"
        return html
    }

    static func verdict(_ result: FlowResult) -> String {
        result.passed
            ? "passed" : result.exitCode == .outcomeUnknown ? "unknown" : result.interrupted ? "interrupted" : "failed"
    }

    /// What money did: a row per movement or refusal the steps accounted for (`MoneyMovement`) — an authorization and
    /// its capture are two, each movement is listed once — with its amount as money and its status in words; an unknown
    /// outcome keeps its amount and reference here, and its settle commands stand under its flow.
    static func money(_ sections: [Section], redactor: Redactor) -> String {
        var rows: [String] = []
        for section in sections {
            for step in section.result.steps {
                for m in step.money {
                    let cells = [
                        section.result.label, step.name, m.kind.rawValue, m.money, m.status, m.reference ?? "",
                    ]
                    .map { "<td>\(redactor.text($0).markupEscaped)</td>" }.joined()
                    rows.append("<tr class=\"\(m.outcome.rawValue)\">\(cells)</tr>")
                }
            }
        }
        let body =
            rows.isEmpty
            ? "<p>No step moved money or was refused.</p>\n"
            : "<table><thead><tr><th>flow</th><th>step</th><th>movement</th><th>amount</th><th>status</th><th>reference</th></tr></thead>\n<tbody>\n"
                + rows.joined(separator: "\n") + "\n</tbody></table>\n"
        return "<section id=\"money\">\n<h2>Money</h2>\n" + body + "</section>\n"
    }

    /// A batch's figures and the histogram of its runs' times, drawn in the page (inline SVG: no script).
    static func figures(_ batch: Batch) -> String {
        let s = batch.summary
        var html = "<section id=\"batch\">\n<h2>Batch</h2>\n<table class=\"figures\"><tbody>\n"
        let rows: [(String, String)] = [
            (
                "runs",
                "\(s.runs) (\(s.passed) passed, \(s.failed) failed, \(s.unknown) unknown\(s.interrupted > 0 ? ", \(s.interrupted) interrupted" : "")\(s.notRun > 0 ? ", \(s.notRun) not run" : ""))"
            ),
            ("rate", String(format: "%.1f flows/s", s.flowsPerSecond)),
            (
                "duration",
                "p50 \(Format.milliseconds(s.durations.p50)), p95 \(Format.milliseconds(s.durations.p95)), max \(Format.milliseconds(s.durations.max))"
            ),
        ]
        for (name, value) in rows {
            html += "<tr><th>\(name)</th><td id=\"batch-\(name)\">\(value.markupEscaped)</td></tr>\n"
        }
        html += "</tbody></table>\n" + histogram(batch.durations) + "</section>\n"
        return html
    }

    /// The runs' times in (at most) ten bins of equal width, a bar each with its count: the bins add up to the runs.
    static func histogram(_ durations: [Double]) -> String {
        guard let low = durations.min(), let high = durations.max() else { return "" }
        let binCount = high > low ? min(10, durations.count) : 1
        let width = (high - low) / Double(binCount)
        var counts = Array(repeating: 0, count: binCount)
        for d in durations { counts[width > 0 ? min(Int((d - low) / width), binCount - 1) : 0] += 1 }
        let tallest = Double(counts.max() ?? 1)
        let chartWidth = 600.0
        let chartHeight = 120.0
        let bar = chartWidth / Double(binCount)
        var svg =
            "<svg id=\"histogram\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(chartWidth))\" height=\"\(Int(chartHeight) + 36)\" role=\"img\" aria-label=\"run times\">\n"
        for (index, count) in counts.enumerated() {
            let height = tallest > 0 ? chartHeight * Double(count) / tallest : 0
            let from = low + width * Double(index)
            let to = binCount == 1 ? high : low + width * Double(index + 1)
            let x = Double(index) * bar
            svg += String(
                format: "<rect class=\"bin\" data-runs=\"%d\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">",
                count, x + 1, 16 + chartHeight - height, bar - 2, height)
            svg +=
                "<title>\(count) run\(count == 1 ? "" : "s"): \(Format.milliseconds(from)) – \(Format.milliseconds(to))</title></rect>"
            svg += String(
                format: "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x + bar / 2,
                12 + chartHeight - height, count)
        }
        svg += "<text x=\"0\" y=\"\(Int(chartHeight) + 32)\">\(Format.milliseconds(low).markupEscaped)</text>"
        svg +=
            "<text x=\"\(Int(chartWidth))\" y=\"\(Int(chartHeight) + 32)\" text-anchor=\"end\">\(Format.milliseconds(high).markupEscaped)</text>\n</svg>\n"
        return svg
    }

    static func flow(_ section: Section, index: Int, redactor: Redactor) -> String {
        let r = section.result
        let verdict = verdict(r)
        let ran = r.steps.filter { $0.outcome != .skipped }.count
        var html = "<section class=\"flow \(verdict)\" id=\"flow-\(index)\">\n"
        html += "<h2><span class=\"badge \(verdict)\">\(verdict)</span> \(r.label.markupEscaped)</h2>\n"
        html +=
            "<p class=\"meta\">\(ran) of \(r.steps.count) steps ran in \(Format.milliseconds(r.duration).markupEscaped) · exit \(r.exitCode.rawValue) · started \(Timestamp.iso8601(r.startedAt).markupEscaped)</p>\n"
        let open = r.steps.flatMap(\.money).filter { $0.outcome == .unknown }
        if let failure = r.failure {
            html += "<p class=\"error\">\(redactor.text(failure.message).markupEscaped)"
            // An open outcome's settle commands stand below, each in a block of its own to copy.
            if let hint = failure.hint, open.isEmpty {
                html += "<br><span class=\"hint\">hint: \(redactor.text(hint).markupEscaped)</span>"
            }
            html += "</p>\n"
        }
        for movement in open { html += settle(movement, redactor: redactor) }
        html +=
            "<table class=\"steps\"><thead><tr><th></th><th>step</th><th>HTTP</th><th>requests</th><th>time</th><th class=\"timeline\">timeline</th></tr></thead>\n<tbody>\n"
        let total = max(r.duration, 0.001)
        for step in r.steps {
            let offset = min(max(step.startedAt.timeIntervalSince(r.startedAt) / total, 0), 1)
            let width = min(max(step.duration / total, 0.005), 1 - offset)
            let mark =
                switch step.outcome {
                case .passed: "✓"
                case .failed: step.optional ? "!" : "✗"
                case .skipped: "–"
                }
            let name = (step.isFinally ? "finally " : "") + step.name + (step.optional ? " (optional)" : "")
            html +=
                "<tr class=\"step \(step.outcome.rawValue)\"><td class=\"mark\">\(mark)</td><td>\(name.markupEscaped)</td>"
            html +=
                "<td>\(step.status.map(String.init) ?? "")</td><td>\(step.requests)</td><td>\(Format.milliseconds(step.duration).markupEscaped)</td>"
            html +=
                "<td class=\"timeline\"><div class=\"track\"><div class=\"bar\" style=\"margin-left:\(percent(offset));width:\(percent(width))\"></div></div></td></tr>\n"
            if step.outcome == .failed, let message = step.message {
                html +=
                    "<tr class=\"message\"><td></td><td colspan=\"5\">\(redactor.text(message).markupEscaped)</td></tr>\n"
            }
        }
        html += "</tbody></table>\n"
        if !section.exchanges.isEmpty {
            html += "<h3>Requests and answers</h3>\n"
            for exchange in section.exchanges { html += self.exchange(exchange) }
        }
        return html + "</section>\n"
    }

    /// How to settle an unknown outcome: each way's words, and its command in a code block of its own.
    static func settle(_ movement: MoneyMovement, redactor: Redactor) -> String {
        var html =
            "<div class=\"settle\"><h3>Settle the unknown \(movement.kind.rawValue) of \(movement.money.markupEscaped)</h3>\n"
        for way in movement.settle {
            let parts = redactor.text(way).split(separator: "`", omittingEmptySubsequences: false)
            let words =
                parts.first.map {
                    $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: ":"))
                } ?? ""
            html += "<p>\(words.markupEscaped)</p>\n"
            // The commands are the parts between backticks; what follows one is more words.
            for (index, part) in parts.enumerated().dropFirst() {
                let text = part.trimmingCharacters(in: .whitespaces)
                if text.isEmpty { continue }
                html +=
                    index % 2 == 1
                    ? "<pre class=\"command\"><code>\(text.markupEscaped)</code></pre>\n"
                    : "<p>\(text.markupEscaped)</p>\n"
            }
        }
        return html + "</div>\n"
    }

    static func exchange(_ entry: JSON) -> String {
        let request = entry["request"] ?? .null
        let response = entry["response"]
        let status = response?["status"]?.intValue
        // The HAR keeps a lost or refused exchange's reason as its response's `_error` (status 0).
        let error = response?["_error"]?.stringValue ?? (status == 0 ? "no answer" : nil)
        let outcome = error ?? status.map(String.init) ?? "no answer"
        let attempt = entry["_attempt"]?.intValue.map { $0 > 1 ? " (attempt \($0))" : "" } ?? ""
        let summary =
            "\(entry["_step"]?.stringValue ?? "") · \(request["method"]?.stringValue ?? "") \(request["url"]?.stringValue ?? "") → \(outcome)\(attempt) · \(entry["time"]?.interpolationText ?? "?") ms"
        var html = "<details class=\"exchange\"><summary>\(summary.markupEscaped)</summary>\n"
        html += "<div class=\"half\"><h4>Request</h4><pre>\(headers(request["headers"]).markupEscaped)</pre>"
        if let body = request["postData"]?["text"]?.stringValue, !body.isEmpty {
            html += "<pre class=\"body\">\(shown(body).markupEscaped)</pre>"
        }
        html += "</div>\n<div class=\"half\"><h4>Answer</h4>"
        if let response, status != 0 {
            html += "<pre>\(("HTTP \(outcome)\n" + headers(response["headers"])).markupEscaped)</pre>"
            if let body = response["content"]?["text"]?.stringValue, !body.isEmpty {
                html += "<pre class=\"body\">\(shown(body).markupEscaped)</pre>"
            }
        } else {
            html += "<p class=\"error\">\(outcome.markupEscaped)</p>"
        }
        return html + "</div>\n</details>\n"
    }

    static func headers(_ list: JSON?) -> String {
        (list?.arrayValue ?? []).map { "\($0["name"]?.stringValue ?? ""): \($0["value"]?.stringValue ?? "")" }.joined(
            separator: "\n")
    }

    /// A JSON body indented; anything else as it is; cut at `bodyLimit`.
    static func shown(_ body: String) -> String {
        let text = (try? JSON.parse(Data(body.utf8))).map { $0.serialized(pretty: true) } ?? body
        return text.count > bodyLimit
            ? String(text.prefix(bodyLimit)) + "\n… (\(text.count - bodyLimit) more characters in the HAR recording)"
            : text
    }

    static func percent(_ fraction: Double) -> String { String(format: "%.2f%%", fraction * 100) }

    static let style = """
        body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#1d1d1f;background:#fff}
        h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.25em;margin:1.2em 0 .3em}h3{font-size:1em;margin:1em 0 .3em}h4{margin:.3em 0}
        .meta{color:#555}#totals{font-size:1.1em;font-weight:600}
        #totals.passed,.badge.passed{color:#0a6b2d}#totals.failed,.badge.failed{color:#b00020}#totals.unknown,.badge.unknown,.badge.interrupted{color:#a35a00}
        .badge{display:inline-block;min-width:5em;font-size:.8em;text-transform:uppercase;border:1px solid currentColor;border-radius:3px;padding:0 .4em;text-align:center}
        section.flow{border-top:1px solid #ddd;margin-top:1.5em}
        table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.2em .5em;border-bottom:1px solid #eee;vertical-align:top}
        tr.failed td,tr.unknown td{background:#fff1f1}tr.skipped td{color:#888}td.mark{width:1.5em;font-weight:700}
        th.timeline,td.timeline{width:35%}.track{background:#f1f1f4;height:.9em;border-radius:2px;margin-top:.25em}
        .bar{background:#3b6fd8;height:100%;border-radius:2px}tr.failed .bar{background:#b00020}tr.skipped .bar{background:#bbb}
        .error{color:#b00020;white-space:pre-wrap}.hint{color:#555}
        tr.refused td{background:#fff6e6}.settle{border-left:3px solid #a35a00;padding-left:.8em;margin:.6em 0}
        pre.command{background:#1d1d1f;color:#f5f5f7;max-height:none}#histogram rect{fill:#3b6fd8}#histogram text{font-size:11px;fill:#333}
        table.figures{width:auto}table.figures th{padding-right:1.5em}
        details.exchange{border:1px solid #e3e3e8;border-radius:4px;margin:.4em 0;padding:.2em .6em}
        details.exchange summary{cursor:pointer;font-family:ui-monospace,Menlo,monospace;font-size:.9em;overflow-wrap:anywhere}
        .half{display:inline-block;vertical-align:top;width:49%;min-width:20em}
        pre{background:#f7f7f9;padding:.5em;overflow:auto;max-height:30em;white-space:pre-wrap;overflow-wrap:anywhere;font-size:.85em;margin:.2em .4em .2em 0}
        """
}
