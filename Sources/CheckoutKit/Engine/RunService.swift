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
/// targets.
public protocol RunServiceHost: Sendable {
    var configuration: Configuration { get }
    /// Registers `url` as one of `provider`'s webhook targets with the local emulator — embedded, or a `sandbox serve`
    /// at the URL in the variable `emulatorBase` — and answers how to remove it; nil when the run talks to the real
    /// provider (whose webhooks are set up on its side). A failure to register stops the run.
    func registerWebhookTarget(url: String, provider: String, emulatorBase: String) async throws(Diagnostic)
        -> (@Sendable () async -> Void)?
}

/// How a provider starts a service: for a flow with a step that uses one of `operations`. `start` answers nil when
/// the configuration asks for none.
public struct RunServiceRecipe: Sendable {
    public var operations: Set<String>
    public var start: @Sendable (any RunServiceHost) async throws(Diagnostic) -> (any RunService)?

    public init(operations: Set<String>, start: @escaping @Sendable (any RunServiceHost) async throws(Diagnostic) -> (any RunService)?) {
        self.operations = operations
        self.start = start
    }

    /// Starts the services of every provider that `flow` needs; if one fails, those already started are stopped.
    public static func startAll(for flow: Flow, providers: [Provider] = Providers.all, host: any RunServiceHost)
        async throws(Diagnostic) -> [any RunService]
    {
        let used = Set((flow.steps + flow.finally).compactMap { step -> String? in
            if case .operation(let name, _) = step.action { return name }
            return nil
        })
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
