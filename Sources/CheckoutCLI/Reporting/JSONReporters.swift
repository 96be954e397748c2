import CheckoutKit
import Foundation

/// Events and results as JSON values — shared by `--format json` and `--format jsonl`.
enum EventJSON {
    static func step(_ r: StepResult, redactor: Redactor) -> JSON {
        var o: JSON.Object = [
            "name": .string(r.name), "outcome": .string(r.outcome.rawValue), "finally": .bool(r.isFinally),
            "optional": .bool(r.optional), "startedAt": .string(Timestamp.iso8601(r.startedAt)),
            "durationMs": .number((r.duration * 1000).rounded()), "requests": .number(Double(r.requests)),
            "polls": .number(Double(r.polls)),
        ]
        if let s = r.status { o["status"] = .number(Double(s)) }
        if let m = r.message { o["message"] = .string(redactor.text(m)) }
        if let out = r.output { o["output"] = redactor.json(out) }
        if !r.money.isEmpty { o["money"] = redactor.json(.array(r.money.map(\.json))) }
        return .object(o)
    }

    static func flow(_ r: FlowResult, redactor: Redactor) -> JSON {
        var o: JSON.Object = [
            "flow": .string(r.name), "environment": .string(r.environment), "passed": .bool(r.passed),
            "exitCode": .number(Double(r.exitCode.rawValue)), "startedAt": .string(Timestamp.iso8601(r.startedAt)),
            "durationMs": .number((r.duration * 1000).rounded()),
            "steps": .array(r.steps.map { step($0, redactor: redactor) }),
            "captures": redactor.json(.object(r.captures)),
        ]
        if let repetition = r.repetition { o["repetition"] = JSON(repetition) }
        if let row = r.row { o["row"] = .string(row) }
        if let expected = r.expectedFailure { o["expectedFailure"] = .string(redactor.text(expected)) }
        if let f = r.failure {
            o["error"] = .object([
                "message": .string(redactor.text(f.message)),
                "hint": f.hint.map { .string(redactor.text($0)) } ?? .null,
                "exitCode": .number(Double(f.code.rawValue)),
            ])
        }
        return .object(o)
    }

    static func event(_ e: FlowEvent, redactor: Redactor) -> JSON {
        switch e {
        case .flowStarted(let name, let env, let steps, let finally):
            return [
                "event": "flow_started", "flow": .string(name), "environment": .string(env), "steps": .number(steps),
                "finally": .number(finally),
            ]
        case .stepStarted(let name, let index, let isFinally):
            return [
                "event": "step_started", "step": .string(name), "index": .number(Double(index)),
                "finally": .bool(isFinally),
            ]
        case .exchange(let x):
            var o: JSON.Object = [
                "event": "exchange", "step": .string(x.step), "attempt": .number(Double(x.attempt)),
                "method": .string(x.request.method), "url": .string(redactor.text(x.request.url)),
                "durationMs": .number((x.duration * 1000).rounded()),
            ]
            switch x.outcome {
            case .success(let r): o["status"] = .number(Double(r.status))
            case .failure(let err): o["error"] = .string(redactor.text(err.description))
            }
            return .object(o)
        case .retrying(let step, let attempt, let delay, let reason):
            return [
                "event": "retry", "step": .string(step), "attempt": .number(Double(attempt)),
                "delayMs": .number((delay * 1000).rounded()), "reason": .string(redactor.text(reason)),
            ]
        case .polling(let step, let poll, let reason):
            return [
                "event": "poll", "step": .string(step), "poll": .number(Double(poll)),
                "reason": .string(redactor.text(reason)),
            ]
        case .note(let step, let message):
            return ["event": "note", "step": .string(step), "message": .string(redactor.text(message))]
        case .money(let step, let movement):
            var o = redactor.json(movement.json).objectValue ?? [:]
            o["event"] = "money"
            o["step"] = .string(step)
            return .object(o)
        case .link(let step, let label, let url):
            return [
                "event": "link", "step": .string(step), "label": .string(label), "url": .string(redactor.text(url)),
            ]
        case .listening(let step, let url):
            return ["event": "listening", "step": .string(step), "url": .string(redactor.text(url))]
        case .stepFinished(let r):
            var o = step(r, redactor: redactor).objectValue ?? [:]
            o["event"] = "step_finished"
            return .object(o)
        case .flowFinished(let r):
            var o = flow(r, redactor: redactor).objectValue ?? [:]
            o["event"] = "flow_finished"
            o["steps"] = nil
            return .object(o)
        }
    }
}

/// `--format json`: one document on stdout when the flow ends.
struct JSONReporter: Reporter {
    let console: Console
    let redactor: Redactor
    private let results = Collector<[FlowResult]>([])

    init(console: Console, redactor: Redactor) {
        self.console = console
        self.redactor = redactor
    }

    func handle(_ event: FlowEvent) {
        if case .flowFinished(let r) = event { results.mutate { $0.append(r) } }
    }

    func finish() throws(Diagnostic) {
        let flows = results.current.map { EventJSON.flow($0, redactor: redactor) }
        guard !flows.isEmpty else { return }
        console.outOutcome((flows.count == 1 ? flows[0] : .object(["flows": .array(flows)])).serialized(pretty: true))
    }
}

/// `--format jsonl`: one event per line as it happens.
struct JSONLinesReporter: Reporter {
    let console: Console
    let redactor: Redactor

    func handle(_ event: FlowEvent) {
        let line = EventJSON.event(event, redactor: redactor).serialized()
        if case .flowFinished = event { console.outOutcome(line) } else { console.out(line) }
    }
}
