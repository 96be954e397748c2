import Foundation

/// A run's Bahn webhook listener, for `bahn.awaitWebhook`: an inbox that verifies with `BAHN_WEBHOOK_SECRET`,
/// registered as one more webhook target of the local emulator and removed when the last run using it ends. The runs
/// of one process share it (`BahnInboxes`): the emulator gives every target every event, so an inbox per run would
/// take each event once per run in flight. Other targets (a `bahn listen`, other processes) are never touched, and
/// each run waits for the events of its own intents.
public final class BahnWebhookService: RunService {
    /// The events received, which `bahn.awaitWebhook` waits for.
    public let events: BahnWebhookEvents
    /// Where the events come in; nil in a replay, whose events come from its recording.
    public let url: String?
    /// Where this run's events begin in the shared inbox: what came before it started (an earlier run's events, in a
    /// batch that holds the inbox from run to run) is never taken for its own.
    public let firstEvent: Int
    /// Lets go of the inbox (the last run to let go removes its target and shuts it down); nil in a replay.
    private let release: (@Sendable () async -> Void)?

    init(inbox: BahnWebhookInbox, release: @escaping @Sendable () async -> Void) {
        self.events = inbox.events
        self.url = inbox.url
        self.firstEvent = inbox.events.count
        self.release = release
    }

    /// An inbox of its own (`bahn listen`'s): stopping removes its target while it still answers — an event the
    /// emulator emits meanwhile is delivered, never left failed at a closed port — then shuts it down.
    public convenience init(inbox: BahnWebhookInbox, removeTarget: (@Sendable () async -> Void)?) {
        self.init(inbox: inbox) {
            await removeTarget?()
            inbox.shutdown()
        }
    }

    /// A replay's: the events its recording's `bahn.awaitWebhook` steps were given, as received then (their signatures
    /// were checked when they came; a recording keeps no signature to check again).
    public init(replaying events: [BahnWebhookEvent]) {
        self.events = BahnWebhookEvents(events, complete: true)
        self.url = nil
        self.firstEvent = 0
        self.release = nil
    }

    /// Started for a flow that awaits webhooks, when a webhook secret is configured (the operation's preflight asks
    /// for one); in a replay, made of the events the recorded steps got.
    static let recipe = RunServiceRecipe(
        operations: [BahnOperations.awaitWebhook.name],
        replaying: { outputs in
            BahnWebhookService(replaying: outputs.compactMap { $0["event"].flatMap { BahnWebhookEvent(body: $0) } })
        }
    ) {
        (host: any RunServiceHost) async throws(Diagnostic) -> (any RunService)? in
        guard let secret = host.configuration.value("BAHN_WEBHOOK_SECRET") else { return nil }
        let port = try port(host.configuration)
        // The runs of one invocation (one host) share an inbox when they would open the same one.
        let key = "\(ObjectIdentifier(host).hashValue) \(port) \(secret)"
        let inbox = try await BahnInboxes.shared.acquire(key) { () async throws(Diagnostic) -> BahnInboxes.Opened in
            let inbox = try BahnWebhookInbox(secret: secret, port: port)
            inbox.start()
            do throws(Diagnostic) {
                let remove = try await host.registerWebhookTarget(
                    url: inbox.url, provider: "bahn", emulatorBase: "BAHN_API_URL")
                return BahnInboxes.Opened(inbox: inbox, removeTarget: remove)
            } catch {
                inbox.shutdown()
                throw error
            }
        }
        return BahnWebhookService(inbox: inbox) { await BahnInboxes.shared.release(key) }
    }

    /// `BAHN_WEBHOOK_PORT`, when set, must be a port number; unset, any free port.
    public static func port(_ configuration: Configuration) throws(Diagnostic) -> UInt16 {
        guard let text = configuration.value("BAHN_WEBHOOK_PORT") else { return 0 }
        guard let port = UInt16(text) else {
            throw .configuration(
                "BAHN_WEBHOOK_PORT is '\(text)', not a port number", hint: "use 0–65535, or unset it for any free port")
        }
        return port
    }

    public func stop() async {
        await release?()
    }
}

/// The Bahn inboxes of this process, each shared by the runs that use it at once: opened by the first, closed by the
/// last. A run that starts while another's inbox is opening waits for it rather than opening one of its own.
actor BahnInboxes {
    static let shared = BahnInboxes()

    struct Opened: Sendable {
        let inbox: BahnWebhookInbox
        /// Removes the inbox's webhook target (nil when it has none: a real provider's webhooks are set up on its
        /// side).
        let removeTarget: (@Sendable () async -> Void)?
    }

    private struct Lease {
        let opening: Task<Opened, any Error>
        var holders: Int
    }
    private var leases: [String: Lease] = [:]

    /// The inbox under `key`, opened by `open` when no run holds one; each call is matched by one `release`.
    func acquire(
        _ key: String, open: @escaping @Sendable () async throws(Diagnostic) -> Opened
    ) async throws(Diagnostic) -> BahnWebhookInbox {
        let opening: Task<Opened, any Error>
        if var lease = leases[key] {
            lease.holders += 1
            leases[key] = lease
            opening = lease.opening
        } else {
            opening = Task { try await open() }
            leases[key] = Lease(opening: opening, holders: 1)
        }
        do {
            return try await opening.value.inbox
        } catch {
            // Every run that waited for it fails alike; the next one to start opens another.
            if leases[key]?.opening == opening { leases[key] = nil }
            throw error as? Diagnostic
                ?? .unavailable("cannot listen for Bahn webhooks: \(error)", hint: "run it again")
        }
    }

    /// One run is done with the inbox under `key`; the last removes its target while it still answers (an event the
    /// emulator emits meanwhile is delivered, never left failed at a closed port), then shuts it down.
    func release(_ key: String) async {
        guard var lease = leases[key] else { return }
        lease.holders -= 1
        guard lease.holders == 0 else {
            leases[key] = lease
            return
        }
        leases[key] = nil
        guard let opened = try? await lease.opening.value else { return }
        await opened.removeTarget?()
        opened.inbox.shutdown()
    }
}
