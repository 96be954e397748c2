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

    private init(settings: GlobalSettings, configuration: Configuration, redactor: Redactor, state: StateStore,
                 emulator: Emulator?, throwawayState: Bool, console: Console) {
        self.settings = settings
        self.configuration = configuration
        self.redactor = redactor
        self.state = state
        self.emulator = emulator
        self.throwawayState = throwawayState
        self.console = console
    }

    /// Resolves configuration and, for a local run, starts the emulator on an ephemeral loopback port — unless
    /// `startingEmulator` is false (`flow validate`: nothing will be sent; the emulator's endpoints are placeholders).
    static func prepare(_ invocation: Invocation, console: Console = .shared, startingEmulator: Bool = true) throws(Diagnostic) -> RunEnvironment {
        let settings = try GlobalSettings(invocation)
        // Outputs that cannot be written stop the run before anything is sent (`flow validate` too).
        if let record = settings.recordPath { try FileIO.checkWritable(record, option: "--record") }
        if let junit = settings.junitPath { try FileIO.checkWritable(junit, option: "--junit") }
        if let session = settings.sessionPath, FileManager.default.fileExists(atPath: session) { try FileIO.checkWritable(session, option: "--session") }
        let processEnvironment = ProcessInfo.processInfo.environment
        var emulator: Emulator?
        var standalone: LocalEmulatorFile.Entry?
        var startError: Diagnostic?
        let configuration = try ConfigurationLoader().load(environmentFlag: settings.environment, configPath: settings.configPath,
                                                           flagValues: settings.configurationFlags) { _ in
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
        FlowRunner(client: CurlTransport(), registry: registry,
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
    /// file is the run's alone already.
    func stateScope(for flow: Flow) throws(Diagnostic) -> (store: StateStore, hold: ChainLock?) {
        if throwawayState { return (state, nil) }
        if let run = settings.runScope {
            guard try state.readFile()["runs"]?[run] != nil else {
                throw .usage("state file \(state.path) has no run \(run)", hint: "use the --run ID a settle command printed, with the same --session")
            }
            let scoped = state.scoped(run: run)
            return (scoped, try scoped.holdChain(wait: Self.chainWait, command: Self.commandName))
        }
        if flow.ownsState && !settings.continueChain {
            return (state.scoped(run: "\(flow.name)-\(UUID().uuidString.prefix(8).lowercased())"), nil)
        }
        return (state, try state.holdChain(wait: Self.chainWait, command: Self.commandName))
    }

    /// A whole flow's sections become the chain's while no single step holds it (one that does is halfway through
    /// them); when the chain stays busy the run's sections stay under its id, said in a warning.
    private func finishOwnRun(_ store: StateStore) throws(Diagnostic) {
        do {
            let hold = try state.holdChain(wait: Self.chainWait, command: Self.commandName)
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

    /// A flow that awaits Bahn webhooks gets a listener of its own, registered as one more webhook target of the
    /// local emulator — embedded, or a running `sandbox serve` — and removed when the run ends. Other runs' targets
    /// (a `bahn listen`, flows in parallel) are never touched: every target gets every event, and each run's listener
    /// waits for the events of its own intents.
    func startServices(for flow: Flow, run: String? = nil) async throws(Diagnostic) -> RunServices {
        var (options, withheld) = settleOptions
        if let run { options += ["--run", run] }
        var services = RunServices(keepDirectory: keepDirectory, settleOptions: options, emulatorEndsWithRun: emulator != nil)
        services.force = settings.force
        if !withheld.isEmpty {
            services.settleCaveat = "add this run's --set options for \(withheld.joined(separator: ", ")) to those commands (they are secrets, so they are not repeated here)"
        }
        let awaitsWebhooks = (flow.steps + flow.finally).contains { step in
            if case .operation(let name, _) = step.action { return name == "bahn.awaitWebhook" }
            return false
        }
        guard awaitsWebhooks, let secret = configuration.value("BAHN_WEBHOOK_SECRET") else { return services }
        let port = try webhookPort()
        let inbox = try BahnWebhookInbox(secret: secret, port: port)
        inbox.start()
        let target: WebhookTarget?
        do throws(Diagnostic) { target = try await registerWebhookTarget(url: inbox.url) } catch {
            inbox.shutdown()
            throw error
        }
        services.bahnWebhooks = inbox
        services.restore = { [self] in
            if let target { await unregister(target) }
        }
        return services
    }

    /// Global options that point a later command at this run's environment and state file, for the commands that
    /// settle an unknown outcome. A throwaway state file (an embedded emulator's) is not worth naming.
    /// `--set` values that are secrets are never printed: their names are returned apart, for a caveat.
    var settleOptions: (options: [String], withheld: [String]) {
        var options: [String] = []
        var withheld: [String] = []
        if let config = settings.configPath { options += ["--config", config] }
        if configuration.environment != "local" { options += ["--env", configuration.environment] }
        if let session = settings.sessionPath { options += ["--session", session] }
        let secret = Set(configuration.secretValues)
        for (name, value) in settings.configurationFlags.sorted(by: { $0.key < $1.key }) {
            if secret.contains(value) { withheld.append(name) } else { options += ["--set", "\(name)=\(value)"] }
        }
        return (options, withheld)
    }

    /// Where files a later command needs are kept: next to the environment's default state file.
    var keepDirectory: String {
        ((StateStore.defaultPath(environment: configuration.environment, processEnvironment: ProcessInfo.processInfo.environment))
            as NSString).deletingLastPathComponent + "/kept"
    }

    /// `BAHN_WEBHOOK_PORT`, when set, must be a port number.
    func webhookPort() throws(Diagnostic) -> UInt16 {
        guard let text = configuration.value("BAHN_WEBHOOK_PORT") else { return 0 }
        guard let port = UInt16(text) else {
            throw .configuration("BAHN_WEBHOOK_PORT is '\(text)', not a port number", hint: "use 0–65535, or unset it for any free port")
        }
        return port
    }

    /// A webhook target this process registered with the local emulator.
    struct WebhookTarget: Sendable {
        let id: String
        let url: String
    }

    /// Registers `url` as a webhook target of the local emulator, under an id of this process's own. Nil when the
    /// run talks to a real Bahn, whose webhooks are configured on Bahn's side. A standalone `sandbox serve` is told
    /// over its control route, through the one retry policy and within `--timeout`; a failure stops the run.
    func registerWebhookTarget(url: String) async throws(Diagnostic) -> WebhookTarget? {
        guard configuration.kind == .local else { return nil }
        let target = WebhookTarget(id: "run-\(getpid())-\(UUID().uuidString.prefix(8).lowercased())", url: url)
        if let emulator {
            emulator.bahn.addWebhookTarget(id: target.id, url: url)
            return target
        }
        guard let base = configuration.value("BAHN_API_URL") else { return nil }
        if let problem = await control("PUT", base + "/_sandbox/bahn/webhook-targets/\(target.id)", body: ["url": .string(url)]) {
            throw .unavailable("cannot register this run's webhook listener with sandbox serve at \(base): \(problem)",
                               hint: "check that `checkout-driver sandbox serve` is still running, or stop it to use an embedded emulator")
        }
        return target
    }

    /// Removes a target this process registered; a failure is only a warning (the run itself is over).
    func unregister(_ target: WebhookTarget) async {
        if let emulator {
            emulator.bahn.removeWebhookTarget(id: target.id)
            return
        }
        guard let base = configuration.value("BAHN_API_URL") else { return }
        if let problem = await control("DELETE", base + "/_sandbox/bahn/webhook-targets/\(target.id)", body: nil, goneIsFine: true) {
            console.err("warning: could not remove webhook target \(target.id) from sandbox serve at \(base): \(problem)")
        }
    }

    /// One request to the emulator's control routes, retries included, within `--timeout`; nil on a 2xx answer (or a
    /// 404 when `goneIsFine`: a DELETE whose first answer was lost finds the target already removed), else what went
    /// wrong.
    private func control(_ method: String, _ url: String, body: JSON?, goneIsFine: Bool = false) async -> String? {
        let client = CurlTransport()
        let timeout = settings.timeout
        // --timeout is each attempt's, as for any request: the retry policy gets the room to repeat one that timed out.
        let policy = RetryPolicy.default
        let budget = Double(policy.attempts) * (timeout + policy.maxDelay)
        do {
            let last = try await policy.exchange(client: client, deadline: Deadline(seconds: budget), during: "webhook target") {
                (_: Int) throws(Diagnostic) -> HTTPClientRequest in
                HTTPClientRequest(method: method, url: url, headers: body == nil ? [:] : ["Content-Type": "application/json"],
                                  body: body?.data, timeout: timeout)
            }
            switch last.outcome {
            case .success(let response) where (200..<300).contains(response.status): return nil
            case .success(let response) where goneIsFine && response.status == 404: return nil
            case .success(let response): return "it answered \(response.status)"
            case .failure(let error): return redactor.text(error.description)
            }
        } catch {
            return error.message
        }
    }

    func makeReporters() -> Reporters {
        Reporters.make(settings: settings, redactor: redactor, console: console)
    }

    /// Runs one flow with the reporters this invocation asked for, records captures in the state file,
    /// and turns the outcome into an exit code.
    ///
    /// SIGINT or SIGTERM while it runs stops the current step; `finally` steps, the reports and the state still get
    /// their turn, and the result fails with 130 or 143 (see `Interruption`).
    func run(_ flow: Flow, vars: [String: JSON], registry: OperationRegistry) async throws(Diagnostic) -> FlowResult {
        let reporters = makeReporters()
        let (store, hold) = try stateScope(for: flow)
        var services = try await startServices(for: flow, run: store.run)
        // Files a run makes for itself (test tokens) live and die with it.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("checkout-driver-run-\(UUID().uuidString.prefix(8))").path
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        services.scratchDirectory = scratch
        let console = console
        let interruption = Interruption { sig in
            console.err("interrupted (\(Interruption.name(sig))): stopping the current step; finally steps and reports follow (again to quit at once)")
        }
        let runner = makeRunner(registry: registry, reporters: reporters, services: services, interruption: interruption, state: store)
        let result = await interruption.run { await runner.run(flow, vars: vars) }
        interruption.stop()
        await services.restore()
        services.bahnWebhooks?.shutdown()
        try? FileManager.default.removeItem(atPath: scratch)
        // The state first: a report that cannot be written must not leave the run unfinished.
        let recorded = Result { () throws(Diagnostic) in
            // A capture that names a file of the run's scratch directory would point at nothing once the run ends.
            let lasting = result.captures.filter { !($0.value.stringValue?.hasPrefix(scratch + "/") ?? false) }
            if !lasting.isEmpty { try store.recordCaptures(lasting, flow: flow.name) }
            if store.run != nil && settings.runScope == nil { try finishOwnRun(store) }
        }
        withExtendedLifetime(hold) {}
        try reporters.finish()
        try recorded.get()
        return result
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
            try? FileManager.default.removeItem(atPath: (state.path as NSString).deletingLastPathComponent)
        }
    }
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
            "BAHN_API_KEY": TestCredentials.bahnAPIKey,
            "BAHN_SIGNING_KEY": TestCredentials.bahnClientPrivateKeyPEM,
            "BAHN_KEY_ID": TestCredentials.bahnKeyID,
            "BAHN_WEBHOOK_SECRET": TestCredentials.bahnWebhookSecret,
            "CENTRA_TOKEN": CentraRules.pluginToken,
            "CENTRA_SHARED_SECRET": CentraRules.sharedSecret,
            "AFTERPAY_MERCHANT_ID": TestCredentials.afterpayMerchantID,
            "AFTERPAY_SECRET_KEY": TestCredentials.afterpaySecretKey,
            "AFTERPAY_SHOP_MERCHANT_ID": TestCredentials.afterpayShopMerchantID,
            "CASHAPP_CLIENT_ID": TestCredentials.cashAppClientID,
            "BRAINTREE_TOKENIZATION_KEY": TestCredentials.braintreeTokenizationKey,
            "BRAINTREE_PUBLIC_KEY": TestCredentials.braintreePublicKey,
            "BRAINTREE_PRIVATE_KEY": TestCredentials.braintreePrivateKey,
        ]
    }
}

/// Where a running `sandbox serve` announces itself, so that `--env local` runs use it instead of an
/// embedded emulator: `$XDG_STATE_HOME/checkout-driver/local/emulator.json` = `{"url", "pid"}`.
enum LocalEmulatorFile {
    struct Entry {
        var url: String
        var pid: Int32
    }

    static func path(processEnvironment: [String: String]) -> String {
        ((StateStore.defaultPath(environment: "local", processEnvironment: processEnvironment)) as NSString)
            .deletingLastPathComponent + "/emulator.json"
    }

    /// The announced emulator, when its process is alive and its port accepts connections (a `sandbox serve`
    /// killed with SIGKILL leaves its file behind, and its pid may by now belong to another process).
    static func running(processEnvironment: [String: String]) -> Entry? {
        guard let entry = announced(processEnvironment: processEnvironment), kill(entry.pid, 0) == 0,
              let port = entry.url.split(separator: ":").last.flatMap({ UInt16($0) }), acceptsConnections(port: port) else { return nil }
        return entry
    }

    /// What the file announces, alive or not.
    static func announced(processEnvironment: [String: String]) -> Entry? {
        guard let data = FileManager.default.contents(atPath: path(processEnvironment: processEnvironment)),
              let json = try? JSON.parse(data), let url = json["url"]?.stringValue, let pid = json["pid"]?.intValue else { return nil }
        return Entry(url: url, pid: Int32(pid))
    }

    /// An announcement whose `sandbox serve` is gone (killed with SIGKILL, the machine restarted): removed, and said,
    /// since the commands that would have chained through it now each get an emulator of their own.
    static func withdrawStale(processEnvironment: [String: String]) -> Entry? {
        guard let entry = announced(processEnvironment: processEnvironment), running(processEnvironment: processEnvironment) == nil else { return nil }
        unlink(path(processEnvironment: processEnvironment))
        return entry
    }

    /// A loopback TCP connect, so a stale announcement is ignored rather than sending every run to a dead port.
    private static func acceptsConnections(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func announce(url: String, processEnvironment: [String: String]) throws(Diagnostic) {
        let file = path(processEnvironment: processEnvironment)
        try? FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent,
                                                 withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileIO.write(JSON.object(["url": .string(url), "pid": .number(Double(getpid()))]).data, to: file)
    }

    /// Removes the announcement if it is still ours (a later `sandbox serve` may have replaced it).
    static func withdraw(processEnvironment: [String: String]) {
        let file = path(processEnvironment: processEnvironment)
        guard let data = FileManager.default.contents(atPath: file), let json = try? JSON.parse(data) else { return }
        if json["pid"]?.intValue == Int(getpid()) { unlink(file) }
    }

    static func throwawayStatePath() -> String {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("checkout-driver-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/state.json").path
    }
}
