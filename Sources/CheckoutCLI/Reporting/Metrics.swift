import CheckoutKit
import Foundation

/// The figures of runs in Prometheus' text exposition format (docs/metrics.md): what `--metrics FILE.prom` writes and
/// `monitor` serves at `/metrics`. Every series is named and explained in `Series`; a monitor's metrics grow with each
/// run it adds (counters only go up, as Prometheus expects).
struct Metrics: Sendable {
    /// Upper bounds of the step duration histogram's buckets, in seconds: a loopback step takes milliseconds, a sandbox
    /// one tens to hundreds, a poll or a person seconds.
    static let buckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

    /// A series' labels, in the order written.
    typealias Labels = [(String, String)]

    struct Histogram: Sendable {
        var counts = [Int](repeating: 0, count: Metrics.buckets.count)
        var sum = 0.0
        var count = 0

        mutating func observe(_ seconds: Double) {
            for (i, bound) in Metrics.buckets.enumerated() where seconds <= bound { counts[i] += 1 }
            sum += seconds
            count += 1
        }
    }

    private(set) var runs: [String: (labels: Labels, value: Double)] = [:]
    private(set) var steps: [String: (labels: Labels, histogram: Histogram)] = [:]
    private(set) var responses: [String: (labels: Labels, value: Double)] = [:]
    private(set) var retries: [String: (labels: Labels, value: Double)] = [:]
    private(set) var money: [String: (labels: Labels, value: Double)] = [:]
    /// A monitor's: each flow's last run and last success (Unix seconds), and whether its schedule stopped.
    var lastRun: [String: Double] = [:]
    var lastSuccess: [String: Double] = [:]
    var stopped: [String: Bool] = [:]

    /// Adds one finished run.
    mutating func add(_ outcome: FlowSuite.Outcome) {
        let result = outcome.result
        let flow = result.name
        func bump(_ table: inout [String: (labels: Labels, value: Double)], _ labels: Labels, by n: Double = 1) {
            let key = Self.key(labels)
            table[key] = (labels, (table[key]?.value ?? 0) + n)
        }
        bump(&runs, [("flow", flow), ("result", outcome.verdict.rawValue)])
        for step in result.steps where step.outcome != .skipped {
            let labels: Labels = [("flow", flow), ("step", (step.isFinally ? "finally " : "") + step.name)]
            let key = Self.key(labels)
            var entry = steps[key] ?? (labels, Histogram())
            entry.histogram.observe(step.duration)
            steps[key] = entry
            for m in step.money {
                bump(&money, [("provider", m.provider), ("kind", m.kind.rawValue), ("outcome", m.outcome.rawValue)])
            }
        }
        for (status, n) in outcome.statuses { bump(&responses, [("flow", flow), ("status", status)], by: Double(n)) }
        bump(&retries, [("flow", flow)], by: Double(outcome.retries))
    }

    /// The series, each with its type and the line that explains it (docs/metrics.md repeats them).
    enum Series: String, CaseIterable {
        case runs = "checkout_driver_runs_total"
        case stepDuration = "checkout_driver_step_duration_seconds"
        case responses = "checkout_driver_http_responses_total"
        case retries = "checkout_driver_retries_total"
        case money = "checkout_driver_money_outcomes_total"
        case lastRun = "checkout_driver_last_run_timestamp_seconds"
        case lastSuccess = "checkout_driver_last_success_timestamp_seconds"
        case stopped = "checkout_driver_schedule_stopped"

        var type: String {
            switch self {
            case .runs, .responses, .retries, .money: "counter"
            case .stepDuration: "histogram"
            case .lastRun, .lastSuccess, .stopped: "gauge"
            }
        }

        var help: String {
            switch self {
            case .runs:
                "Runs of a flow that ended, by result (passed, failed, unknown: money may have moved, interrupted)."
            case .stepDuration: "How long each step that ran took, in seconds."
            case .responses:
                "HTTP answers the steps of a flow got, by status code (error: no answer, a transport failure)."
            case .retries: "Requests a flow's steps sent again (a 429, a 5xx, a lost connection where safe)."
            case .money:
                "Movements of money the steps accounted for, by provider, kind and outcome (done, refused, unknown)."
            case .lastRun: "When a monitored flow's last run ended (Unix time, seconds)."
            case .lastSuccess: "When a monitored flow's last run that passed ended (Unix time, seconds)."
            case .stopped:
                "1 when a monitored flow's schedule stopped because a run left a money outcome open (settle it, then restart), else 0."
            }
        }
    }

    /// The exposition: each series' HELP and TYPE, then its samples, in a stable order.
    var text: String {
        var out = ""
        func head(_ series: Series) {
            out += "# HELP \(series.rawValue) \(series.help)\n# TYPE \(series.rawValue) \(series.type)\n"
        }
        func samples(_ series: Series, _ table: [String: (labels: Labels, value: Double)]) {
            head(series)
            for key in table.keys.sorted() {
                out += "\(series.rawValue)\(Self.rendered(table[key]!.labels)) \(Self.number(table[key]!.value))\n"
            }
        }
        samples(.runs, runs)
        head(.stepDuration)
        let name = Series.stepDuration.rawValue
        for key in steps.keys.sorted() {
            let (labels, h) = steps[key]!
            for (bound, n) in zip(Self.buckets, h.counts) {
                out += "\(name)_bucket\(Self.rendered(labels + [("le", Self.number(bound))])) \(n)\n"
            }
            out += "\(name)_bucket\(Self.rendered(labels + [("le", "+Inf")])) \(h.count)\n"
            out += "\(name)_sum\(Self.rendered(labels)) \(Self.number(h.sum))\n"
            out += "\(name)_count\(Self.rendered(labels)) \(h.count)\n"
        }
        samples(.responses, responses)
        samples(.retries, retries)
        samples(.money, money)
        func gauges(_ series: Series, _ values: [String: Double]) {
            guard !values.isEmpty else { return }
            head(series)
            for flow in values.keys.sorted() {
                out += "\(series.rawValue)\(Self.rendered([("flow", flow)])) \(Self.number(values[flow]!))\n"
            }
        }
        gauges(.lastRun, lastRun)
        gauges(.lastSuccess, lastSuccess)
        gauges(.stopped, stopped.mapValues { $0 ? 1 : 0 })
        return out
    }

    private static func key(_ labels: Labels) -> String { labels.map { "\($0.0)=\($0.1)" }.joined(separator: "\u{1}") }

    /// `{a="x",b="y"}`, each value escaped as the format requires (backslash, double quote, line feed).
    static func rendered(_ labels: Labels) -> String {
        guard !labels.isEmpty else { return "" }
        let pairs = labels.map { name, value in
            var escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            escaped = escaped.replacingOccurrences(of: "\"", with: "\\\"")
            escaped = escaped.replacingOccurrences(of: "\n", with: "\\n")
            return "\(name)=\"\(escaped)\""
        }
        return "{" + pairs.joined(separator: ",") + "}"
    }

    /// A sample value: whole numbers without a fraction, others as Swift prints a Double (which Prometheus parses).
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// Writes the exposition to `path` at once (a temporary file renamed over it: node_exporter's textfile collector
    /// never reads half a file), readable by others (the collector runs as its own user; nothing in it is secret).
    static func write(_ text: String, to path: String) throws(Diagnostic) {
        do { try FileIO.write(Data(text.utf8), to: path, mode: 0o644) } catch {
            throw Diagnostic(error.code, "cannot write the metrics file: \(error.message)", hint: error.hint)
        }
    }
}
