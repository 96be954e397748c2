import Foundation
import Synchronization

/// Settings the command line gives every run.
public struct RunSettings: Sendable {
    public var environment: String
    /// Seconds per HTTP exchange (`--timeout`).
    public var requestTimeout: Double
    /// Seconds for the whole flow (`--deadline`); nil falls back to the flow's own, then to none.
    public var deadline: Double?
    public var retry: RetryPolicy
    /// The exit code of an interrupted run (130 for SIGINT, 143 for SIGTERM): the command line knows the signal.
    public var interruptedExitCode: @Sendable () -> ExitCode

    public init(
        environment: String, requestTimeout: Double = 30, deadline: Double? = nil, retry: RetryPolicy = .default,
        interruptedExitCode: @escaping @Sendable () -> ExitCode = { .interrupted }
    ) {
        self.environment = environment
        self.requestTimeout = requestTimeout
        self.deadline = deadline
        self.retry = retry
        self.interruptedExitCode = interruptedExitCode
    }
}

/// The shared sequential flow engine: runs a flow's steps in order, then its `finally` steps, with one
/// implementation of templating, retries, polling, expectations, captures and the deadline.
public struct FlowRunner: Sendable {
    public var client: HTTPClient
    public var registry: OperationRegistry
    public var settings: RunSettings
    public var configuration: Configuration
    public var state: StateStore?
    public var redactor: Redactor
    public var services: RunServices
    public var events: FlowEventSink
    /// What an earlier run of the same flow with the same variables learnt of its checks (`preflight`): a batch's.
    public var preflightRecord: PreflightRecord?

    public init(
        client: HTTPClient, registry: OperationRegistry, settings: RunSettings, configuration: Configuration,
        state: StateStore?, redactor: Redactor, services: RunServices = .init(), events: @escaping FlowEventSink
    ) {
        self.client = client
        self.registry = registry
        self.settings = settings
        self.configuration = configuration
        self.state = state
        self.redactor = redactor
        self.services = services
        self.events = events
    }

    /// Checks everything that can be checked without the network — every `${…}` reference, every configuration
    /// variable, header values, a `bodyFile` — so that a mistake stops the run before the first request. `flow
    /// validate` runs exactly this, so it rejects what a run would. Returns the state document it checked against, for
    /// the run to template from.
    /// - Parameter origins: where each of `overrides` came from (the command line when not given).
    @discardableResult
    public func preflight(
        _ flow: Flow, vars overrides: JSON.Object, origins: [String: VariableOrigin] = [:]
    ) throws(Diagnostic) -> JSON {
        let stateDocument = try state?.checked() ?? .object([:])
        let allCaptures = Set((flow.steps + flow.finally).flatMap { $0.capture.keys })
        // The captures will be saved at the end: a section they cannot go into stops the run now, not after it.
        if !allCaptures.isEmpty { _ = try state?.captures(in: stateDocument) }
        // A batch's earlier run of this flow with these variables passed every check that reads neither the state
        // file nor another file (the flow reads none): those give the same answer again, the state file's may not.
        if let preflightRecord, preflightRecord.passed(flow, vars: overrides) {
            try checkState(of: flow, against: stateDocument)
            return stateDocument
        }
        let decoder = FlowDecoder(registry: registry)
        var known = Set(flow.vars.keys).union(overrides.keys)
        // Whether every check below gives the same answer for the next run: nothing read from the state file (which
        // other runs change) or from a file.
        var repeatable = true
        // What is known before the run: configuration, the state file, the command line's variables.
        var probe = TemplateScope(
            vars: overrides, env: { [configuration] in configuration.value($0) }, state: stateDocument)
        probe.origins = Self.origins(of: flow, overrides: overrides, given: origins)
        probe.flowSource = flow.source
        for (name, value) in flow.vars.sorted(by: { $0.key < $1.key }) where overrides[name] == nil {
            let segments = (try? Template.references(in: value)) ?? []
            if segments.contains(where: Self.readsState) { repeatable = false }
            for case .reference(let ref, nil, let source) in segments {
                switch ref {
                case .env(let env) where configuration.value(env) == nil:
                    throw configuration.missing(env, neededBy: "flow variable '\(name)'")
                case .vars(let other, _) where !known.contains(other):
                    throw .data(
                        "\(flow.varSources[name] ?? "\(flow.source): $.vars.\(name)"): flow variable '\(name)': \(source) names an unknown variable",
                        hint: "declare it in the flow's \"vars\", or pass --var \(other)=VALUE")
                case .state(let path) where path.evaluate(stateDocument) == nil:
                    throw .data(
                        "flow variable '\(name)': \(source) is not in the state file \(state?.path ?? "(none)")",
                        hint: "run the command that records it first, or pass the value explicitly")
                default: break
                }
            }
        }
        // The flow's own variables join what is known as far as they can be worked out now (a few rounds, as one may
        // name another), so that their values are checked as a run would use them.
        for _ in 0..<3 {
            for (name, value) in flow.vars where overrides[name] == nil && probe.vars[name] == nil {
                if let rendered = try? probe.render(value) { probe.vars[name] = rendered }
            }
        }
        // Every configuration variable the flow needs and lacks is named at once, at the end of the checks below.
        var unset: [String] = []
        var neededBy: [String] = []
        func need(_ name: String, by purpose: String) {
            if !unset.contains(name) { unset.append(name) }
            if !neededBy.contains(purpose) { neededBy.append(purpose) }
        }
        for (index, step) in (flow.steps + flow.finally).enumerated() {
            let isFinally = index >= flow.steps.count
            let segments: [Template.Segment]
            do { segments = try decoder.references(of: step, at: .root) } catch let p as FlowDecoder.Problem {
                throw .data(
                    "\(step.location.isEmpty ? step.name : step.location): \(p.message)",
                    hint: p.hint ?? "fix the template's syntax: ${vars.x}, ${steps.<name>.<path>}, ${env.X}")
            } catch { throw .internalError("\(error)") }
            if segments.contains(where: Self.readsState) { repeatable = false }
            for case .reference(let ref, let fallback, let source) in segments where fallback == nil {
                switch ref {
                case .env(let name) where configuration.value(name) == nil:
                    need(name, by: "\(source) in step '\(step.name)'")
                case .vars(let name, _) where !known.contains(name) && !(isFinally && allCaptures.contains(name)):
                    throw .data(
                        "\(Self.place(of: step, source: flow.source)): \(source) names an unknown variable",
                        hint:
                            "declare it in the flow's \"vars\", capture it in an earlier step, or pass --var \(name)=VALUE"
                    )
                case .state(let path) where path.evaluate(stateDocument) == nil:
                    throw .data(
                        "step '\(step.name)': \(source) is not in the state file \(state?.path ?? "(none)")",
                        hint: "run the command that records it first, or pass the value explicitly")
                default: break
                }
            }
            if case .operation(let name, let arguments) = step.action, let op = registry[name] {
                // The one argument check a flow file gets when it is read, for flows built in code too (a command's
                // steps): an argument a command names and the operation does not declare fails here, never silently.
                // (Not again for each run of a batch of a flow read from a file: a quarter of this check's cost.)
                if !flow.argumentsChecked {
                    do { try op.validate(arguments: arguments, at: .root) } catch let p as FlowDecoder.Problem {
                        throw .data(
                            "step '\(step.name)': \(p.message)\(p.path == .root ? "" : " (at \(p.path))")",
                            hint: p.hint)
                    } catch { throw .internalError("\(error)") }
                }
                for variable in op.requiredConfiguration where configuration.value(variable) == nil {
                    need(variable, by: "step '\(step.name)' (\(name))")
                }
                if let check = op.stateCheck, let state { try check(stateDocument, state.path) }
                // Every argument known before the run is checked as the run will check it, and a bad one blamed on its
                // source.
                let known = (arguments.objectValue ?? [:]).compactMapValues { try? probe.render($0) }
                try checkArguments(known, of: op, step: step, scope: probe)
                if let check = op.argumentCheck { try check(known, arguments.objectValue, configuration) }
                // Input files whose path is known before the run (a literal, a variable, configuration) are read now.
                for p in op.parameters {
                    guard let input = p.input, let template = arguments[p.name],
                        let path = try? probe.render(template).stringValue
                    else { continue }
                    repeatable = false
                    try input.check(path)
                }
            }
            try checkOneLine(step, scope: probe)
            if case .request(let r) = step.action, case .file(let file)? = r.body,
                let path = try? probe.render(.string(file)).interpolationText
            {
                repeatable = false
                // A literal, or a path from a variable or configuration known before the run.
                if case .failure(let error) = FileIO.read(path) {
                    throw .data(
                        "step '\(step.name)': cannot read bodyFile \(path): \(error.reason)",
                        hint: "check the path (relative paths are from the directory you run in)")
                }
            }
            known.formUnion(step.capture.keys)
        }
        if !unset.isEmpty { throw configuration.missing(unset, neededBy: neededBy) }
        if repeatable { preflightRecord?.record(flow, vars: overrides) }
        return stateDocument
    }

    /// The checks of `preflight` that read the state file: each operation's own (`FlowOperation.stateCheck`).
    private func checkState(of flow: Flow, against stateDocument: JSON) throws(Diagnostic) {
        guard let state else { return }
        for step in flow.steps + flow.finally {
            if case .operation(let name, _) = step.action, let check = registry[name]?.stateCheck {
                try check(stateDocument, state.path)
            }
        }
    }

    /// Whether a template's part reads the state file (`${state.…}`, with or without a fallback).
    private static func readsState(_ segment: Template.Segment) -> Bool {
        if case .reference(.state, _, _) = segment { return true }
        return false
    }

    public func run(
        _ flow: Flow, vars overrides: JSON.Object = [:], origins: [String: VariableOrigin] = [:]
    ) async -> FlowResult {
        // Run on the transport's own thread when it has one: a step's transfer then starts without a thread hop.
        guard let executor = client.preferredExecutor else {
            return await execute(flow, vars: overrides, origins: origins)
        }
        return await withTaskExecutorPreference(executor) { await execute(flow, vars: overrides, origins: origins) }
    }

    /// Where each variable's value comes from: `given` for the overrides (the command line when not said), the flow
    /// file for the others. A declared variable whose value is exactly one reference takes that reference's source:
    /// `"${env.AMOUNT}"` is configuration, `"${vars.amount}"` is wherever `amount` came from. Where a step is written,
    /// for a message: "my-flow.json: $.steps[2] (step 'confirm')".
    static func place(of step: Step, source: String) -> String {
        let file = source.isEmpty ? "" : "\(source): "
        return step.location.isEmpty ? "step '\(step.name)'" : "\(file)\(step.location) (step '\(step.name)')"
    }

    static func origins(
        of flow: Flow, overrides: JSON.Object, given: [String: VariableOrigin]
    ) -> [String: VariableOrigin] {
        var origins: [String: VariableOrigin] = [:]
        for name in flow.vars.keys {
            origins[name] = .declared(flow.varSources[name] ?? "\(flow.source): $.vars.\(name)")
        }
        for name in overrides.keys { origins[name] = given[name] ?? .commandLine }
        func only(_ name: String) -> Template.Reference? {
            guard overrides[name] == nil, let text = flow.vars[name]?.stringValue,
                let segments = try? Template.parse(text),
                segments.count == 1, case .reference(let ref, nil, _) = segments[0]
            else { return nil }
            return ref
        }
        for name in flow.vars.keys {
            switch only(name) {
            case .env(let variable)?: origins[name] = .configuration(variable)
            case .vars(let other, let path)? where path.components.isEmpty: origins[name] = .sameAs(other)
            default: break
            }
        }
        return origins
    }

    private func execute(
        _ flow: Flow, vars overrides: JSON.Object, origins: [String: VariableOrigin]
    ) async -> FlowResult {
        let started = Date()
        let clock = ContinuousClock.now
        var result = FlowResult(
            name: flow.name, environment: settings.environment, startedAt: started, duration: 0,
            steps: [], failure: nil, captures: [:])
        // A flow that cannot start (a missing credential, an unknown variable) has no steps to report: it
        // finishes without ever starting.
        let stateDocument: JSON
        do { stateDocument = try preflight(flow, vars: overrides, origins: origins) } catch {
            result.failure = error
            result.duration = Date().timeIntervalSince(started)
            events(.flowFinished(result))
            return result
        }
        events(
            .flowStarted(
                name: flow.name, environment: settings.environment, steps: flow.steps.count, finally: flow.finally.count
            ))

        let deadlineSeconds = settings.deadline ?? flow.deadline
        let deadline = Deadline(start: clock, seconds: deadlineSeconds)
        var scope = TemplateScope(
            vars: [:], steps: [:], env: { [configuration] in configuration.value($0) },
            state: stateDocument)
        // Values from the command line are taken literally, and come first. Declared defaults may themselves be
        // templates (`"order_id": "${uuid}"`, `"total": "${vars.amount}"`): rendered once, up front, each after the
        // variables it refers to, so every step sees the same value.
        scope.origins = Self.origins(of: flow, overrides: overrides, given: origins)
        scope.flowSource = flow.source
        for (name, value) in overrides { scope.vars[name] = value }
        let order = (try? FlowDecoder.variableOrder(flow.vars)) ?? flow.vars.keys.sorted()
        for name in order where overrides[name] == nil {
            guard let value = flow.vars[name] else { continue }
            do { scope.vars[name] = try scope.render(value) } catch {
                let missing = (error as? TemplateScope.Unresolved)?.missingVariable
                result.failure =
                    missing.map { configuration.missing($0, neededBy: "flow variable '\(name)'") }
                    ?? .data("flow variable '\(name)': \(error)")
                result.duration = Date().timeIntervalSince(started)
                events(.flowFinished(result))
                return result
            }
        }

        for (index, step) in flow.steps.enumerated() {
            if result.failure == nil, Task.isCancelled {
                result.failure = Diagnostic(
                    .interrupted, "interrupted before step '\(step.name)'",
                    hint: Diagnostic.interrupted(during: step.name).hint)
            }
            if let failure = result.failure {
                let why =
                    failure.code == .interrupted
                    ? "not run: the flow was interrupted" : "skipped after an earlier failure"
                result.steps.append(
                    StepResult(
                        name: step.name, isFinally: false, optional: step.optional, outcome: .skipped,
                        startedAt: Date(), duration: 0, requests: 0, polls: 0, status: nil,
                        message: why, output: nil))
                events(.stepFinished(result.steps.last!))
                continue
            }
            events(.stepStarted(name: step.name, index: index, isFinally: false))
            var stepResult = await runStep(step, scope: &scope, deadline: deadline, captures: &result.captures)
            if Task.isCancelled, let failure = stepResult.failure, !Self.keptWhenInterrupted.contains(failure.code) {
                // Cut short by the interruption, whatever the step made of it (a connection it saw closed, say).
                stepResult.failure = .interrupted(during: step.name)
                stepResult.result.message = stepResult.failure?.message
            }
            result.steps.append(stepResult.result)
            events(.stepFinished(stepResult.result))
            if let failure = stepResult.failure, !step.optional || failure.code == .interrupted {
                result.failure = failure
            }
        }
        let finished = await runFinally(flow, scope: scope, result: result, interrupted: Task.isCancelled)
        result = finished
        if Task.isCancelled, result.failure == nil {
            result.failure = Diagnostic(
                .interrupted, "interrupted while the finally steps ran",
                hint: "the main steps had passed; check what the finally steps did in the report")
        }
        if result.failure?.code == .interrupted { result.failure?.code = settings.interruptedExitCode() }
        result.duration = Date().timeIntervalSince(started)
        events(.flowFinished(result))
        return result
    }

    /// Seconds that `finally` steps get, all together, after an interruption: enough for a rollback, short enough
    /// that Ctrl-C still feels like it works.
    static let finallyAfterInterruption: Double = 5

    /// Failures an interruption does not overwrite: they say more than "interrupted" (the commands that settle an
    /// unknown outcome, a decline that really happened).
    static let keptWhenInterrupted: Set<ExitCode> = [.interrupted, .outcomeUnknown, .failure]

    /// `finally` steps run whatever happened, each with a fresh allowance of one request timeout, so that a rollback
    /// still gets its chance after the flow's deadline has passed. They run in a task of their own, which an
    /// interruption of the flow does not cancel; after one they share a short budget instead.
    private func runFinally(
        _ flow: Flow, scope: TemplateScope, result: FlowResult, interrupted: Bool
    ) async -> FlowResult {
        guard !flow.finally.isEmpty else { return result }
        let budget = interrupted ? Deadline(start: .now, seconds: Self.finallyAfterInterruption) : nil
        let task = Task(executorPreference: client.preferredExecutor) { [self, scope, result] () -> FlowResult in
            var scope = scope
            var result = result
            for (index, step) in flow.finally.enumerated() {
                events(.stepStarted(name: step.name, index: flow.steps.count + index, isFinally: true))
                let own = budget ?? Deadline(start: .now, seconds: max(settings.requestTimeout, 5) * 2)
                var stepResult = await runStep(step, scope: &scope, deadline: own, captures: &result.captures)
                stepResult.result.isFinally = true
                result.steps.append(stepResult.result)
                events(.stepFinished(stepResult.result))
                if let failure = stepResult.failure, !step.optional, result.failure == nil { result.failure = failure }
            }
            return result
        }
        // Interrupted before or while they run, they get a few seconds more, then they are stopped too.
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            Task {
                try? await Task.sleep(for: .milliseconds(Int(Self.finallyAfterInterruption * 1000)))
                task.cancel()
            }
        }
    }

    private func runStep(
        _ step: Step, scope: inout TemplateScope, deadline: Deadline,
        captures: inout JSON.Object
    ) async -> (result: StepResult, failure: Diagnostic?) {
        let started = Date()
        let counter = ExchangeCounter()
        let context = OperationContext(
            step: step.name, client: client, retry: step.retry ?? settings.retry,
            requestTimeout: settings.requestTimeout, deadline: deadline,
            configuration: configuration, state: state, redactor: redactor,
            services: services, events: events, counter: counter)
        var polls = 0
        var output: StepOutput?
        var failure: Diagnostic?
        do throws(Diagnostic) {
            let pollStart = ContinuousClock.now
            while true {
                output = try await perform(step, scope: scope, context: context)
                guard let until = step.until else { break }
                let value = until.condition.path.evaluate(output!.document)
                if Self.holds(until.condition.test, value) { break }
                let waited = (ContinuousClock.now - pollStart).seconds
                let seen = value.map { $0.serialized() } ?? "missing"
                if waited + until.interval > until.timeout {
                    throw .failure(
                        "step '\(step.name)': \(until.condition.path) was still \(seen) after \(polls + 1) tries in \(Self.format(waited))s; wanted \(Self.describe(until.condition.test))",
                        hint: until.timeoutHint ?? "raise the step's until.timeout if the service is just slow")
                }
                polls += 1
                events(.polling(step: step.name, poll: polls, reason: "\(until.condition.path) is \(seen)"))
                try await deadline.sleep(until.interval, during: step.name)
            }
            try check(step, output!, scope: scope, context: context, elapsed: Date().timeIntervalSince(started))
            for (name, path) in step.capture.sorted(by: { $0.key < $1.key }) {
                guard let value = path.evaluate(output!.document) else {
                    throw .failure(
                        "step '\(step.name)': cannot capture '\(name)': nothing at \(path) in the response",
                        hint: "see the response with -v, or --format json, and fix the capture's path")
                }
                captures[name] = value
                scope.vars[name] = value
                scope.origins[name] = .captured(step: step.name)
            }
            scope.steps[step.name] = output!.document
        } catch {
            failure = error
            if let output { scope.steps[step.name] = output.document }
        }
        let result = StepResult(
            name: step.name, isFinally: false, optional: step.optional, outcome: failure == nil ? .passed : .failed,
            startedAt: started, duration: Date().timeIntervalSince(started), requests: counter.count, polls: polls,
            status: output?.status ?? counter.lastStatus, message: failure.map { redactor.text($0.message) },
            output: output?.document,
            money: counter.money)
        return (result, failure)
    }

    private func perform(
        _ step: Step, scope: TemplateScope, context: OperationContext
    ) async throws(Diagnostic) -> StepOutput {
        switch step.action {
        case .request(let template):
            let request = try render(template, scope: scope, step: step)
            let response = try await context.send { _ in request }
            return StepOutput(document: Self.document(of: response), status: response.status)
        case .operation(let name, let arguments):
            guard let op = registry[name] else { throw .internalError("operation \(name) vanished from the registry") }
            try checkOneLine(step, scope: scope)
            let rendered = try renderValue(arguments, scope: scope, step: step)
            try checkArguments(rendered.objectValue ?? [:], of: op, step: step, scope: scope)
            return try await op.body(rendered, context)
        }
    }
}

/// What one run of a batch learnt of its flow's checks, for the runs after it (`FlowRunner.preflight`): a batch runs
/// one flow with the same variables and configuration hundreds of times, and every check but the state file's gives the
/// same answer each time — the references, the arguments, the configuration a step needs (2.75% of a Centra batch's
/// instructions when each run made them all). One per flow and variables: a record of another is not taken as one.
public final class PreflightRecord: Sendable {
    private let checked = Mutex<(flow: String, vars: JSON.Object)?>(nil)

    public init() {}

    /// Whether `flow` with `vars` passed every check that reads neither the state file nor a file.
    func passed(_ flow: Flow, vars: JSON.Object) -> Bool {
        checked.withLock { $0.map { $0.flow == flow.name && $0.vars == vars } ?? false }
    }

    func record(_ flow: Flow, vars: JSON.Object) {
        checked.withLock { $0 = (flow.name, vars) }
    }
}
