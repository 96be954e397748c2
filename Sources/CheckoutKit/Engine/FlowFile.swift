import Foundation

/// Reads a flow file (JSON) into a `Flow`, checking all of it before anything runs. Every error names the
/// JSON path of the offending element, e.g. `$.steps[1].expect.status: expected an integer…`.
public enum FlowFile {
    public static func load(path: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        let data: Data
        switch FileIO.read(path) {
        case .success(let bytes): data = bytes
        case .failure(let error):
            throw .data("cannot read flow file \(path): \(error.reason)",
                        hint: "check the path; `checkout-driver flow list` shows the built-in flows")
        }
        let file = FlowDecoder.Includes.key(path)
        return try decode(data, source: path, registry: registry,
                          includes: FlowDecoder.Includes(directory: FileIO.directory(of: file), chain: [file]))
    }

    /// - Parameter includes: where the flow's `include`s are resolved from (by default the working directory).
    public static func decode(_ data: Data, source: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        try decode(data, source: source, registry: registry, includes: .init(directory: nil, chain: []))
    }

    static func decode(_ data: Data, source: String, registry: OperationRegistry, includes: FlowDecoder.Includes) throws(Diagnostic) -> Flow {
        let json: JSON
        do { json = try JSON.parse(data) } catch {
            throw .data("\(source): not valid JSON: \(error)", hint: "a flow file is one JSON object; see docs/flow-files.md")
        }
        do {
            var flow = try FlowDecoder(registry: registry, includes: includes).flow(json, at: .root)
            flow.source = source
            flow.varSources = flow.varSources.mapValues { "\(source): \($0)" }
            return flow
        } catch let error as FlowDecoder.Problem {
            throw .data("\(source): \(error.path): \(error.message)", hint: error.hint ?? "see docs/flow-files.md for the format")
        } catch {
            throw .internalError("\(source): \(error)")
        }
    }
}

struct FlowDecoder {
    struct Problem: Error {
        let path: JSONPath
        let message: String
        var hint: String? = nil
    }

    let registry: OperationRegistry
    var includes = Includes(directory: nil, chain: [])

    /// Where a flow's `include`s are resolved from: the including file's directory, and the files (or built-in flows)
    /// that led here, to refuse a cycle and to name the chain.
    struct Includes {
        var directory: String?
        var chain: [String]

        /// One name per file however it is reached (`./a.json`, `sub/../a.json`, a symlink).
        static func key(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
    }

    /// What the includes of a flow bring beside their steps: the included flows' variables (their defaults, with each
    /// include's `vars` over them), what those mean, and their `finally` steps.
    struct Included {
        var vars: [String: JSON] = [:]
        /// Which include set each variable, to refuse two includes giving one variable different values.
        var setBy: [String: String] = [:]
        var conflicts: [String: [String]] = [:]
        /// Where each variable's value was written, as a JSON path in this file (through the include that brought it).
        var sources: [String: String] = [:]
        /// The variables each include's own flow declares, by the include step's path.
        var declaredAt: [JSONPath: Set<String>] = [:]
        var varDescriptions: [String: String] = [:]
        var finally: [Step] = []
    }

    /// The keys each object of a flow file may have: the decoder refuses any other, and `FlowSchema` describes these
    /// (`FlowSchemaTests` holds the two to each other).
    enum Keys {
        static let flow: Set<String> = ["name", "description", "vars", "varDescriptions", "steps", "finally", "deadline", "$schema"]
        static let step: Set<String> = ["name", "description", "request", "use", "with", "capture", "expect", "retry", "until", "optional"]
        static let include: Set<String> = ["include", "vars", "description"]
        static let request: Set<String> = ["method", "url", "headers", "json", "body", "bodyFile"]
        static let expect: Set<String> = ["status", "equals", "matches", "exists", "compare", "contains", "count", "type", "headers", "duration"]
        static let comparison: Set<String> = Set(Comparison.Operator.allCases.map(\.rawValue) + ["between"])
        static let header: Set<String> = ["equals", "matches", "exists"]
        static let until: Set<String> = ["path", "equals", "matches", "exists", "in", "interval", "timeout"]
        static let retry: Set<String> = ["attempts", "interval", "backoff"]
    }

    func flow(_ json: JSON, at path: JSONPath) throws -> Flow {
        let o = try object(json, at: path, allowed: Keys.flow)
        let name = try string(o["name"], at: path.appending("name"), required: true)!
        let description = try string(o["description"], at: path.appending("description")) ?? ""
        let ownVars = try o["vars"].map { try object($0, at: path.appending("vars"), allowed: nil) } ?? [:]
        guard let stepsJSON = o["steps"] else { throw Problem(path: path, message: "missing required key 'steps'") }
        var included = Included()
        let steps = try stepList(stepsJSON, at: path.appending("steps"), into: &included)
        if steps.isEmpty { throw Problem(path: path.appending("steps"), message: "a flow needs at least one step") }
        // Clean-up runs in reverse order of set-up: the flow's own `finally`, then its includes', the last one's first.
        let finallySteps = try (o["finally"].map { try stepList($0, at: path.appending("finally"), into: &included) } ?? []) + included.finally
        // Variables are shared: the flow's own `vars` over its includes', each include's `vars` over the included flow's.
        var vars = included.vars
        vars.merge(ownVars) { _, own in own }
        for (name, sources) in included.conflicts.sorted(by: { $0.key < $1.key }) where ownVars[name] == nil {
            throw Problem(path: path.appending("vars"), message: "variable '\(name)' gets different values from the includes of \(sources.joined(separator: " and "))",
                          hint: "variables are shared: give '\(name)' one value in this flow's \"vars\"")
        }
        _ = try Self.variableOrder(vars, at: path.appending("vars"))
        var varDescriptions = included.varDescriptions
        if let d = o["varDescriptions"] {
            for (name, text) in try object(d, at: path.appending("varDescriptions"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let at = path.appending("varDescriptions").appending(name)
                guard vars[name] != nil else {
                    let suggestion = Suggest.closest(to: name, in: Array(vars.keys)).map { "; did you mean '\($0)'?" } ?? ""
                    throw Problem(path: at, message: "describes '\(name)', which is not in \"vars\"\(suggestion)",
                                  hint: "describe the variables the flow declares in \"vars\"")
                }
                varDescriptions[name] = try string(text, at: at, required: true)
            }
        }
        let deadline = try o["deadline"].map { try seconds($0, at: path.appending("deadline")) }
        var flow = Flow(name: name, description: description, vars: vars, steps: steps, finally: finallySteps, deadline: deadline)
        flow.varDescriptions = varDescriptions
        // Variables are shared: a step's capture replaces a value another part of the flow declared — this flow's
        // own step capturing an included flow's variable, or an included step capturing one declared elsewhere.
        for step in steps + finallySteps {
            let include = step.includedAt
            for name in step.capture.keys.sorted() {
                var declarers = include != nil && ownVars[name] != nil ? ["this flow's \(path.appending("vars").appending(name))"] : []
                for (other, names) in included.declaredAt.sorted(by: { $0.key.description < $1.key.description })
                    where other != include && names.contains(name) { declarers.append("the flow included at \(other)") }
                guard !declarers.isEmpty else { continue }
                flow.warnings.append("\(step.location) (step '\(step.name)') captures '\(name)', which \(declarers.joined(separator: " and ")) declares: from then on the captured value replaces the declared one")
            }
        }
        flow.varSources = included.sources.filter { ownVars[$0.key] == nil }
        flow.ownsState = true
        try checkNames(flow, at: path)
        return flow
    }

    private func stepList(_ json: JSON, at path: JSONPath, into included: inout Included) throws -> [Step] {
        guard case .array(let items) = json else {
            throw Problem(path: path, message: "expected an array of steps, found \(json.kindName)")
        }
        var steps: [Step] = []
        for (index, item) in items.enumerated() {
            if case .object(let o) = item, let target = o["include"] {
                steps += try include(target, o, at: path.appending(index), into: &included)
            } else {
                steps.append(try step(item, at: path.appending(index)))
            }
        }
        return steps
    }

    /// `{"include": "NAME|PATH", "vars": {…}}`: the steps of a built-in flow or of a flow file (relative to the including
    /// file), in place. Its variables join the flow's; its `finally` steps join the flow's.
    private func include(_ target: JSON, _ o: [String: JSON], at path: JSONPath, into included: inout Included) throws -> [Step] {
        _ = try object(.object(o), at: path, allowed: Keys.include)
        let at = path.appending("include")
        let name = try string(target, at: at, required: true)!
        let key: String
        let data: Data
        var nested = includes
        if name.contains("/") || name.hasSuffix(".json") {
            let full = name.hasPrefix("/") ? name : ((includes.directory ?? FileManager.default.currentDirectoryPath) as NSString).appendingPathComponent(name)
            key = Includes.key(full)
            switch FileIO.read(full) {
            case .success(let bytes): data = bytes
            case .failure(let error):
                throw Problem(path: at, message: "cannot read included flow \(name) (\(full)): \(error.reason)",
                              hint: "an include's path is relative to the file that includes it")
            }
            nested.directory = FileIO.directory(of: key)
        } else {
            guard let entry = BuiltinFlows.named(name) else {
                let suggestion = Suggest.closest(to: name, in: BuiltinFlows.all.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(path: at, message: "no built-in flow named '\(name)'\(suggestion)",
                              hint: "include a built-in flow (flow list) or a flow file: a path with '/' or ending in .json")
            }
            key = "built-in \(name)"
            data = Data(entry.source.utf8)
        }
        if includes.chain.contains(key) {
            let names = (includes.chain + [key]).map { ($0 as NSString).lastPathComponent }
            throw Problem(path: at, message: "include cycle: \(names.joined(separator: " → "))", hint: "a flow cannot include itself, directly or through another")
        }
        nested.chain.append(key)
        let flow: Flow
        do {
            flow = try FlowDecoder(registry: registry, includes: nested).flow(try JSON.parse(data), at: .root)
        } catch let problem as Problem {
            throw Problem(path: at, message: "in \(name): \(problem.path): \(problem.message)", hint: problem.hint)
        } catch {
            throw Problem(path: at, message: "\(name) is not valid JSON: \(error)", hint: "a flow file is one JSON object")
        }
        var vars = flow.vars
        var sources = Dictionary(uniqueKeysWithValues: flow.vars.keys.map { ($0, "\(path) (include \(name)): \(flow.varSources[$0] ?? "$.vars.\($0)")") })
        if let given = o["vars"] {
            let names = flow.variableNames
            for (variable, value) in try object(given, at: path.appending("vars"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                guard names.contains(variable) else {
                    let suggestion = Suggest.closest(to: variable, in: names.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                    throw Problem(path: path.appending("vars").appending(variable), message: "\(name) has no variable '\(variable)'\(suggestion)",
                                  hint: "its variables: \(names.sorted().joined(separator: ", "))")
                }
                vars[variable] = value
                sources[variable] = "\(path.appending("vars").appending(variable))"
            }
        }
        for (variable, value) in vars {
            if let earlier = included.vars[variable], earlier != value, let by = included.setBy[variable] {
                included.conflicts[variable] = [by, name]
            }
            included.vars[variable] = value
            included.setBy[variable] = name
            included.sources[variable] = sources[variable]
        }
        included.declaredAt[path] = Set(flow.vars.keys)
        included.varDescriptions.merge(flow.varDescriptions) { first, _ in first }
        included.finally = flow.finally.map { located($0, at: path, in: name) } + included.finally
        return flow.steps.map { located($0, at: path, in: name) }
    }

    /// An included step says where it comes from in messages — the include in this file, then its place in the included
    /// flow, `$.steps[2] (include bahn-apple-pay): $.steps[1]` — so that two includes of one flow are told apart.
    private func located(_ step: Step, at include: JSONPath, in name: String) -> Step {
        var step = step
        step.location = "\(include) (include \(name)): \(step.location)"
        step.includedAt = include  // the outermost include: where the step comes from in the file that is run
        return step
    }

    private func step(_ json: JSON, at path: JSONPath) throws -> Step {
        let o = try object(json, at: path, allowed: Keys.step)
        let name = try string(o["name"], at: path.appending("name"), required: true)!
        let description = try string(o["description"], at: path.appending("description"))
        guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
            throw Problem(path: path.appending("name"), message: "step name '\(name)' may hold only letters, digits, '-' and '_'",
                          hint: "the name is used in ${steps.<name>.…} references")
        }
        let action: Step.Action
        switch (o["request"], o["use"]) {
        case (let r?, nil):
            if o["with"] != nil { throw Problem(path: path.appending("with"), message: "'with' belongs to a 'use' step, not to a 'request'") }
            action = .request(try request(r, at: path.appending("request")))
        case (nil, let u?):
            let opPath = path.appending("use")
            let opName = try string(u, at: opPath, required: true)!
            guard let op = registry[opName] else {
                let known = registry.names
                let suggestion = Suggest.closest(to: opName, in: known).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(path: opPath, message: "unknown operation '\(opName)'\(suggestion)",
                              hint: known.isEmpty ? nil : "operations: \(known.joined(separator: ", "))")
            }
            let args = o["with"] ?? .object([:])
            try op.validate(arguments: args, at: path.appending("with"))
            action = .operation(name: opName, arguments: args)
        case (nil, nil):
            throw Problem(path: path, message: "a step needs either 'request' (raw HTTP) or 'use' (a provider operation)")
        case (.some, .some):
            throw Problem(path: path, message: "a step has either 'request' or 'use', not both")
        }
        var capture: [String: JSONPath] = [:]
        if let c = o["capture"] {
            for (k, v) in try object(c, at: path.appending("capture"), allowed: nil) {
                capture[k] = try jsonPath(v, at: path.appending("capture").appending(k))
            }
        }
        let expect = try o["expect"].map { try expectation($0, at: path.appending("expect")) } ?? Expectation()
        let retry = try o["retry"].map { try retryPolicy($0, at: path.appending("retry")) }
        let until = try o["until"].map { try untilSpec($0, at: path.appending("until")) }
        let optional = try bool(o["optional"], at: path.appending("optional")) ?? false
        return Step(name: name, description: description, action: action, capture: capture, expect: expect, retry: retry, until: until,
                    optional: optional, location: path.description)
    }

    private func request(_ json: JSON, at path: JSONPath) throws -> RequestTemplate {
        let o = try object(json, at: path, allowed: Keys.request)
        let method = (try string(o["method"], at: path.appending("method")) ?? "GET").uppercased()
        guard method.allSatisfy({ $0.isLetter }) else {
            throw Problem(path: path.appending("method"), message: "'\(method)' is not an HTTP method")
        }
        let url = try string(o["url"], at: path.appending("url"), required: true)!
        try checkTemplate(.string(url), at: path.appending("url"))
        var headers: [(String, String)] = []
        if let h = o["headers"] {
            for (k, v) in try object(h, at: path.appending("headers"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let at = path.appending("headers").appending(k)
                guard HeaderSafety.isToken(k) else {
                    throw Problem(path: at, message: "'\(k)' is not a valid header name",
                                  hint: "header names are letters, digits and !#$%&'*+-.^_`|~")
                }
                let value = try string(v, at: at, required: true)!
                try checkTemplate(.string(value), at: at)
                try Self.checkOneLine(value, at: at, into: "header \(k)")
                headers.append((k, value))
            }
        }
        let bodies = ["json", "body", "bodyFile"].filter { o[$0] != nil }
        if bodies.count > 1 {
            throw Problem(path: path, message: "give one of 'json', 'body' or 'bodyFile', not \(bodies.joined(separator: " and "))")
        }
        var body: RequestTemplate.Body?
        if let j = o["json"] {
            try checkTemplate(j, at: path.appending("json"))
            body = .json(j)
        } else if let b = o["body"] {
            body = .text(try string(b, at: path.appending("body"), required: true)!)
        } else if let f = o["bodyFile"] {
            body = .file(try string(f, at: path.appending("bodyFile"), required: true)!)
        }
        return RequestTemplate(method: method, url: url, headers: headers, body: body)
    }

    private func expectation(_ json: JSON, at path: JSONPath) throws -> Expectation {
        let o = try object(json, at: path, allowed: Keys.expect)
        var status: [Int]?
        if let s = o["status"] {
            switch s {
            case .number: status = [try int(s, at: path.appending("status"), range: 100...599)]
            case .array(let a):
                if a.isEmpty {
                    throw Problem(path: path.appending("status"), message: "an empty list accepts no status at all",
                                  hint: "give at least one code, or leave status out for any 2xx")
                }
                status = try a.enumerated().map { try int($1, at: path.appending("status").appending($0), range: 100...599) }
            default: throw Problem(path: path.appending("status"), message: "expected a status code or an array of them, found \(s.kindName)")
            }
        }
        var conditions: [Condition] = []
        if let eq = o["equals"] {
            for (k, v) in try object(eq, at: path.appending("equals"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                conditions.append(Condition(path: try jsonPath(.string(k), at: path.appending("equals").appending(k)), test: .equals(v)))
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
                throw Problem(path: path.appending("exists"), message: "expected an array of JSON paths, found \(e.kindName)")
            }
            for (i, item) in items.enumerated() {
                conditions.append(Condition(path: try jsonPath(item, at: path.appending("exists").appending(i)), test: .exists(true)))
            }
        }
        if let c = o["compare"] {
            for (k, v) in try object(c, at: path.appending("compare"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("compare").appending(k)
                conditions.append(Condition(path: try jsonPath(.string(k), at: p), test: .compare(try comparison(v, at: p))))
            }
        }
        if let c = o["contains"] {
            for (k, v) in try object(c, at: path.appending("contains"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                conditions.append(Condition(path: try jsonPath(.string(k), at: path.appending("contains").appending(k)), test: .contains(v)))
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
                    throw Problem(path: p, message: "expected a type, found \(v.serialized())",
                                  hint: "types: \(Condition.ValueType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                conditions.append(Condition(path: try jsonPath(.string(k), at: p), test: .type(type)))
            }
        }
        var expectation = Expectation(status: status, conditions: conditions)
        if let h = o["headers"] {
            for (name, v) in try object(h, at: path.appending("headers"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let p = path.appending("headers").appending(name)
                guard HeaderSafety.isToken(name) else { throw Problem(path: p, message: "'\(name)' is not a valid header name") }
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
                case "equals": expectation.headers.append(HeaderCondition(name: name, test: .equals(try string(operand, at: p.appending(kind), required: true)!)))
                case "matches": expectation.headers.append(HeaderCondition(name: name, test: .matches(try regex(operand, at: p.appending(kind)))))
                default: expectation.headers.append(HeaderCondition(name: name, test: .exists(try bool(operand, at: p.appending(kind))!)))
                }
            }
        }
        if let d = o["duration"] {
            let p = path.appending("duration")
            // Durations in the flow's own units ("500ms"); kept as seconds.
            guard case .object(let bounds) = d else { throw Problem(path: p, message: "expected bounds such as {\"<\": \"500ms\"}, found \(d.kindName)") }
            var inSeconds: [String: JSON] = [:]
            for (op, value) in bounds {
                if op == "between", case .array(let ends) = value {
                    inSeconds[op] = .array(try ends.enumerated().map { JSON(try seconds($1, at: p.appending(op).appending($0))) })
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
        if o.isEmpty { throw Problem(path: path, message: "give a bound: \(Comparison.Operator.allCases.map(\.rawValue).joined(separator: ", ")) or between") }
        func exact(_ value: JSON, at p: JSONPath) throws -> ExactDecimal {
            guard let d = Comparison.exact(value) else {
                throw Problem(path: p, message: "expected a number or a decimal string such as \"10.00\", found \(value.serialized())")
            }
            return d
        }
        var bounds: [Comparison.Bound] = []
        for op in Comparison.Operator.allCases {
            if let v = o[op.rawValue] { bounds.append(.init(op: op, value: try exact(v, at: path.appending(op.rawValue)), literal: v)) }
        }
        if let between = o["between"] {
            let p = path.appending("between")
            guard case .array(let ends) = between, ends.count == 2 else {
                throw Problem(path: p, message: "expected [low, high], found \(between.serialized())")
            }
            let low = try exact(ends[0], at: p.appending(0)), high = try exact(ends[1], at: p.appending(1))
            if low > high { throw Problem(path: p, message: "the low end \(ends[0].serialized()) is above the high end \(ends[1].serialized())") }
            bounds += [.init(op: .greaterOrEqual, value: low, literal: ends[0]), .init(op: .lessOrEqual, value: high, literal: ends[1])]
        }
        return Comparison(bounds: bounds)
    }

    private func untilSpec(_ json: JSON, at path: JSONPath) throws -> Until {
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
        return Until(condition: Condition(path: p, test: test),
                     interval: try o["interval"].map { try seconds($0, at: path.appending("interval")) } ?? 1,
                     timeout: try o["timeout"].map { try seconds($0, at: path.appending("timeout")) } ?? 30)
    }

    private func retryPolicy(_ json: JSON, at path: JSONPath) throws -> RetryPolicy {
        let o = try object(json, at: path, allowed: Keys.retry)
        let attempts = try o["attempts"].map { try int($0, at: path.appending("attempts"), range: 1...100) } ?? 3
        let interval = try o["interval"].map { try seconds($0, at: path.appending("interval")) } ?? 0.2
        let backoff = try o["backoff"].map { v -> Double in
            guard let d = v.doubleValue, d >= 1, d <= 10 else {
                throw Problem(path: path.appending("backoff"), message: "expected a factor between 1 and 10, found \(v)")
            }
            return d
        } ?? 2
        return RetryPolicy(attempts: attempts, interval: interval, backoff: backoff)
    }

    /// Step names are unique, and references only point backwards: a step can use what earlier steps
    /// produced, `finally` steps can use anything.
    private func checkNames(_ flow: Flow, at path: JSONPath) throws {
        var seen: [String: Step] = [:]
        for step in flow.steps + flow.finally {
            if let first = seen[step.name] {
                // With includes, both may come from other files: say where each is, by the include steps of this file.
                let included = first.includedAt != nil || step.includedAt != nil
                let places = included ? " (\(first.location) and \(step.location))" : ""
                throw Problem(path: (step.includedAt ?? (try? JSONPath(step.location)) ?? .root).appending("name"),
                              message: "duplicate step name '\(step.name)'\(places)",
                              hint: included ? "steps of included flows keep their names: rename the including flow's step, or include the flow once" : nil)
            }
            seen[step.name] = step
        }
        var known = Set(flow.vars.keys)
        var earlier: Set<String> = []
        let all = flow.steps.map { ($0, false) } + flow.finally.map { ($0, true) }
        let everyStep = Set(all.map { $0.0.name })
        let everyCapture = Set(all.flatMap { $0.0.capture.keys })
        for (i, (step, isFinally)) in all.enumerated() {
            let where_ = isFinally ? path.appending("finally").appending(i - flow.steps.count) : path.appending("steps").appending(i)
            for segment in try references(of: step, at: where_) {
                guard case .reference(let ref, let fallback, let source) = segment, fallback == nil else { continue }
                switch ref {
                case .steps(let name, _):
                    let ok = isFinally ? everyStep.contains(name) : earlier.contains(name)
                    if !ok {
                        throw Problem(path: where_, message: "\(source) refers to step '\(name)', which \(everyStep.contains(name) ? "runs later" : "does not exist")")
                    }
                case .vars(let name, _):
                    // Variables may also come from the command line (--var), so an undeclared name is only
                    // an error here when nothing could define it; the runner re-checks with the real values.
                    let ok = known.contains(name) || (isFinally && everyCapture.contains(name))
                    if !ok && !everyCapture.contains(name) { continue }
                    if !ok {
                        throw Problem(path: where_, message: "\(source) is captured by a later step",
                                      hint: "move the step that captures '\(name)' before this one")
                    }
                default: break
                }
            }
            earlier.insert(step.name)
            known.formUnion(step.capture.keys)
        }
    }

    /// The flow's variables in an order where each default comes after the variables it refers to, so that
    /// `"total": "${vars.amount}"` sees `amount`; variables that refer to each other are an error naming the cycle.
    static func variableOrder(_ vars: [String: JSON], at path: JSONPath = JSONPath(components: [.key("vars")])) throws -> [String] {
        var dependencies: [String: [String]] = [:]
        for (name, value) in vars {
            let refs = (try? Template.references(in: value)) ?? []
            dependencies[name] = refs.compactMap { segment in
                if case .reference(.vars(let other, _), _, _) = segment, vars[other] != nil { return other }
                return nil
            }
        }
        var order: [String] = []
        var done: Set<String> = []
        func visit(_ name: String, _ trail: [String]) throws {
            if done.contains(name) { return }
            if let start = trail.firstIndex(of: name) {
                let cycle = (trail[start...] + [name]).joined(separator: " → ")
                throw Problem(path: path.appending(name), message: "variables refer to each other in a cycle: \(cycle)",
                              hint: "give one of them a value that does not refer back")
            }
            for other in dependencies[name] ?? [] { try visit(other, trail + [name]) }
            done.insert(name)
            order.append(name)
        }
        for name in vars.keys.sorted() { try visit(name, []) }
        return order
    }

    func references(of step: Step, at path: JSONPath) throws -> [Template.Segment] {
        do {
            switch step.action {
            case .request(let r):
                var refs = try Template.references(in: .string(r.url))
                for h in r.headers { refs += try Template.references(in: .string(h.value)) }
                switch r.body {
                case .json(let j): refs += try Template.references(in: j)
                case .text(let t), .file(let t): refs += try Template.references(in: .string(t))
                case nil: break
                }
                return refs
            case .operation(_, let args):
                return try Template.references(in: args)
            }
        } catch {
            throw Problem(path: path, message: error.description)
        }
    }

    // MARK: - typed readers

    /// The flow file's own text in a header or a one-line argument — literal parts and `|fallback`s — must be one line.
    static func checkOneLine(_ template: String, at path: JSONPath, into target: String) throws {
        let segments = (try? Template.parse(template)) ?? [.literal(template)]
        for segment in segments {
            let text: String? = switch segment {
            case .literal(let l): l
            case .reference(_, let fallback, _): fallback
            }
            if let text, let problem = HeaderSafety.problem(text) {
                throw Problem(path: path, message: "the value \(problem), which cannot go into \(target)",
                              hint: "a header value is one line")
            }
        }
    }

    private func checkTemplate(_ value: JSON, at path: JSONPath) throws {
        do { _ = try Template.references(in: value) } catch { throw Problem(path: path, message: error.description) }
    }

    func object(_ json: JSON, at path: JSONPath, allowed: Set<String>?) throws -> [String: JSON] {
        guard case .object(let o) = json else { throw Problem(path: path, message: "expected an object, found \(json.kindName)") }
        if let allowed {
            for key in o.keys.sorted() where !allowed.contains(key) {
                let suggestion = Suggest.closest(to: key, in: Array(allowed)).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(path: path.appending(key), message: "unknown key '\(key)'\(suggestion)",
                              hint: "allowed here: \(allowed.filter { !$0.hasPrefix("$") }.sorted().joined(separator: ", "))")
            }
        }
        return o
    }

    func string(_ json: JSON?, at path: JSONPath, required: Bool = false) throws -> String? {
        guard let json else {
            if required { throw Problem(path: path, message: "missing required string") }
            return nil
        }
        guard case .string(let s) = json else { throw Problem(path: path, message: "expected a string, found \(json.kindName)") }
        if required && s.isEmpty { throw Problem(path: path, message: "must not be empty") }
        return s
    }

    func bool(_ json: JSON?, at path: JSONPath) throws -> Bool? {
        guard let json else { return nil }
        guard case .bool(let b) = json else { throw Problem(path: path, message: "expected true or false, found \(json.kindName)") }
        return b
    }

    func int(_ json: JSON, at path: JSONPath, range: ClosedRange<Int>) throws -> Int {
        guard let i = json.intValue, range.contains(i) else {
            throw Problem(path: path, message: "expected an integer in \(range.lowerBound)…\(range.upperBound), found \(json)")
        }
        return i
    }

    func seconds(_ json: JSON, at path: JSONPath) throws -> Double {
        if let d = json.doubleValue, d >= 0 { return d }
        if let s = json.stringValue, let d = Duration.seconds(from: s) { return d }
        throw Problem(path: path, message: "expected seconds (a number, or a string like \"500ms\", \"2s\", \"1m\"), found \(json)")
    }

    func jsonPath(_ json: JSON, at path: JSONPath) throws -> JSONPath {
        guard case .string(let s) = json else { throw Problem(path: path, message: "expected a JSON path string, found \(json.kindName)") }
        do { return try JSONPath(s) } catch { throw Problem(path: path, message: "\(error)") }
    }

    func regex(_ json: JSON, at path: JSONPath) throws -> String {
        guard case .string(let s) = json else { throw Problem(path: path, message: "expected a regular expression string") }
        do { _ = try NSRegularExpression(pattern: s) } catch {
            throw Problem(path: path, message: "invalid regular expression '\(s)'")
        }
        return s
    }
}

extension Duration {
    /// Seconds from "1.5" (a bare number is seconds), "250ms", "2s", "1m", "5h", or a sequence of those from the
    /// largest unit down: "1m30s", "2h15m", "1s500ms". Nil for anything else (a sign, a unit twice, "1s1m").
    public static func seconds(from text: String) -> Double? {
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let plain = Double(t) { return plain >= 0 && plain.isFinite && !t.hasPrefix("+") ? plain : nil }
        let units: [(suffix: String, seconds: Double)] = [("h", 3600), ("ms", 0.001), ("m", 60), ("s", 1)]
        let order = ["h", "m", "s", "ms"]
        var rest = Substring(t)
        var total = 0.0
        var last = -1
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }),
                  let position = order.firstIndex(of: unit.suffix), position > last else { return nil }
            last = position
            rest = rest.dropFirst(unit.suffix.count)
            total += value * unit.seconds
        }
        return last >= 0 && total.isFinite ? total : nil
    }
}
