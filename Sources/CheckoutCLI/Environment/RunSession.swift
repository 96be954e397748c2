import CheckoutKit
import Foundation

/// How one invocation runs flows: a runner over the network's transport (or a replay's), the reporters it asked for,
/// the run's services and settle options, Ctrl-C handling, and the state scope each run works in (`StateScoping`).
struct RunSession: Sendable {
    let settings: GlobalSettings
    let configuration: Configuration
    let redactor: Redactor
    let console: Console
    /// `flow replay`: the recording answers instead of the network.
    let replay: RunEnvironment.Replay?
    let scoping: StateScoping
    /// Where files a later command needs are kept (the copies a settle command re-sends).
    let keepDirectory: String
    /// The emulator ends with this process (an embedded one): a settle command could not reach it.
    let emulatorEndsWithRun: Bool
    /// What providers' services register with (the local emulator's webhook targets).
    let host: any RunServiceHost
    /// The proxy and certificates each transport uses.
    let network: NetworkOptions

    func makeRunner(
        registry: OperationRegistry, reporters: Reporters, services: RunServices,
        interruption: Interruption? = nil, state: StateStore? = nil, preflightRecord: PreflightRecord? = nil,
        transport: CurlTransport? = nil
    ) -> FlowRunner {
        var runner = FlowRunner(
            client: replay?.transport ?? transport ?? CurlTransport(options: network),
            registry: registry,
            settings: RunSettings(
                environment: configuration.environment, requestTimeout: settings.time.timeout,
                deadline: settings.time.deadline,
                interruptedExitCode: { interruption?.caught.map(Interruption.exitCode(for:)) ?? .interrupted }),
            configuration: configuration, state: state ?? scoping.state, redactor: redactor, services: services,
            events: { reporters.handle($0) })
        runner.preflightRecord = preflightRecord
        return runner
    }

    /// The reporters the invocation asked for; without the HAR recorder when `recording` is false (a suite records
    /// each flow apart).
    func makeReporters(recording: Bool = true) -> Reporters {
        Reporters.make(settings: settings, redactor: redactor, console: console, recording: recording)
    }

    /// Watches for SIGINT and SIGTERM; the first says what it stops.
    func makeInterruption(stopping what: String) -> Interruption {
        let console = console
        return Interruption { sig in
            console.err(
                "interrupted (\(Interruption.name(sig))): stopping \(what); finally steps and reports follow (again to quit at once)"
            )
        }
    }

    /// Global options that point a later command at this run's environment and state file, for the commands that
    /// settle an unknown outcome. A throwaway state file (an embedded emulator's) is not worth naming.
    /// `--set` values that are secrets are never printed: their names are returned apart, for a caveat.
    var settleOptions: (options: [String], withheld: [String]) {
        var options: [String] = []
        var withheld: [String] = []
        if let config = settings.config.configPath { options += ["--config", config] }
        if let envFile = settings.config.envFile { options += ["--env-file", envFile] }
        if configuration.environment != "local" { options += ["--env", configuration.environment] }
        if let session = settings.state.sessionPath { options += ["--session", session] }
        let secret = Set(configuration.secretValues)
        for (name, value) in settings.config.configurationFlags.sorted(by: { $0.key < $1.key }) {
            if secret.contains(value) { withheld.append(name) } else { options += ["--set", "\(name)=\(value)"] }
        }
        return (options, withheld)
    }

    /// The settle options and the providers' listeners the flow needs (`Provider.services`).
    func startServices(for flow: Flow, run: String? = nil) async throws(Diagnostic) -> RunServices {
        var (options, withheld) = settleOptions
        if let run { options += ["--run", run] }
        var services = RunServices(
            keepDirectory: keepDirectory, settleOptions: options, emulatorEndsWithRun: emulatorEndsWithRun)
        services.force = settings.state.force
        if !withheld.isEmpty {
            services.settleCaveat =
                "add this run's --set options for \(withheld.joined(separator: ", ")) to those commands (they are secrets, so they are not repeated here)"
        }
        if let replay {
            services.started = RunServiceRecipe.replayAll(
                for: flow,
                recordedOutputs: replay.transport.recording.steps.compactMap { step in
                    step.output.map { (step.name, $0) }
                })
            services.listening = replay.transport
            services.now = replay.now
            return services
        }
        services.started = try await RunServiceRecipe.startAll(for: flow, host: host)
        return services
    }

    /// The services a batch's runs share (a Bahn webhook inbox and its target with the emulator), started once and held
    /// from the batch's first run to its last: each run still starts its own and gets the one already open, so runs one
    /// after another (`--parallel 1`) no longer open an inbox, register its target, then remove it and close it each.
    /// Stop them when the batch is over. None in a replay (its services open nothing); one that cannot start is left
    /// for each run to start, and to report.
    func holdSharedServices(for flows: [Flow]) async -> [any RunService] {
        guard replay == nil else { return [] }
        var held: [any RunService] = []
        var seen: Set<String> = []
        for flow in flows where seen.insert(flow.name).inserted {
            if let started = try? await RunServiceRecipe.startAll(for: flow, host: host) { held += started }
        }
        return held
    }

    /// Runs one flow with the reporters this invocation asked for, records captures in the state file,
    /// and turns the outcome into an exit code.
    ///
    /// SIGINT or SIGTERM while it runs stops the current step; `finally` steps, the reports and the state still get
    /// their turn, and the result fails with 130 or 143 (see `Interruption`).
    /// `reporters` and `interruption`, when given, are the caller's to finish and stop (a suite reports all its flows
    /// as one, stops them all on one Ctrl-C, and runs each in a state scope of its own: `separate`); `transport`, the
    /// caller's for its runs one after another (`workerTransport(on:)`), else the run makes its own.
    func run(
        _ flow: Flow, vars: JSON.Object, origins: [String: VariableOrigin] = [:], registry: OperationRegistry,
        reporters given: Reporters? = nil,
        interruption shared: Interruption? = nil, separate: Bool = false, preflightRecord: PreflightRecord? = nil,
        transport: CurlTransport? = nil
    ) async throws(Diagnostic) -> FlowResult {
        let reporters = given ?? makeReporters()
        let (store, hold) = try scoping.scope(for: flow, separate: separate)
        for case let recording as HARReporter in reporters.all {
            let sections = (try? store.read().objectValue)?.filter { !StateStore.fileWideSections.contains($0.key) }
            recording.describe(
                flow: flow, vars: vars, configuration: configuration,
                state: sections.flatMap { $0.isEmpty ? nil : .object($0) })
        }
        var services = try await startServices(for: flow, run: store.run)
        // Files a run makes for itself (test tokens) live and die with it, in its memory (`MadeFiles`), under a
        // directory name of its own that is never created: nothing of a run's own is written to the disk.
        let scratch = FileIO.temporaryDirectory + "/checkout-driver-run-\(UUID.random().uuidString.prefix(8))"
        services.scratchDirectory = scratch
        let interruption = shared ?? makeInterruption(stopping: "the current step")
        let runner = makeRunner(
            registry: registry, reporters: reporters, services: services, interruption: interruption, state: store,
            preflightRecord: preflightRecord, transport: transport)
        let result = await interruption.run(on: runner.client.preferredExecutor) {
            await runner.run(flow, vars: vars, origins: origins)
        }
        if shared == nil { interruption.stop() }
        await services.stop()
        // The state first: a report that cannot be written must not leave the run unfinished.
        let recorded = Result { () throws(Diagnostic) in
            // A capture that names a file of the run's scratch directory would point at nothing once the run ends.
            let lasting = result.captures.filter { !($0.value.stringValue?.hasPrefix(scratch + "/") ?? false) }
            if !lasting.isEmpty { try store.recordCaptures(lasting, flow: flow.name) }
            try scoping.finish(store)
        }
        withExtendedLifetime(hold) {}
        if given == nil { try reporters.finish() }
        do { try recorded.get() } catch { throw StateScoping.leftOpen(by: error, in: store) ?? error }
        return result
    }

    /// A transport for one batch worker's runs, one after another, on the worker's own thread: no transport (its
    /// libcurl handle, which makes a socket pair of its own on the first transfer) nor thread made and ended per run,
    /// and no hop between two threads at a run's start and end. Nil in a replay, whose recording answers.
    func workerTransport(on thread: WorkerThread) -> CurlTransport? {
        replay == nil ? CurlTransport(options: network, on: thread) : nil
    }

    /// Runs a command's flow and, in text mode, prints the lines `summary` makes of each step that passed (what a
    /// person wants to see of its answer), then exits with the flow's outcome.
    func runPrintingSummaries(_ flow: Flow, summary: (JSON) -> [String]) async throws(Diagnostic) -> ExitCode {
        let result = try await run(flow, vars: [:], registry: Operations.registry)
        if settings.output.format == .text {
            for step in result.steps where step.outcome == .passed {
                for line in summary(step.output ?? .null) { console.out(redactor.text(line)) }
            }
        }
        if let failure = result.failure { throw failure }
        return .ok
    }
}
