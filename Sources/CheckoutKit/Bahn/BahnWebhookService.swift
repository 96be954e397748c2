import Foundation

/// A run's own Bahn webhook listener, for `bahn.awaitWebhook`: an inbox that verifies with `BAHN_WEBHOOK_SECRET`,
/// registered as one more webhook target of the local emulator and removed when the run ends. Other runs' targets
/// (a `bahn listen`, flows in parallel) are never touched: every target gets every event, and each run's listener
/// waits for the events of its own intents.
public final class BahnWebhookService: RunService {
    /// The events received, which `bahn.awaitWebhook` waits for.
    public let events: BahnWebhookEvents
    /// Where the events come in; nil in a replay, whose events come from its recording.
    public let url: String?
    private let inbox: BahnWebhookInbox?
    private let removeTarget: (@Sendable () async -> Void)?

    public init(inbox: BahnWebhookInbox, removeTarget: (@Sendable () async -> Void)? = nil) {
        self.inbox = inbox
        self.events = inbox.events
        self.url = inbox.url
        self.removeTarget = removeTarget
    }

    /// A replay's: the events its recording's `bahn.awaitWebhook` steps were given, as received then (their signatures
    /// were checked when they came; a recording keeps no signature to check again).
    public init(replaying events: [BahnWebhookEvent]) {
        self.inbox = nil
        self.events = BahnWebhookEvents(events, complete: true)
        self.url = nil
        self.removeTarget = nil
    }

    /// Started for a flow that awaits webhooks, when a webhook secret is configured (the operation's preflight asks
    /// for one); in a replay, made of the events the recorded steps got.
    static let recipe = RunServiceRecipe(operations: [BahnOperations.awaitWebhook.name], replaying: { outputs in
        BahnWebhookService(replaying: outputs.compactMap { $0["event"].flatMap { BahnWebhookEvent(body: $0) } })
    }) {
        (host: any RunServiceHost) async throws(Diagnostic) -> (any RunService)? in
        guard let secret = host.configuration.value("BAHN_WEBHOOK_SECRET") else { return nil }
        let inbox = try BahnWebhookInbox(secret: secret, port: try port(host.configuration))
        inbox.start()
        do throws(Diagnostic) {
            let remove = try await host.registerWebhookTarget(url: inbox.url, provider: "bahn", emulatorBase: "BAHN_API_URL")
            return BahnWebhookService(inbox: inbox, removeTarget: remove)
        } catch {
            inbox.shutdown()
            throw error
        }
    }

    /// `BAHN_WEBHOOK_PORT`, when set, must be a port number; unset, any free port.
    public static func port(_ configuration: Configuration) throws(Diagnostic) -> UInt16 {
        guard let text = configuration.value("BAHN_WEBHOOK_PORT") else { return 0 }
        guard let port = UInt16(text) else {
            throw .configuration("BAHN_WEBHOOK_PORT is '\(text)', not a port number", hint: "use 0–65535, or unset it for any free port")
        }
        return port
    }

    /// The target goes while the listener still answers: an event the emulator emits meanwhile is delivered here,
    /// never left failed at a closed port.
    public func stop() async {
        await removeTarget?()
        inbox?.shutdown()
    }
}
