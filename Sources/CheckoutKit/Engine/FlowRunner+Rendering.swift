import Foundation

/// How a step's templates become what is sent: a raw request rendered, an operation's arguments rendered and checked
/// as the operation will read them, and every value bound for a header checked to be one line — a bad value blamed on
/// where it came from.
extension FlowRunner {
    func render(
        _ template: RequestTemplate, scope: TemplateScope, step: Step
    ) throws(Diagnostic) -> HTTPClientRequest {
        let url = try renderText(template.url, scope: scope, step: step)
        guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw .data(
                "step '\(step.name)': URL \(redactor.text(url)) is not http(s)",
                hint: "start the url with a base such as ${env.EMULATOR_URL}")
        }
        try checkOneLine(step, scope: scope)
        var headers = HTTPHeaders()
        for h in template.headers { headers.add(h.name, try renderText(h.value, scope: scope, step: step)) }
        var body: Data?
        switch template.body {
        case .json(let j):
            body = try renderValue(j, scope: scope, step: step).data
            if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        case .text(let t):
            body = Data(try renderText(t, scope: scope, step: step).utf8)
        case .file(let f):
            let path = try renderText(f, scope: scope, step: step)
            switch services.madeFiles.read(path) {
            case .success(let bytes): body = bytes
            case .failure(let error):
                throw .data(
                    "step '\(step.name)': cannot read bodyFile \(path): \(error.reason)",
                    hint: "check the path (relative paths are from the directory you run in)")
            }
        case nil: break
        }
        return HTTPClientRequest(
            method: template.method, url: url, headers: headers, body: body, timeout: settings.requestTimeout)
    }

    /// Every template of the step whose value must be one line: request headers, and the operation's one-line
    /// string arguments (ids and keys that it may put into a header).
    func checkOneLine(_ step: Step, scope: TemplateScope) throws(Diagnostic) {
        switch step.action {
        case .request(let r):
            for h in r.headers { try checkOneLine(h.value, into: "header \(h.name)", scope: scope, step: step) }
        case .operation(let name, let arguments):
            for p in registry[name]?.parameters ?? [] where p.kind == .string && !p.multiline {
                if case .string(let template)? = arguments[p.name] {
                    try checkOneLine(template, into: "argument '\(p.name)' of \(name)", scope: scope, step: step)
                }
            }
        }
    }

    /// A value that goes into a header (or an argument that will) must be one line. The flow file's own text was
    /// checked when it was read; here each reference's value is, and a bad one is blamed on where it came from.
    func checkOneLine(
        _ template: String, into target: String, scope: TemplateScope, step: Step
    ) throws(Diagnostic) {
        guard let segments = try? Template.parse(template) else { return }
        for case .reference(let ref, _, let source) in segments {
            if case .uuid = ref { continue }
            if case .now = ref { continue }
            guard let value = scope.lookup(ref), let problem = HeaderSafety.problem(value.interpolationText) else {
                continue
            }
            let blame = ValueBlame(
                step: step, problem: "\(problem), which cannot go into \(target)", hint: "give it a one-line value",
                showsValue: false, stateFile: state?.path)
            throw blame.diagnostic(value, template: .string(source), scope: scope)
        }
    }

    /// The arguments' values as the operation will read them (`FlowOperation.check`); a bad one blamed on its source.
    func checkArguments(
        _ arguments: JSON.Object, of op: FlowOperation, step: Step, scope: TemplateScope
    ) throws(Diagnostic) {
        guard case .operation(_, let templates) = step.action, let problem = op.check(arguments, templates: templates)
        else { return }
        let blame = ValueBlame(
            step: step, problem: problem.problem, target: "argument '\(problem.argument)' of \(op.name)",
            hint: problem.hint, stateFile: state?.path)
        throw blame.diagnostic(problem.value, template: templates[problem.argument], scope: scope)
    }

    func renderText(_ text: String, scope: TemplateScope, step: Step) throws(Diagnostic) -> String {
        try renderValue(.string(text), scope: scope, step: step).interpolationText
    }

    func renderValue(_ value: JSON, scope: TemplateScope, step: Step) throws(Diagnostic) -> JSON {
        do { return try scope.render(value) } catch let u as TemplateScope.Unresolved {
            if let name = u.missingVariable {
                throw configuration.missing(name, neededBy: "\(u.source) in step '\(step.name)'")
            }
            throw .data(
                "step '\(step.name)': \(u.description)",
                hint: "give the value a source: an earlier step, the flow's \"vars\", --var, or a |fallback")
        } catch {
            throw .data(
                "step '\(step.name)': \(error)",
                hint: "fix the template's syntax: ${vars.x}, ${steps.<name>.<path>}, ${env.X}")
        }
    }
}
