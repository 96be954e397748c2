import Foundation

/// Reads a flow file's JSON (behind `FlowFile`): its steps, includes, requests and names here, what steps expect in
/// `FlowDecoder+Expectations.swift`, the typed readers in `FlowDecoder+Readers.swift`.
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
        static func key(_ path: String) -> String {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        }
    }

    /// What the includes of a flow bring beside their steps: the included flows' variables (their defaults, with each
    /// include's `vars` over them), what those mean, and their `finally` steps.
    struct Included {
        var vars: JSON.Object = [:]
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
        static let flow: Set<String> = [
            "name", "description", "vars", "varDescriptions", "steps", "finally", "deadline", "$schema",
        ]
        static let step: Set<String> = [
            "name", "description", "request", "use", "with", "capture", "expect", "retry", "until", "optional",
        ]
        static let include: Set<String> = ["include", "vars", "description"]
        static let request: Set<String> = ["method", "url", "headers", "json", "body", "bodyFile"]
        static let expect: Set<String> = [
            "status", "equals", "matches", "exists", "compare", "contains", "count", "type", "headers", "duration",
        ]
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
        let finallySteps =
            try (o["finally"].map { try stepList($0, at: path.appending("finally"), into: &included) } ?? [])
            + included.finally
        // Variables are shared: the flow's own `vars` over its includes', each include's `vars` over the included
        // flow's.
        var vars = included.vars
        vars.merge(ownVars) { _, own in own }
        for (name, sources) in included.conflicts.sorted(by: { $0.key < $1.key }) where ownVars[name] == nil {
            throw Problem(
                path: path.appending("vars"),
                message:
                    "variable '\(name)' gets different values from the includes of \(sources.joined(separator: " and "))",
                hint: "variables are shared: give '\(name)' one value in this flow's \"vars\"")
        }
        _ = try Self.variableOrder(vars, at: path.appending("vars"))
        var varDescriptions = included.varDescriptions
        if let d = o["varDescriptions"] {
            for (name, text) in try object(d, at: path.appending("varDescriptions"), allowed: nil).sorted(by: {
                $0.key < $1.key
            }) {
                let at = path.appending("varDescriptions").appending(name)
                guard vars[name] != nil else {
                    let suggestion =
                        Suggest.closest(to: name, in: Array(vars.keys)).map { "; did you mean '\($0)'?" } ?? ""
                    throw Problem(
                        path: at, message: "describes '\(name)', which is not in \"vars\"\(suggestion)",
                        hint: "describe the variables the flow declares in \"vars\"")
                }
                varDescriptions[name] = try string(text, at: at, required: true)
            }
        }
        let deadline = try o["deadline"].map { try seconds($0, at: path.appending("deadline")) }
        var flow = Flow(
            name: name, description: description, vars: vars, steps: steps, finally: finallySteps, deadline: deadline)
        flow.varDescriptions = varDescriptions
        // Variables are shared: a step's capture replaces a value another part of the flow declared — this flow's
        // own step capturing an included flow's variable, or an included step capturing one declared elsewhere.
        // Only with includes: a step of a flow without them is not included, and no include declares anything.
        for step in included.declaredAt.isEmpty ? [] : steps + finallySteps where !step.capture.isEmpty {
            let include = step.includedAt
            for name in step.capture.keys.sorted() {
                var declarers =
                    include != nil && ownVars[name] != nil
                    ? ["this flow's \(path.appending("vars").appending(name))"] : []
                for (other, names) in included.declaredAt.sorted(by: { $0.key.description < $1.key.description })
                where other != include && names.contains(name) { declarers.append("the flow included at \(other)") }
                guard !declarers.isEmpty else { continue }
                flow.warnings.append(
                    "\(step.location) (step '\(step.name)') captures '\(name)', which \(declarers.joined(separator: " and ")) declares: from then on the captured value replaces the declared one"
                )
            }
        }
        flow.varSources = included.sources.filter { ownVars[$0.key] == nil }
        flow.ownsState = true
        flow.argumentsChecked = true  // each `use` step's `with`, in `step`
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

    /// `{"include": "NAME|PATH", "vars": {…}}`: the steps of a built-in flow or of a flow file (relative to the
    /// including file), in place. Its variables join the flow's; its `finally` steps join the flow's.
    private func include(
        _ target: JSON, _ o: JSON.Object, at path: JSONPath, into included: inout Included
    ) throws -> [Step] {
        _ = try object(.object(o), at: path, allowed: Keys.include)
        let at = path.appending("include")
        let name = try string(target, at: at, required: true)!
        let key: String
        let data: Data
        var nested = includes
        if name.contains("/") || name.hasSuffix(".json") {
            let full =
                name.hasPrefix("/")
                ? name
                : ((includes.directory ?? FileManager.default.currentDirectoryPath) as NSString).appendingPathComponent(
                    name)
            key = Includes.key(full)
            switch FileIO.read(full) {
            case .success(let bytes): data = bytes
            case .failure(let error):
                throw Problem(
                    path: at, message: "cannot read included flow \(name) (\(full)): \(error.reason)",
                    hint: "an include's path is relative to the file that includes it")
            }
            nested.directory = FileIO.directory(of: key)
        } else {
            guard let entry = BuiltinFlows.named(name) else {
                let suggestion =
                    Suggest.closest(to: name, in: BuiltinFlows.all.map(\.name)).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(
                    path: at, message: "no built-in flow named '\(name)'\(suggestion)",
                    hint: "include a built-in flow (flow list) or a flow file: a path with '/' or ending in .json")
            }
            key = "built-in \(name)"
            data = Data(entry.source.utf8)
        }
        if includes.chain.contains(key) {
            let names = (includes.chain + [key]).map { ($0 as NSString).lastPathComponent }
            throw Problem(
                path: at, message: "include cycle: \(names.joined(separator: " → "))",
                hint: "a flow cannot include itself, directly or through another")
        }
        nested.chain.append(key)
        let flow: Flow
        do {
            flow = try FlowDecoder(registry: registry, includes: nested).flow(try JSON.parse(data), at: .root)
        } catch let problem as Problem {
            throw Problem(path: at, message: "in \(name): \(problem.path): \(problem.message)", hint: problem.hint)
        } catch {
            throw Problem(
                path: at, message: "\(name) is not valid JSON: \(error)", hint: "a flow file is one JSON object")
        }
        var vars = flow.vars
        var sources = Dictionary(
            uniqueKeysWithValues: flow.vars.keys.map {
                ($0, "\(path) (include \(name)): \(flow.varSources[$0] ?? "$.vars.\($0)")")
            })
        if let given = o["vars"] {
            let names = flow.variableNames
            for (variable, value) in try object(given, at: path.appending("vars"), allowed: nil).sorted(by: {
                $0.key < $1.key
            }) {
                guard names.contains(variable) else {
                    let suggestion =
                        Suggest.closest(to: variable, in: names.sorted()).map { "; did you mean '\($0)'?" } ?? ""
                    throw Problem(
                        path: path.appending("vars").appending(variable),
                        message: "\(name) has no variable '\(variable)'\(suggestion)",
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
        guard JSONPath.isPlainKey(name) else {
            throw Problem(
                path: path.appending("name"), message: "step name '\(name)' may hold only letters, digits, '-' and '_'",
                hint: "the name is used in ${steps.<name>.…} references")
        }
        let action: Step.Action
        switch (o["request"], o["use"]) {
        case (let r?, nil):
            if o["with"] != nil {
                throw Problem(
                    path: path.appending("with"), message: "'with' belongs to a 'use' step, not to a 'request'")
            }
            action = .request(try request(r, at: path.appending("request")))
        case (nil, let u?):
            let opPath = path.appending("use")
            let opName = try string(u, at: opPath, required: true)!
            guard let op = registry[opName] else {
                let known = registry.names
                let suggestion = Suggest.closest(to: opName, in: known).map { "; did you mean '\($0)'?" } ?? ""
                throw Problem(
                    path: opPath, message: "unknown operation '\(opName)'\(suggestion)",
                    hint: known.isEmpty ? nil : "operations: \(known.joined(separator: ", "))")
            }
            let args = o["with"] ?? .object([:])
            try op.validate(arguments: args, at: path.appending("with"))
            action = .operation(name: opName, arguments: args)
        case (nil, nil):
            throw Problem(
                path: path, message: "a step needs either 'request' (raw HTTP) or 'use' (a provider operation)")
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
        return Step(
            name: name, description: description, action: action, capture: capture, expect: expect, retry: retry,
            until: until,
            optional: optional, location: path.description)
    }

    private func request(_ json: JSON, at path: JSONPath) throws -> RequestTemplate {
        let o = try object(json, at: path, allowed: Keys.request)
        let method = (try string(o["method"], at: path.appending("method")) ?? "GET").uppercased()
        // A method is a token of ASCII letters on the wire (RFC 9110: in practice, letters).
        guard method.utf8.allSatisfy({ (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
            throw Problem(path: path.appending("method"), message: "'\(method)' is not an HTTP method")
        }
        let url = try string(o["url"], at: path.appending("url"), required: true)!
        try checkTemplate(.string(url), at: path.appending("url"))
        var headers: [(String, String)] = []
        if let h = o["headers"] {
            for (k, v) in try object(h, at: path.appending("headers"), allowed: nil).sorted(by: { $0.key < $1.key }) {
                let at = path.appending("headers").appending(k)
                guard HeaderSafety.isToken(k) else {
                    throw Problem(
                        path: at, message: "'\(k)' is not a valid header name",
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
            throw Problem(
                path: path,
                message: "give one of 'json', 'body' or 'bodyFile', not \(bodies.joined(separator: " and "))")
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

    /// Step names are unique, and references only point backwards: a step can use what earlier steps
    /// produced, `finally` steps can use anything.
    private func checkNames(_ flow: Flow, at path: JSONPath) throws {
        // The two lists are walked in place (a step is a large value: copies of them were most of the decoder's cost
        // for a long flow), and what an error shows is worked out only when there is one.
        var everyStep = Set<String>(minimumCapacity: flow.steps.count + flow.finally.count)
        var everyCapture: Set<String> = []
        for list in [flow.steps, flow.finally] {
            for step in list {
                guard everyStep.insert(step.name).inserted else { throw duplicate(step, in: flow) }
                everyCapture.formUnion(step.capture.keys)
            }
        }
        var known = Set(flow.vars.keys)
        var earlier: Set<String> = []
        for (isFinally, list) in [(false, flow.steps), (true, flow.finally)] {
            for (index, step) in list.enumerated() {
                func stepPath() -> JSONPath { path.appending(isFinally ? "finally" : "steps").appending(index) }
                for segment in try references(of: step, at: stepPath()) {
                    guard case .reference(let ref, let fallback, let source) = segment, fallback == nil else {
                        continue
                    }
                    switch ref {
                    case .steps(let name, _):
                        let ok = isFinally ? everyStep.contains(name) : earlier.contains(name)
                        if !ok {
                            throw Problem(
                                path: stepPath(),
                                message:
                                    "\(source) refers to step '\(name)', which \(everyStep.contains(name) ? "runs later" : "does not exist")"
                            )
                        }
                    case .vars(let name, _):
                        // Variables may also come from the command line (--var), so an undeclared name is only
                        // an error here when nothing could define it; the runner re-checks with the real values.
                        let ok = known.contains(name) || (isFinally && everyCapture.contains(name))
                        if !ok && !everyCapture.contains(name) { continue }
                        if !ok {
                            throw Problem(
                                path: stepPath(), message: "\(source) is captured by a later step",
                                hint: "move the step that captures '\(name)' before this one")
                        }
                    default: break
                    }
                }
                earlier.insert(step.name)
                known.formUnion(step.capture.keys)
            }
        }
    }

    /// Two steps of one name: with includes, both may come from other files, so say where each is, by the include
    /// steps of this file.
    private func duplicate(_ step: Step, in flow: Flow) -> Problem {
        let first = (flow.steps + flow.finally).first { $0.name == step.name }!
        let included = first.includedAt != nil || step.includedAt != nil
        let places = included ? " (\(first.location) and \(step.location))" : ""
        return Problem(
            path: (step.includedAt ?? (try? JSONPath(step.location)) ?? .root).appending("name"),
            message: "duplicate step name '\(step.name)'\(places)",
            hint: included
                ? "steps of included flows keep their names: rename the including flow's step, or include the flow once"
                : nil)
    }

    /// The flow's variables in an order where each default comes after the variables it refers to, so that
    /// `"total": "${vars.amount}"` sees `amount`; variables that refer to each other are an error naming the cycle.
    static func variableOrder(
        _ vars: JSON.Object, at path: JSONPath = JSONPath(components: [.key("vars")])
    ) throws -> [String] {
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
                throw Problem(
                    path: path.appending(name), message: "variables refer to each other in a cycle: \(cycle)",
                    hint: "give one of them a value that does not refer back")
            }
            for other in dependencies[name] ?? [] { try visit(other, trail + [name]) }
            done.insert(name)
            order.append(name)
        }
        for name in vars.keys.sorted() { try visit(name, []) }
        return order
    }

    func references(of step: Step, at path: @autoclosure () -> JSONPath) throws -> [Template.Segment] {
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
            throw Problem(path: path(), message: error.description)
        }
    }
}
