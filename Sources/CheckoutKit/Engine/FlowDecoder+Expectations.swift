import Foundation

/// What a step expects of its answer, how it polls (`until`) and how it retries: read and checked like the rest of
/// the file, each error naming its JSON path.
extension FlowDecoder {
    func expectation(_ json: JSON, at path: JSONPath) throws -> Expectation {
        let o = try object(json, at: path, allowed: Keys.expect)
        var status: [Int]?
        if let s = o["status"] {
            switch s {
            case .number: status = [try int(s, at: path.appending("status"), range: 100...599)]
            case .array(let a):
                if a.isEmpty {
                    throw Problem(
                        path: path.appending("status"), message: "an empty list accepts no status at all",
                        hint: "give at least one code, or leave status out for any 2xx")
                }
                status = try a.enumerated().map {
                    try int($1, at: path.appending("status").appending($0), range: 100...599)
                }
            default:
                throw Problem(
                    path: path.appending("status"),
                    message: "expected a status code or an array of them, found \(s.kindName)")
            }
        }
        var conditions: [Condition] = []
        if let eq = o["equals"] {
            for (k, v) in try object(eq, at: path.appending("equals"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                conditions.append(
                    Condition(
                        path: try jsonPath(.string(k), at: path.appending("equals").appending(k)), test: .equals(v)))
            }
        }
        if let m = o["matches"] {
            for (k, v) in try object(m, at: path.appending("matches"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("matches").appending(k)
                conditions.append(Condition(path: try jsonPath(.string(k), at: p), test: .matches(try regex(v, at: p))))
            }
        }
        if let e = o["exists"] {
            guard case .array(let items) = e else {
                throw Problem(
                    path: path.appending("exists"), message: "expected an array of JSON paths, found \(e.kindName)")
            }
            for (i, item) in items.enumerated() {
                conditions.append(
                    Condition(path: try jsonPath(item, at: path.appending("exists").appending(i)), test: .exists(true)))
            }
        }
        if let c = o["compare"] {
            for (k, v) in try object(c, at: path.appending("compare"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("compare").appending(k)
                conditions.append(
                    Condition(path: try jsonPath(.string(k), at: p), test: .compare(try comparison(v, at: p))))
            }
        }
        if let c = o["contains"] {
            for (k, v) in try object(c, at: path.appending("contains"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                conditions.append(
                    Condition(
                        path: try jsonPath(.string(k), at: path.appending("contains").appending(k)), test: .contains(v))
                )
            }
        }
        if let c = o["count"] {
            for (k, v) in try object(c, at: path.appending("count"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("count").appending(k)
                // A bare number is the exact count.
                let bounds = v.objectValue == nil ? JSON.object(["==": v]) : v
                let count = try comparison(bounds, at: p)
                if count.bounds.contains(where: { ($0.literal.intValue ?? -1) < 0 }) {
                    throw Problem(path: p, message: "a count is a whole number of elements, found \(v.serialized())")
                }
                conditions.append(Condition(path: try jsonPath(.string(k), at: p), test: .count(count)))
            }
        }
        if let t = o["type"] {
            for (k, v) in try object(t, at: path.appending("type"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("type").appending(k)
                guard let name = v.stringValue, let type = Condition.ValueType(rawValue: name) else {
                    throw Problem(
                        path: p, message: "expected a type, found \(v.serialized())",
                        hint: "types: \(Condition.ValueType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                conditions.append(Condition(path: try jsonPath(.string(k), at: p), test: .type(type)))
            }
        }
        var expectation = Expectation(status: status, conditions: conditions)
        if let h = o["headers"] {
            for (name, v) in try object(h, at: path.appending("headers"), allowed: nil).sorted(by: { $0.key < $1.key })
            {
                let p = path.appending("headers").appending(name)
                guard HeaderSafety.isToken(name) else {
                    throw Problem(path: p, message: "'\(name)' is not a valid header name")
                }
                // A bare string is the value it must equal.
                if case .string(let value) = v {
                    expectation.headers.append(HeaderCondition(name: name, test: .equals(value)))
                    continue
                }
                let test = try object(v, at: p, allowed: Keys.header)
                guard test.count == 1, let (kind, operand) = test.first else {
                    throw Problem(path: p, message: "give one of 'equals', 'matches' or 'exists'")
                }
                switch kind {
                case "equals":
                    expectation.headers.append(
                        HeaderCondition(
                            name: name, test: .equals(try string(operand, at: p.appending(kind), required: true)!)))
                case "matches":
                    expectation.headers.append(
                        HeaderCondition(name: name, test: .matches(try regex(operand, at: p.appending(kind)))))
                default:
                    expectation.headers.append(
                        HeaderCondition(name: name, test: .exists(try bool(operand, at: p.appending(kind))!)))
                }
            }
        }
        if let d = o["duration"] {
            let p = path.appending("duration")
            // Durations in the flow's own units ("500ms"); kept as seconds.
            guard case .object(let bounds) = d else {
                throw Problem(path: p, message: "expected bounds such as {\"<\": \"500ms\"}, found \(d.kindName)")
            }
            var inSeconds: JSON.Object = [:]
            for (op, value) in bounds {
                if op == "between", case .array(let ends) = value {
                    inSeconds[op] = .array(
                        try ends.enumerated().map { JSON(try seconds($1, at: p.appending(op).appending($0))) })
                } else {
                    inSeconds[op] = JSON(try seconds(value, at: p.appending(op)))
                }
            }
            var comparison = try comparison(.object(inSeconds), at: p)
            // Messages and the written-back flow say it as the file did.
            for (i, bound) in comparison.bounds.enumerated() where bounds[bound.op.rawValue] != nil {
                comparison.bounds[i].literal = bounds[bound.op.rawValue]!
            }
            expectation.duration = comparison
        }
        return expectation
    }

    /// `{"<": 10, ">=": "0.50"}` or `{"between": [1, 100]}`: numbers or decimal strings, read exactly.
    func comparison(_ json: JSON, at path: JSONPath) throws -> Comparison {
        let o = try object(json, at: path, allowed: Keys.comparison)
        if o.isEmpty {
            throw Problem(
                path: path,
                message:
                    "give a bound: \(Comparison.Operator.allCases.map(\.rawValue).joined(separator: ", ")) or between")
        }
        func exact(_ value: JSON, at p: JSONPath) throws -> ExactDecimal {
            guard let d = Comparison.exact(value) else {
                throw Problem(
                    path: p,
                    message: "expected a number or a decimal string such as \"10.00\", found \(value.serialized())")
            }
            return d
        }
        var bounds: [Comparison.Bound] = []
        for op in Comparison.Operator.allCases {
            if let v = o[op.rawValue] {
                bounds.append(.init(op: op, value: try exact(v, at: path.appending(op.rawValue)), literal: v))
            }
        }
        if let between = o["between"] {
            let p = path.appending("between")
            guard case .array(let ends) = between, ends.count == 2 else {
                throw Problem(path: p, message: "expected [low, high], found \(between.serialized())")
            }
            let low = try exact(ends[0], at: p.appending(0))
            let high = try exact(ends[1], at: p.appending(1))
            if low > high {
                throw Problem(
                    path: p,
                    message: "the low end \(ends[0].serialized()) is above the high end \(ends[1].serialized())")
            }
            bounds += [
                .init(op: .greaterOrEqual, value: low, literal: ends[0]),
                .init(op: .lessOrEqual, value: high, literal: ends[1]),
            ]
        }
        return Comparison(bounds: bounds)
    }

    func untilSpec(_ json: JSON, at path: JSONPath) throws -> Until {
        let o = try object(json, at: path, allowed: Keys.until)
        let p = try jsonPath(o["path"] ?? .null, at: path.appending("path"))
        let tests = ["equals", "matches", "exists", "in"].filter { o[$0] != nil }
        guard tests.count == 1 else {
            throw Problem(path: path, message: "give exactly one of 'equals', 'matches', 'exists' or 'in'")
        }
        let test: Condition.Test
        switch tests[0] {
        case "equals": test = .equals(o["equals"]!)
        case "matches": test = .matches(try regex(o["matches"]!, at: path.appending("matches")))
        case "exists": test = .exists(try bool(o["exists"], at: path.appending("exists")) ?? true)
        default:
            guard case .array(let options) = o["in"]! else {
                throw Problem(path: path.appending("in"), message: "expected an array of values")
            }
            test = .oneOf(options)
        }
        return Until(
            condition: Condition(path: p, test: test),
            interval: try o["interval"].map { try seconds($0, at: path.appending("interval")) } ?? 1,
            timeout: try o["timeout"].map { try seconds($0, at: path.appending("timeout")) } ?? 30)
    }

    func retryPolicy(_ json: JSON, at path: JSONPath) throws -> RetryPolicy {
        let o = try object(json, at: path, allowed: Keys.retry)
        let attempts = try o["attempts"].map { try int($0, at: path.appending("attempts"), range: 1...100) } ?? 3
        let interval = try o["interval"].map { try seconds($0, at: path.appending("interval")) } ?? 0.2
        let backoff =
            try o["backoff"].map { v -> Double in
                guard let d = v.doubleValue, d >= 1, d <= 10 else {
                    throw Problem(
                        path: path.appending("backoff"), message: "expected a factor between 1 and 10, found \(v)")
                }
                return d
            } ?? 2
        return RetryPolicy(attempts: attempts, interval: interval, backoff: backoff)
    }
}
