/// One emulated provider, as the emulator knows it: the routes and state it installs, what `--env local` sets to point
/// the driver at it, the magic values its help lists, and the webhooks it sends. `Emulator.providers` is the one list
/// of them; adding a provider is a folder of its own and a line there (docs/architecture.md, "The tree").
public protocol EmulatedProvider: AnyObject, Sendable {
    /// The provider's name in the code, as the Kit's `Provider` names it (the names users see, such as the ledger's
    /// `afterpay`, are the provider's own business).
    static var name: String { get }
    /// Makes the provider's emulator and registers its routes.
    static func install(_ context: EmulatorContext) -> Self
    /// What `--env local` sets, by configuration variable: its base URL and its test credentials.
    static func localConfiguration(baseURL: String) -> [String: String]
    /// Its magic values (amounts, items, nonces) and what each does, for `sandbox serve --help`.
    static var scenariosHelp: String { get }
    /// Who receives its webhooks; nil when it sends none.
    var webhookSender: (any WebhookSender)? { get }
    /// The webhook event types it sends, which `sandbox trigger` can make it send; none when it sends no webhooks.
    static var eventTypes: [String] { get }
}

extension EmulatedProvider {
    public var webhookSender: (any WebhookSender)? { nil }
    public static var eventTypes: [String] { [] }
}

/// What a provider's emulator is installed with.
public struct EmulatorContext: Sendable {
    public let router: Router
    public let ledger: Ledger
    /// The emulator's base URL, once its socket is bound (links it hands out point there).
    public let baseURL: @Sendable () -> String
    /// Where providers that send webhooks send them first (`sandbox serve --webhook-url`).
    public let webhookURL: String?
}
