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
    let console: Console

    private init(settings: GlobalSettings, configuration: Configuration, redactor: Redactor, state: StateStore,
                 emulator: Emulator?, console: Console) {
        self.settings = settings
        self.configuration = configuration
        self.redactor = redactor
        self.state = state
        self.emulator = emulator
        self.console = console
    }

    /// Resolves configuration and, for a local run, starts the emulator on an ephemeral loopback port.
    static func prepare(_ invocation: Invocation, console: Console = .shared) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        let loader = ConfigurationLoader()
        var emulator: Emulator?
        var startError: Diagnostic?
        let configuration = try loader.load(environmentFlag: settings.environment, configPath: settings.configPath) { _ in
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
        let redactor = Redactor(secrets: configuration.secretValues)
        let statePath = settings.sessionPath
            ?? StateStore.defaultPath(environment: configuration.environment, processEnvironment: ProcessInfo.processInfo.environment)
        let env = RunEnvironment(settings: settings, configuration: described, redactor: redactor,
                                 state: StateStore(path: statePath, redactor: redactor), emulator: emulator, console: console)
        // Every run states its environment: on stderr in text mode; JSON output carries it as a field.
        if settings.format == .text && !settings.quiet { console.err("environment: \(described.summary)") }
        return env
    }

    func makeRunner(registry: OperationRegistry, reporters: Reporters) -> FlowRunner {
        FlowRunner(client: CurlTransport(), registry: registry,
                   settings: RunSettings(environment: configuration.environment, requestTimeout: settings.timeout,
                                         deadline: settings.deadline),
                   configuration: configuration, state: state, redactor: redactor,
                   events: { reporters.handle($0) })
    }

    func makeReporters() -> Reporters {
        Reporters.make(settings: settings, redactor: redactor, console: console, environment: configuration.environment)
    }

    /// Runs one flow with the reporters this invocation asked for, records captures in the state file,
    /// and turns the outcome into an exit code.
    func run(_ flow: Flow, vars: [String: JSON], registry: OperationRegistry) async throws(Diagnostic) -> FlowResult {
        let reporters = makeReporters()
        let runner = makeRunner(registry: registry, reporters: reporters)
        let result = await runner.run(flow, vars: vars)
        try reporters.finish()
        if !result.captures.isEmpty {
            try state.update { (doc: inout JSON) throws(Diagnostic) in
                var captures = doc["captures"]?.objectValue ?? [:]
                for (k, v) in result.captures { captures[k] = v }
                doc = JSONPath(components: [.key("captures")]).setting(.object(captures), in: doc)
            }
        }
        return result
    }

    func shutdown() { emulator?.shutdown() }
}

/// What `--env local` means: every base URL points at the embedded emulator and every credential is the
/// emulator's test credential, so that nothing needs configuring.
enum LocalEnvironment {
    static func values(baseURL: String) -> [String: String] {
        [
            "EMULATOR_URL": baseURL,
            "BAHN_API_URL": baseURL,
            "CENTRA_API_URL": baseURL + "/centra/graphql",
            "AFTERPAY_API_URL": baseURL + "/afterpay",
            "AFTERPAY_PLUS_URL": baseURL + "/afterpay-plus",
            "CASHAPP_API_URL": baseURL + "/cashapp",
            "BRAINTREE_CLIENT_API_URL": baseURL + "/braintree",
            "BRAINTREE_GRAPHQL_URL": baseURL + "/braintree/graphql",
        ]
    }
}
