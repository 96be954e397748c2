import CheckoutKit
import Foundation
import SandboxEmulator

/// Everything one invocation needs to talk to the world: resolved configuration, the redactor, the
/// state file, reporters — and, for `--env local`, the embedded emulator it started.
final class RunEnvironment: Sendable {
    let settings: GlobalSettings
    let configuration: Configuration
    let redactor: Redactor
    let state: StateStore
    let emulator: Emulator?
    /// The state file is this process's own (next to an embedded emulator) and goes when it ends.
    let throwawayState: Bool
    let console: Console
    /// `flow replay`: the recording answers instead of the network.
    let replay: Replay?
    /// Where files a later command needs are kept (the copies a settle command re-sends): next to the environment's
    /// default state file. Worked out once: it reads the whole process environment.
    let keepDirectory: String

    private init(settings: GlobalSettings, configuration: Configuration, redactor: Redactor, state: StateStore,
                 emulator: Emulator?, throwawayState: Bool, console: Console, replay: Replay? = nil) {
        self.settings = settings
        self.configuration = configuration
        self.redactor = redactor
        self.state = state
        self.emulator = emulator
        self.throwawayState = throwawayState
        self.console = console
        self.replay = replay
        keepDirectory = FileIO.directory(of: StateStore.defaultPath(environment: configuration.environment,
                                                                    processEnvironment: ProcessInfo.processInfo.environment)) + "/kept"
    }

    /// What a replay runs against: its recording's transport (which is also where its listeners listen) and the
    /// recording's clock, so that a service's "before" times compare as they did when it was recorded.
    struct Replay: Sendable {
        let transport: ReplayTransport
        let now: @Sendable () -> Date

        init(_ recording: Recording, redactor: Redactor) {
            transport = ReplayTransport(recording: recording, redactor: redactor)
            let offset = recording.startedAt.map { $0.timeIntervalSinceNow } ?? 0
            now = { Date().addingTimeInterval(offset) }
        }
    }

    /// The environment of `flow replay`: the recording's configuration — its kind and non-secret values, the emulator's
    /// test credentials in place of the secrets it never kept (`--set` still wins) — a throwaway state file holding the
    /// state the recorded run started from, and no emulator and no socket.
    static func prepareReplay(_ invocation: Invocation, recording: Recording, source: String, console: Console = .shared) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        try checkReports(settings)
        var values = LocalEnvironment.values(baseURL: "http://127.0.0.1:9")
        values.merge(recording.configuration) { _, recorded in recorded }
        values.merge(settings.configurationFlags) { _, flag in flag }
        let configuration = Configuration(environment: recording.environment, kind: recording.kind, values: values,
                                          summary: "replay of \(source) (recorded against \(recording.environment) by checkout-driver \(recording.driverVersion))")
        let redactor = CheckoutDriver.redactor
        for secret in configuration.secretValues { redactor.register(secret) }
        let state = StateStore(path: LocalEmulatorFile.throwawayStatePath(), redactor: redactor)
        if let recorded = recording.state?.objectValue { try state.update { $0 = .object(recorded) } }
        let env = RunEnvironment(settings: settings, configuration: configuration, redactor: redactor, state: state, emulator: nil,
                                 throwawayState: true, console: console, replay: Replay(recording, redactor: redactor))
        if settings.format == .text && !settings.quiet { console.err("environment: \(configuration.summary)") }
        return env
    }

    /// Reports that cannot be written stop the run before anything is sent (`flow validate` too).
    private static func checkReports(_ settings: GlobalSettings) throws(Diagnostic) {
        if let record = settings.recordPath {
            if settings.recordsDirectory { try FileIO.ensureDirectory(record, option: "--record") } else { try FileIO.checkWritable(record, option: "--record") }
        }
        if let junit = settings.junitPath { try FileIO.checkWritable(junit, option: "--junit") }
        if let html = settings.htmlPath { try FileIO.checkWritable(html, option: "--html") }
    }

    /// Resolves configuration and, for a local run, starts the emulator on an ephemeral loopback port — unless
    /// `startingEmulator` is false (`flow validate`: nothing will be sent; the emulator's endpoints are placeholders).
    static func prepare(_ invocation: Invocation, console: Console = .shared, startingEmulator: Bool = true) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        try checkReports(settings)
        if let session = settings.sessionPath, FileManager.default.fileExists(atPath: session) { try FileIO.checkWritable(session, option: "--session") }
        let processEnvironment = ProcessInfo.processInfo.environment
        var emulator: Emulator?
        var standalone: LocalEmulatorFile.Entry?
        var startError: Diagnostic?
        let configuration = try ConfigurationLoader().load(environmentFlag: settings.environment, configPath: settings.configPath,
                                                           envFile: settings.envFile, flagValues: settings.configurationFlags) { _ in
            // A `sandbox serve` already running on this machine is preferred: it outlives this process, so
            // separate invocations can chain through the state file. Otherwise the emulator runs in-process.
            if !startingEmulator { return LocalEnvironment.values(baseURL: "http://127.0.0.1:0") }
            if let running = LocalEmulatorFile.running(processEnvironment: processEnvironment) {
                standalone = running
                return LocalEnvironment.values(baseURL: running.url)
            }
            if let stale = LocalEmulatorFile.withdrawStale(processEnvironment: processEnvironment) {
                console.err("warning: the sandbox serve announced at \(stale.url) (pid \(stale.pid)) is gone; this command uses an embedded emulator, which ends with it (start `checkout-driver sandbox serve` again to chain commands)")
            }
            do {
                let e = try Emulator(host: "127.0.0.1", port: 0)
                e.start()
                emulator = e
                return LocalEnvironment.values(baseURL: e.baseURL)
            } catch {
                startError = .internalError("cannot start the embedded emulator: \(error)")
                return [:]
            }
        }
        if let startError { throw startError }
        var described = configuration
        if let emulator { described.summary = "local (embedded emulator at \(emulator.baseURL))" }
        if let standalone { described.summary = "local (sandbox serve at \(standalone.url), pid \(standalone.pid))" }
        let redactor = CheckoutDriver.redactor
        for secret in configuration.secretValues { redactor.register(secret) }
        // An embedded emulator forgets everything when this process ends, so its state must too: by default a
        // throwaway state file, never one that a later run would read stale intents from.
        let statePath = settings.sessionPath
            ?? (emulator != nil ? LocalEmulatorFile.throwawayStatePath()
                : StateStore.defaultPath(environment: configuration.environment, processEnvironment: processEnvironment))
        let env = RunEnvironment(settings: settings, configuration: described, redactor: redactor,
                                 state: StateStore(path: statePath, redactor: redactor), emulator: emulator,
                                 throwawayState: emulator != nil && settings.sessionPath == nil, console: console)
        // Every run states its environment: on stderr in text mode; JSON output carries it as a field.
        if settings.format == .text && !settings.quiet && startingEmulator { console.err("environment: \(described.summary)") }
        return env
    }

    func makeRunner(registry: OperationRegistry, reporters: Reporters, services: RunServices,
                    interruption: Interruption? = nil, state: StateStore? = nil) -> FlowRunner {
        FlowRunner(client: replay?.transport ?? CurlTransport(), registry: registry,
                   settings: RunSettings(environment: configuration.environment, requestTimeout: settings.timeout,
                                         deadline: settings.deadline,
                                         interruptedExitCode: { interruption?.caught.map(Interruption.exitCode(for:)) ?? .interrupted }),
                   configuration: configuration, state: state ?? self.state, redactor: redactor, services: services,
                   events: { reporters.handle($0) })
    }

    /// How long a command waits for another one holding the state file's chain.
    static let chainWait: Double = 30

    /// The part of the state file a run works on: a whole flow gets a run scope of its own (so parallel runs on one
    /// file never share a checkout) unless `--continue`; a single step continues the chain — or the run `--run` names —
    /// holding it for its duration, so two commands never interleave one checkout. An embedded emulator's throwaway
    /// file is the run's alone already — unless the process runs several flows (`separate`, a suite), each of which
    /// must start a checkout of its own, not continue the one before.
    func stateScope(for flow: Flow, separate: Bool = false) throws(Diagnostic) -> (store: StateStore, hold: ChainLock?) {
        if throwawayState && !(separate && flow.ownsState) { return (state, nil) }
        if let run = settings.runScope {
            guard try state.readFile()["runs"]?[run] != nil else {
                throw .usage("state file \(state.path) has no run \(run)", hint: "use the --run ID a settle command printed, with the same --session")
            }
            let scoped = state.scoped(run: run)
            return (scoped, try scoped.holdChain(wait: Self.chainWait, command: Self.commandName))
        }
        if flow.ownsState && !settings.continueChain {
            return (state.ownRun("\(flow.name)-\(UUID.random().uuidString.prefix(8).lowercased())", batched: separate), nil)
        }
        return (state, try state.holdChain(wait: Self.chainWait, command: Self.commandName))
    }

    /// A whole flow's sections become the chain's while no single step holds it (one that does is halfway through
    /// them); when the chain stays busy the run's sections stay under its id, said in a warning.
    private func finishOwnRun(_ store: StateStore) throws(Diagnostic) {
        do {
            let hold = try state.holdChain(wait: Self.chainWait, command: Self.commandName, finishingRun: true)
            try store.finishRun()
            withExtendedLifetime(hold) {}
        } catch where error.code == .unavailable {
            console.err("warning: \(error.message); this run's state stays under --run \(store.run ?? "")")
            try store.finishRun(promote: false)
        }
    }

    /// The command's words without its options or values that might be secret: "checkout-driver cashapp capture".
    private static var commandName: String {
        (["checkout-driver"] + CommandLine.arguments.dropFirst().prefix { !$0.hasPrefix("-") }.prefix(2)).joined(separator: " ")
    }

    /// Global options that point a later command at this run's environment and state file, for the commands that
    /// settle an unknown outcome. A throwaway state file (an embedded emulator's) is not worth naming.
    /// `--set` values that are secrets are never printed: their names are returned apart, for a caveat.
    var settleOptions: (options: [String], withheld: [String]) {
        var options: [String] = []
        var withheld: [String] = []
        if let config = settings.configPath { options += ["--config", config] }
        if let envFile = settings.envFile { options += ["--env-file", envFile] }
        if configuration.environment != "local" { options += ["--env", configuration.environment] }
        if let session = settings.sessionPath { options += ["--session", session] }
        let secret = Set(configuration.secretValues)
        for (name, value) in settings.configurationFlags.sorted(by: { $0.key < $1.key }) {
            if secret.contains(value) { withheld.append(name) } else { options += ["--set", "\(name)=\(value)"] }
        }
        return (options, withheld)
    }

    /// The reporters the invocation asked for; without the HAR recorder when `recording` is false (a suite records
    /// each flow apart).
    func makeReporters(recording: Bool = true) -> Reporters {
        Reporters.make(settings: settings, redactor: redactor, console: console, recording: recording)
    }

    /// Runs one flow with the reporters this invocation asked for, records captures in the state file,
    /// and turns the outcome into an exit code.
    ///
    /// SIGINT or SIGTERM while it runs stops the current step; `finally` steps, the reports and the state still get
    /// their turn, and the result fails with 130 or 143 (see `Interruption`).
    /// `reporters` and `interruption`, when given, are the caller's to finish and stop (a suite reports all its flows
    /// as one, stops them all on one Ctrl-C, and runs each in a state scope of its own: `separate`).
    func run(_ flow: Flow, vars: JSON.Object, origins: [String: VariableOrigin] = [:], registry: OperationRegistry, reporters given: Reporters? = nil,
             interruption shared: Interruption? = nil, separate: Bool = false) async throws(Diagnostic) -> FlowResult
    {
        let reporters = given ?? makeReporters()
        let (store, hold) = try stateScope(for: flow, separate: separate)
        for case let recording as HARReporter in reporters.all {
            let sections = (try? store.read().objectValue)?.filter { !StateStore.fileWideSections.contains($0.key) }
            recording.describe(flow: flow, vars: vars, configuration: configuration, state: sections.flatMap { $0.isEmpty ? nil : .object($0) })
        }
        var services = try await startServices(for: flow, run: store.run)
        // Files a run makes for itself (test tokens) live and die with it, in its memory (`MadeFiles`), under a
        // directory name of its own that is never created: nothing of a run's own is written to the disk.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("checkout-driver-run-\(UUID.random().uuidString.prefix(8))").path
        services.scratchDirectory = scratch
        let interruption = shared ?? makeInterruption(stopping: "the current step")
        let runner = makeRunner(registry: registry, reporters: reporters, services: services, interruption: interruption, state: store)
        let result = await interruption.run { await runner.run(flow, vars: vars, origins: origins) }
        if shared == nil { interruption.stop() }
        await services.stop()
        // The state first: a report that cannot be written must not leave the run unfinished.
        let recorded = Result { () throws(Diagnostic) in
            // A capture that names a file of the run's scratch directory would point at nothing once the run ends.
            let lasting = result.captures.filter { !($0.value.stringValue?.hasPrefix(scratch + "/") ?? false) }
            if !lasting.isEmpty { try store.recordCaptures(lasting, flow: flow.name) }
            if store.run != nil && settings.runScope == nil { try finishOwnRun(store) }
        }
        withExtendedLifetime(hold) {}
        if given == nil { try reporters.finish() }
        do { try recorded.get() } catch { throw Self.leftOpen(by: error, in: store) ?? error }
        return result
    }

    /// A run whose end could not be written (no space left) while the file still holds one of its money calls as in
    /// flight: that call stays open there once this process ends, so the run's outcome is unknown (75), not an I/O error.
    private static func leftOpen(by failure: Diagnostic, in store: StateStore) -> Diagnostic? {
        guard let open = try? store.openOutcomesOnDisk(), let first = open.first else { return nil }
        var unknown = Diagnostic(.outcomeUnknown,
                                 "\(failure.message); the state file still holds \(first.effect) of \(first.reference) as in flight, which stays open once this command ends",
                                 hint: "make room for the state file, then settle it: " + first.settle.joined(separator: "; or "))
        unknown.outcomeUncertain = true
        return unknown
    }

    /// Watches for SIGINT and SIGTERM; the first says what it stops.
    func makeInterruption(stopping what: String) -> Interruption {
        let console = console
        return Interruption { sig in
            console.err("interrupted (\(Interruption.name(sig))): stopping \(what); finally steps and reports follow (again to quit at once)")
        }
    }

    /// Runs a command's flow and, in text mode, prints the lines `summary` makes of each step that passed (what a person
    /// wants to see of its answer), then exits with the flow's outcome.
    func runPrintingSummaries(_ flow: Flow, summary: (JSON) -> [String]) async throws(Diagnostic) -> ExitCode {
        let result = try await run(flow, vars: [:], registry: Operations.registry)
        if settings.format == .text {
            for step in result.steps where step.outcome == .passed {
                for line in summary(step.output ?? .null) { console.out(redactor.text(line)) }
            }
        }
        if let failure = result.failure { throw failure }
        return .ok
    }

    func shutdown() {
        emulator?.shutdown()
        if throwawayState {
            try? FileManager.default.removeItem(atPath: FileIO.directory(of: state.path))
        }
    }
}
