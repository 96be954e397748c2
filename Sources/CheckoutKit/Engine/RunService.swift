import Foundation

/// A listener a provider starts for a run whose flow needs one (Bahn's webhook inbox, for `bahn.awaitWebhook`). The
/// run starts it before the first step, operations find it in `RunServices` by its type, and the run stops it when it
/// ends.
public protocol RunService: AnyObject, Sendable {
    /// Undoes what starting it changed outside the process (a webhook target), then shuts it down: in that order, so
    /// nothing is delivered to a listener that is gone.
    func stop() async
}

/// What a provider's service gets to start itself with: the run's configuration, and the local emulator's webhook
/// targets. One host serves every run of an invocation, so the runs of a batch can share what they start.
public protocol RunServiceHost: AnyObject, Sendable {
    var configuration: Configuration { get }
    /// Registers `url` as one of `provider`'s webhook targets with the local emulator — embedded, or a `sandbox serve`
    /// at the URL in the variable `emulatorBase` — and answers how to remove it; nil when the run talks to the real
    /// provider (whose webhooks are set up on its side). A failure to register stops the run.
    func registerWebhookTarget(
        url: String, provider: String, emulatorBase: String
    ) async throws(Diagnostic)
        -> (@Sendable () async -> Void)?
}

/// How a provider starts a service: for a flow with a step that uses one of `operations`. `start` answers nil when
/// the configuration asks for none; `replaying` makes the service of a replay from what the recorded steps that used
/// those operations put out (their `output`s, in order), opening nothing.
public struct RunServiceRecipe: Sendable {
    public var operations: Set<String>
    public var start: @Sendable (any RunServiceHost) async throws(Diagnostic) -> (any RunService)?
    public var replaying: @Sendable ([JSON]) -> (any RunService)?

    public init(
        operations: Set<String>, replaying: @escaping @Sendable ([JSON]) -> (any RunService)?,
        start: @escaping @Sendable (any RunServiceHost) async throws(Diagnostic) -> (any RunService)?
    ) {
        self.operations = operations
        self.replaying = replaying
        self.start = start
    }

    /// The operations of `flow`'s steps, by step name.
    static func operations(of flow: Flow) -> [String: String] {
        var names: [String: String] = [:]
        for step in flow.steps + flow.finally {
            if case .operation(let name, _) = step.action { names[step.name] = name }
        }
        return names
    }

    /// A replay's services: each recipe that `flow` needs gets the recorded outputs of the steps that used its
    /// operations.
    public static func replayAll(
        for flow: Flow, recordedOutputs: [(step: String, output: JSON)], providers: [Provider] = Providers.all
    )
        -> [any RunService]
    {
        let used = operations(of: flow)
        return providers.flatMap(\.services).compactMap { recipe in
            guard !recipe.operations.isDisjoint(with: used.values) else { return nil }
            return recipe.replaying(
                recordedOutputs.filter { used[$0.step].map(recipe.operations.contains) ?? false }.map(\.output))
        }
    }

    /// Starts the services of every provider that `flow` needs; if one fails, those already started are stopped.
    public static func startAll(
        for flow: Flow, providers: [Provider] = Providers.all, host: any RunServiceHost
    )
        async throws(Diagnostic) -> [any RunService]
    {
        let used = Set(operations(of: flow).values)
        var started: [any RunService] = []
        for recipe in providers.flatMap(\.services) where !recipe.operations.isDisjoint(with: used) {
            do throws(Diagnostic) {
                if let service = try await recipe.start(host) { started.append(service) }
            } catch {
                for service in started { await service.stop() }
                throw error
            }
        }
        return started
    }
}
