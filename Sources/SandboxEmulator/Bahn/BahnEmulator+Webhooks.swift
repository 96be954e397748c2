import Crypto
import Dispatch
import Foundation
import LoopbackHTTP
import Synchronization
import WireTypes

/// The Bahn emulator's webhooks: the targets flows, `bahn listen` and `sandbox serve --webhook-url` add, the events it
/// sent, and the ones `sandbox trigger` has it send (`WebhookRoutes` serves them).
extension BahnEmulator: WebhookSender {
    /// Bahn sends its webhooks to the targets `bahn listen`, `sandbox serve --webhook-url` and flows add.
    public var webhookSender: (any WebhookSender)? { self }

    /// Adds a webhook target (or points an existing id at a new URL): every event from now on is delivered to it.
    public func addWebhookTarget(id: String, url: String) { webhooks.add(.init(id: id, url: url)) }

    /// Removes a webhook target; false when there was none with that id.
    @discardableResult
    public func removeWebhookTarget(id: String) -> Bool { webhooks.remove(id: id) }

    /// The registered webhook targets, id and URL, in registration order.
    public var webhookTargets: [(id: String, url: String)] { webhooks.targets.map { ($0.id, $0.url) } }

    /// Every webhook event emitted so far, with its delivery attempts.
    public func events() -> [BahnWebhookEvent] { webhooks.events() }

    /// What Bahn's events are about: a payment intent.
    public var subjectName: String { "payment_intent" }

    public func events(_ page: ListPage) -> (events: [JSON], hasMore: Bool)? {
        webhooks.page(page).map { ($0.events.map(\.json), $0.hasMore) }
    }

    public func trigger(type: String, subject: String?) -> (event: String, subject: String)? {
        let paymentIntent: JSON
        let id: String
        if let named = subject {
            guard let intent = store.withLock({ $0.intents[named] }) else { return nil }
            (paymentIntent, id) = (intent.json, named)
        } else {
            id = BahnRules.newID("pi_")
            paymentIntent = BahnRules.triggerFixture(id: id, type: type)
        }
        return (webhooks.emit(type: type, paymentIntent: paymentIntent, intentID: id), id)
    }

    public func resend(id: String) -> Bool { webhooks.resend(id: id) }
}
