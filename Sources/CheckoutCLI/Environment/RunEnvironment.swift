import CheckoutKit
import Foundation
import SandboxEmulator

/// One invocation's environment, resolved from its options, the configuration files and the process environment: the
/// configuration, the redactor, the state file — and, for `--env local`, the embedded emulator it started. What it does
/// with them is in types of their own: `StateScoping` (where each run works in the state file), `RunSession` (running
/// flows: runner, reporters, services, interruption) and `EmulatorControl` (the local emulator's webhook targets).
final class RunEnvironment: RunServiceHost {
    let settings: GlobalSettings
    let configuration: Configuration
    let redactor: Redactor
    let console: Console
    /// The emulator this process started and stops (nil: a `sandbox serve` elsewhere, a real provider, or a replay).
    let emulator: Emulator?
    /// `flow replay`: the recording answers instead of the network.
    let replay: Replay?
    let scoping: StateScoping
    let emulatorControl: EmulatorControl
    /// Where files a later command needs are kept (the copies a settle command re-sends): next to the environment's
    /// default state file. Worked out once: it reads the whole process environment.
    let keepDirectory: String
    /// The proxy and certificates every request of the invocation uses, read once.
    let network: NetworkOptions

    /// The invocation's state file.
    var state: StateStore { scoping.state }

    /// Runs the invocation's flows.
    var session: RunSession {
        RunSession(
            settings: settings, configuration: configuration, redactor: redactor, console: console, replay: replay,
            scoping: scoping, keepDirectory: keepDirectory, emulatorEndsWithRun: emulator != nil, host: self,
            network: network)
    }

    private init(
        settings: GlobalSettings, configuration: Configuration, redactor: Redactor, state: StateStore,
        emulator: Emulator?, throwawayState: Bool, console: Console, replay: Replay? = nil
    ) {
        self.settings = settings
        self.configuration = configuration
        self.redactor = redactor
        self.emulator = emulator
        self.console = console
        self.replay = replay
        network = NetworkOptions(configuration: configuration)
        scoping = StateScoping(
            state: state, throwawayState: throwawayState, runScope: settings.state.runScope,
            continueChain: settings.state.continueChain, console: console)
        emulatorControl = EmulatorControl(
            configuration: configuration, emulator: emulator, timeout: settings.time.timeout,
            redactor: redactor, console: console)
        keepDirectory =
            FileIO.directory(
                of: StateStore.defaultPath(
                    environment: configuration.environment,
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
    static func prepareReplay(
        _ invocation: Invocation, recording: Recording, source: String, console: Console = .shared
    ) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        try checkReports(settings)
        var values = LocalEnvironment.values(baseURL: "http://127.0.0.1:9")
        values.merge(recording.configuration) { _, recorded in recorded }
        values.merge(settings.config.configurationFlags) { _, flag in flag }
        let configuration = Configuration(
            environment: recording.environment, kind: recording.kind, values: values,
            summary:
                "replay of \(source) (recorded against \(recording.environment) by checkout-driver \(recording.driverVersion))"
        )
        let redactor = CheckoutDriver.redactor
        for secret in configuration.secretValues { redactor.register(secret) }
        let state = StateStore(path: LocalEmulatorFile.throwawayStatePath(), redactor: redactor)
        if let recorded = recording.state?.objectValue { try state.update { $0 = .object(recorded) } }
        let env = RunEnvironment(
            settings: settings, configuration: configuration, redactor: redactor, state: state, emulator: nil,
            throwawayState: true, console: console, replay: Replay(recording, redactor: redactor))
        if settings.output.format == .text && !settings.output.quiet {
            console.err("environment: \(configuration.summary)")
        }
        return env
    }

    /// Reports that cannot be written stop the run before anything is sent (`flow validate` too).
    private static func checkReports(_ settings: GlobalSettings) throws(Diagnostic) {
        if let record = settings.output.recordPath {
            if settings.output.recordsDirectory {
                try FileIO.ensureDirectory(record, option: "--record")
            } else {
                try FileIO.checkWritable(record, option: "--record")
            }
        }
        if let junit = settings.output.junitPath { try FileIO.checkWritable(junit, option: "--junit") }
        if let html = settings.output.htmlPath { try FileIO.checkWritable(html, option: "--html") }
    }

    /// Resolves configuration and, for a local run, starts the emulator on an ephemeral loopback port — unless
    /// `startingEmulator` is false (`flow validate`: nothing will be sent; the emulator's endpoints are placeholders).
    static func prepare(
        _ invocation: Invocation, console: Console = .shared, startingEmulator: Bool = true
    ) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        try checkReports(settings)
        if let session = settings.state.sessionPath, FileManager.default.fileExists(atPath: session) {
            try FileIO.checkWritable(session, option: "--session")
        }
        let processEnvironment = ProcessInfo.processInfo.environment
        var emulator: Emulator?
        var standalone: LocalEmulatorFile.Entry?
        var startError: Diagnostic?
        let configuration = try ConfigurationLoader().load(
            environmentFlag: settings.config.environment, configPath: settings.config.configPath,
            envFile: settings.config.envFile, flagValues: settings.config.configurationFlags
        ) { _ in
            // A `sandbox serve` already running on this machine is preferred: it outlives this process, so
            // separate invocations can chain through the state file. Otherwise the emulator runs in-process.
            if !startingEmulator { return LocalEnvironment.values(baseURL: "http://127.0.0.1:0") }
            if let running = LocalEmulatorFile.running(processEnvironment: processEnvironment) {
                standalone = running
                return LocalEnvironment.values(baseURL: running.url)
            }
            if let stale = LocalEmulatorFile.withdrawStale(processEnvironment: processEnvironment) {
                console.err(
                    "warning: the sandbox serve announced at \(stale.url) (pid \(stale.pid)) is gone; this command uses an embedded emulator, which ends with it (start `checkout-driver sandbox serve` again to chain commands)"
                )
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
        // A proxy's password is a secret like any other, wherever its URL shows.
        for secret in ProxySettings(environment: processEnvironment).passwords { redactor.register(secret) }
        if let bundle = configuration.value(NetworkOptions.caBundleVariable),
            case .failure(let error) = FileIO.read(bundle)
        {
            throw .configuration(
                "the CA bundle \(bundle) (--cacert or \(NetworkOptions.caBundleVariable)) cannot be read: \(error.reason)",
                hint: "give a PEM file of the certificates to trust (it replaces the system's, as curl's --cacert does)"
            )
        }
        // An embedded emulator forgets everything when this process ends, so its state must too: by default a
        // throwaway state file, never one that a later run would read stale intents from.
        let statePath =
            settings.state.sessionPath
            ?? (emulator != nil
                ? LocalEmulatorFile.throwawayStatePath()
                : StateStore.defaultPath(environment: configuration.environment, processEnvironment: processEnvironment))
        let env = RunEnvironment(
            settings: settings, configuration: described, redactor: redactor,
            state: StateStore(path: statePath, redactor: redactor), emulator: emulator,
            throwawayState: emulator != nil && settings.state.sessionPath == nil, console: console)
        // Every run states its environment: on stderr in text mode; JSON output carries it as a field.
        if settings.output.format == .text && !settings.output.quiet && startingEmulator {
            console.err("environment: \(described.summary)")
        }
        return env
    }

    /// What providers' services register with: the local emulator's webhook targets.
    func registerWebhookTarget(
        url: String, provider: String, emulatorBase: String
    ) async throws(Diagnostic)
        -> (@Sendable () async -> Void)?
    {
        try await emulatorControl.registerWebhookTarget(url: url, provider: provider, emulatorBase: emulatorBase)
    }

    func shutdown() {
        emulator?.shutdown()
        scoping.removeThrowaway()
    }
}
