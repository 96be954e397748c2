import CheckoutKit
import Foundation

/// Something that turns engine events into output. Every reporter gets the one redactor.
protocol Reporter: Sendable {
    func handle(_ event: FlowEvent)
    /// Writes anything kept until the end (a JSON document, a HAR or JUnit file).
    func finish() throws(Diagnostic)
}

extension Reporter {
    func finish() throws(Diagnostic) {}
}

/// Fans events out to every active reporter.
struct Reporters: Sendable {
    var all: [any Reporter]

    func handle(_ event: FlowEvent) { for r in all { r.handle(event) } }

    func finish() throws(Diagnostic) { for r in all { try r.finish() } }

    static func make(
        settings: GlobalSettings, redactor: Redactor, console: Console, recording: Bool = true
    ) -> Reporters {
        var list: [any Reporter] = []
        switch settings.output.format {
        case .text: list.append(TextReporter(console: console, quiet: settings.output.quiet))
        case .json: list.append(JSONReporter(console: console, redactor: redactor))
        case .jsonl: list.append(JSONLinesReporter(console: console, redactor: redactor))
        }
        if settings.output.verbose { list.append(TraceReporter(console: console, redactor: redactor)) }
        if let path = settings.output.recordPath, recording {
            list.append(HARReporter(path: path, redactor: redactor, inDirectory: settings.output.recordsDirectory))
        }
        if let path = settings.output.junitPath { list.append(JUnitReporter(path: path, redactor: redactor)) }
        if let path = settings.output.htmlPath { list.append(HTMLReporter(path: path, redactor: redactor)) }
        return Reporters(all: list)
    }
}

/// Accumulates values from events behind a lock; reporters keep what they write at the end in one.
final class Collector<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value: Value
    init(_ initial: Value) { value = initial }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&value) } }
    var current: Value { lock.withLock { value } }
}

enum Format {
    static func milliseconds(_ seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.2f s", seconds)
    }

}
