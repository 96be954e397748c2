import Foundation

/// A `Flow` written back as a flow file (the format `FlowFile` reads): what a recording keeps of the flow it ran — a
/// command's flow built from typed options included — so that a replay runs the same steps. Decoding what this writes
/// gives the same flow (`FlowEncoderTests`).
public enum FlowEncoder {
    public static func encode(_ flow: Flow) -> JSON {
        var o: JSON.Object = ["name": .string(flow.name), "steps": .array(flow.steps.map(step))]
        if !flow.description.isEmpty { o["description"] = .string(flow.description) }
        if !flow.vars.isEmpty { o["vars"] = .object(flow.vars) }
        if !flow.varDescriptions.isEmpty {
            o["varDescriptions"] = .object(JSON.Object(flow.varDescriptions.mapValues { .string($0) }))
        }
        if !flow.finally.isEmpty { o["finally"] = .array(flow.finally.map(step)) }
        if let deadline = flow.deadline { o["deadline"] = JSON(deadline) }
        return .object(o)
    }

    static func step(_ step: Step) -> JSON {
        var o: JSON.Object = ["name": .string(step.name)]
        if let description = step.description { o["description"] = .string(description) }
        switch step.action {
        case .request(let r): o["request"] = request(r)
        case .operation(let name, let arguments):
            o["use"] = .string(name)
            if arguments != .object([:]) { o["with"] = arguments }
        }
        if !step.capture.isEmpty {
            o["capture"] = .object(JSON.Object(step.capture.mapValues { .string($0.description) }))
        }
        if let expect = expectation(step.expect) { o["expect"] = expect }
        if let retry = step.retry {
            o["retry"] = [
                "attempts": JSON(retry.attempts), "interval": JSON(retry.interval), "backoff": JSON(retry.backoff),
            ]
        }
        if let until = step.until {
            var u: JSON.Object = [
                "path": .string(until.condition.path.description), "interval": JSON(until.interval),
                "timeout": JSON(until.timeout),
            ]
            switch until.condition.test {
            case .equals(let v): u["equals"] = v
            case .matches(let pattern): u["matches"] = .string(pattern)
            case .exists(let exists): u["exists"] = .bool(exists)
            case .oneOf(let values): u["in"] = .array(values)
            case .compare, .contains, .count, .type: break  // only `expect` takes these
            }
            o["until"] = .object(u)
        }
        if step.optional { o["optional"] = true }
        return .object(o)
    }

    static func request(_ r: RequestTemplate) -> JSON {
        var o: JSON.Object = ["method": .string(r.method), "url": .string(r.url)]
        if !r.headers.isEmpty {
            o["headers"] = .object(JSON.Object(r.headers.map { ($0.name, JSON.string($0.value)) }))
        }
        switch r.body {
        case .json(let j)?: o["json"] = j
        case .text(let t)?: o["body"] = .string(t)
        case .file(let f)?: o["bodyFile"] = .string(f)
        case nil: break
        }
        return .object(o)
    }

    static func expectation(_ e: Expectation) -> JSON? {
        var o: JSON.Object = [:]
        if let status = e.status { o["status"] = .array(status.map { JSON($0) }) }
        var tests: [String: JSON.Object] = [:]
        var exists: [JSON] = []
        for condition in e.conditions {
            let path = condition.path.description
            switch condition.test {
            case .equals(let v): tests["equals", default: [:]][path] = v
            case .matches(let pattern): tests["matches", default: [:]][path] = .string(pattern)
            case .exists: exists.append(.string(path))
            case .oneOf: break  // only `until` takes a list of values
            case .compare(let c): tests["compare", default: [:]][path] = comparison(c)
            case .contains(let v): tests["contains", default: [:]][path] = v
            case .count(let c): tests["count", default: [:]][path] = comparison(c)
            case .type(let t): tests["type", default: [:]][path] = .string(t.rawValue)
            }
        }
        for (key, value) in tests { o[key] = .object(value) }
        if !exists.isEmpty { o["exists"] = .array(exists) }
        if !e.headers.isEmpty {
            o["headers"] = .object(
                JSON.Object(
                    e.headers.map { h -> (String, JSON) in
                        switch h.test {
                        case .equals(let v): (h.name, ["equals": .string(v)])
                        case .matches(let p): (h.name, ["matches": .string(p)])
                        case .exists(let b): (h.name, ["exists": .bool(b)])
                        }
                    }))
        }
        if let d = e.duration { o["duration"] = comparison(d) }
        return o.isEmpty ? nil : .object(o)
    }

    /// Bounds as the file wrote them (a `between` comes back as its two ends).
    static func comparison(_ c: Comparison) -> JSON {
        .object(JSON.Object(c.bounds.map { ($0.op.rawValue, $0.literal) }))
    }
}
