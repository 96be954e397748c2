import Foundation

/// A step's answer held against what the step expects (`expect`, `until`): each failed test said with its subject, the
/// value found and what was wanted.
extension FlowRunner {
    /// - Parameters: `context` has the headers of the step's last answer; `elapsed` is how long the step took
    ///   (seconds).
    func check(
        _ step: Step, _ output: StepOutput, scope: TemplateScope, context: OperationContext,
        elapsed: Double
    ) throws(Diagnostic) {
        if let status = output.status {
            let ok = step.expect.status?.contains(status) ?? (200..<300).contains(status)
            if !ok {
                let want = step.expect.status.map { $0.map(String.init).joined(separator: " or ") } ?? "2xx"
                throw .failure(
                    "step '\(step.name)': expected status \(want), got \(status): \(Self.excerpt(redactor.json(output.document)))",
                    hint: "see the whole exchange with -v; if this status is fine here, list it in expect.status")
            }
        }
        for condition in step.expect.conditions {
            var test = condition.test
            if case .equals(let expected) = test { test = .equals(try renderValue(expected, scope: scope, step: step)) }
            if case .contains(let wanted) = test { test = .contains(try renderValue(wanted, scope: scope, step: step)) }
            let value = condition.path.evaluate(output.document)
            if !Self.holds(test, value) {
                var seen = value.map { redactor.json($0).serialized() } ?? "missing"
                if case .count = test, let elements = value?.arrayValue {
                    seen = "\(elements.count) (\(Self.excerpt(redactor.json(value!))))"
                }
                if case .type = test, let value { seen = "\(Self.typeName(value)) \(seen)" }
                throw .failure(
                    "step '\(step.name)': expected \(Self.subject(test, condition.path)) \(Self.describe(test)), found \(seen)",
                    hint: "see the response with -v, or --format json")
            }
        }
        let headers = context.counter.lastHeaders
        for var condition in step.expect.headers {
            let value = headers?[condition.name]
            if case .equals(let expected) = condition.test {
                condition.test = .equals(try renderValue(.string(expected), scope: scope, step: step).interpolationText)
            }
            let ok =
                switch condition.test {
                case .equals(let expected): value == expected
                case .matches(let pattern):
                    value.map { $0.range(of: pattern, options: .regularExpression) != nil } ?? false
                case .exists(let want): (value != nil) == want
                }
            if !ok {
                let want =
                    switch condition.test {
                    case .equals(let expected): "to equal \(JSON.string(expected).serialized())"
                    case .matches(let pattern): "to match /\(pattern)/"
                    case .exists(let want): want ? "to be there" : "to be absent"
                    }
                // A credential header (Set-Cookie, Authorization…) is masked by its name, as the HAR masks it.
                let shown = value.map {
                    Redactor.sensitiveHeaders.contains(condition.name.lowercased()) ? Redactor.mask : redactor.text($0)
                }
                let seen = headers == nil ? "no answer" : shown.map { JSON.string($0).serialized() } ?? "missing"
                throw .failure(
                    "step '\(step.name)': expected header \(condition.name) \(want), found \(seen)",
                    hint: "see the answer's headers with -v")
            }
        }
        if let bounds = step.expect.duration, let took = ExactDecimal(String(format: "%.3f", elapsed)),
            !bounds.holds(took)
        {
            throw .failure(
                "step '\(step.name)': expected the step to take \(bounds.description), it took \(Self.format(elapsed))s",
                hint: "a slow service or a slow machine; raise the bound if this is normal here")
        }
    }

    /// What a failed condition speaks of: the value at the path, or the number of its elements.
    static func subject(_ test: Condition.Test, _ path: JSONPath) -> String {
        if case .count = test { return "the count of \(path)" }
        return "\(path)"
    }

    static func typeName(_ value: JSON) -> String {
        switch value {
        case .string: "a string"
        case .number: value.intValue != nil ? "an integer" : "a number"
        case .bool: "a boolean"
        case .array: "an array"
        case .object: "an object"
        case .null: "null"
        }
    }

    static func holds(_ test: Condition.Test, _ value: JSON?) -> Bool {
        switch test {
        case .exists(let want): return (value != nil && value != .null) == want
        case .equals(let expected): return value.map { Self.looselyEqual($0, expected) } ?? false
        case .oneOf(let options): return value.map { v in options.contains { Self.looselyEqual(v, $0) } } ?? false
        case .matches(let pattern):
            guard let value else { return false }
            let text = value.interpolationText
            return text.range(of: pattern, options: .regularExpression) != nil
        case .compare(let bounds): return value.flatMap(Comparison.exact).map(bounds.holds) ?? false
        case .count(let bounds): return value?.arrayValue.map { bounds.holds(ExactDecimal($0.count)) } ?? false
        case .contains(let wanted):
            switch value {
            case .string(let s)?: return s.contains(wanted.interpolationText)
            case .array(let elements)?: return elements.contains { Self.looselyEqual($0, wanted) }
            case .object(let o)?: return wanted.stringValue.map { o[$0] != nil } ?? false
            default: return false
            }
        case .type(let type):
            guard let value else { return false }
            return switch (type, value) {
            case (.string, .string), (.boolean, .bool), (.array, .array), (.object, .object), (.null, .null),
                (.number, .number):
                true
            case (.integer, .number): value.intValue != nil
            default: false
            }
        }
    }

    /// Templated expectations render to strings; `"200"` should still equal `200`.
    static func looselyEqual(_ a: JSON, _ b: JSON) -> Bool {
        if a == b { return true }
        switch (a, b) {
        case (.number(let n), .string(let s)), (.string(let s), .number(let n)): return Double(s) == n.double
        case (.bool(let x), .string(let s)), (.string(let s), .bool(let x)): return s == String(x)
        default: return false
        }
    }

    static func describe(_ test: Condition.Test) -> String {
        switch test {
        case .equals(let v): "to equal \(v.serialized())"
        case .matches(let p): "to match /\(p)/"
        case .exists(let b): b ? "to exist" : "to be absent"
        case .oneOf(let o): "to be one of \(JSON.array(o).serialized())"
        case .compare(let bounds): "to be \(bounds.description)"
        case .count(let bounds): "to be \(bounds.description)"
        case .contains(let v): "to contain \(v.serialized())"
        case .type(let t): "to be \(t == .integer || t == .array || t == .object ? "an" : "a") \(t.rawValue)"
        }
    }

    static func document(of response: HTTPClientResponse) -> JSON {
        if response.body.isEmpty { return .null }
        if let json = response.json { return json }
        return .string(String(decoding: response.body, as: UTF8.self))
    }

    static func excerpt(_ value: JSON) -> String {
        let text = value.serialized()
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }

    static func format(_ seconds: Double) -> String { String(format: seconds < 0.1 ? "%.3g" : "%.1f", seconds) }
}
