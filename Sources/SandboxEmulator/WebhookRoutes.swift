import LoopbackHTTP
import WireTypes

/// A provider emulator that delivers webhooks to the targets registered with it (runs' and `bahn listen`'s listeners),
/// keeps what it sent, and sends an event on demand (`sandbox trigger`, as `stripe trigger` does). The emulator serves
/// the same control routes for each (`WebhookRoutes`), under `/_sandbox/<provider>/`.
public protocol WebhookSender: Sendable {
    func addWebhookTarget(id: String, url: String)
    @discardableResult func removeWebhookTarget(id: String) -> Bool
    /// The registered webhook targets, id and URL, in registration order.
    var webhookTargets: [(id: String, url: String)] { get }
    /// What its events are about, as its API names it (Bahn's: `payment_intent`): the trigger's body may name the
    /// subject so, and a missing one is reported so.
    var subjectName: String { get }
    /// A page of the events it sent (`ListPage`), oldest first, each with its `id`, `type`, `subject`, `status` and
    /// deliveries; nil when `since` names no event it keeps.
    func events(_ page: ListPage) -> (events: [JSON], hasMore: Bool)?
    /// Sends an event of one of its types (`EmulatedProvider.eventTypes`) about `subject`, one of its objects, or about
    /// one made up for it: the event's id and the subject's, or nil when it has no such subject.
    func trigger(type: String, subject: String?) -> (event: String, subject: String)?
    /// Sends a kept event again, to every target registered now; false when it keeps no event `id`.
    func resend(id: String) -> Bool
}

/// The control routes of every emulator that sends webhooks, the same for each provider: its targets
/// (`/_sandbox/<provider>/webhook-targets`, which runs register), its events (`GET /_sandbox/<provider>/events`), a
/// triggered event (`POST …/events`) and a resent one (`POST …/events/:id/resend`). None of them is the provider's own
/// API.
enum WebhookRoutes {
    static func make(provider: String, eventTypes: [String], sender: any WebhookSender) -> [Route] {
        let base = "/_sandbox/\(provider)"
        return [
            Route("GET", "\(base)/events") { request in
                ListPage.serve(request, member: "events", sinceExample: "evt_…") { page in
                    sender.events(page).map { .init(items: $0.events, hasMore: $0.hasMore) }
                }
            },
            // An event of a type for an object of this emulator or, when none is named, for one made up on the spot (as
            // `stripe trigger` makes its fixtures), delivered like any other.
            Route("POST", "\(base)/events") { request in
                let type = request.json?.string("type") ?? ""
                guard eventTypes.contains(type) else {
                    return EmulatorResponse.error(
                        400, code: "parameter_invalid",
                        message: "unknown event type '\(type)'; types: \(eventTypes.joined(separator: ", "))",
                        param: "type")
                }
                let named = request.json?.string("subject") ?? request.json?.string(sender.subjectName)
                guard let (event, subject) = sender.trigger(type: type, subject: named) else {
                    return EmulatorResponse.error(
                        404, code: "resource_missing", message: "No such \(sender.subjectName): \(named ?? "")",
                        param: "subject")
                }
                return EmulatorResponse.json(
                    200,
                    [
                        "id": .string(event), "type": .string(type), "subject": .string(subject),
                        "\(sender.subjectName)_id": .string(subject), "targets": JSON(sender.webhookTargets.count),
                    ])
            },
            Route("POST", "\(base)/events/:id/resend") { request in
                let id = request.params["id"] ?? ""
                guard sender.resend(id: id) else {
                    return EmulatorResponse.error(
                        404, code: "resource_missing", message: "No such event: \(id)", param: "id")
                }
                return EmulatorResponse.json(
                    200, ["id": .string(id), "resent": true, "targets": JSON(sender.webhookTargets.count)])
            },
            // A client run or `bahn listen` registers a target of its own under an id it chose (PUT, so a repeat is
            // harmless) and removes it when it ends.
            Route("GET", "\(base)/webhook-targets") { _ in
                EmulatorResponse.json(
                    200,
                    ["targets": .array(sender.webhookTargets.map { ["id": .string($0.id), "url": .string($0.url)] })])
            },
            Route("PUT", "\(base)/webhook-targets/:id") { request in
                let id = request.params["id"] ?? ""
                guard let url = request.json?.string("url"), url.hasPrefix("http://") else {
                    return EmulatorResponse.error(
                        400, code: "parameter_invalid", message: "expected {\"url\": \"http://…\"}", param: "url")
                }
                sender.addWebhookTarget(id: id, url: url)
                return EmulatorResponse.json(200, ["id": .string(id), "url": .string(url)])
            },
            Route("DELETE", "\(base)/webhook-targets/:id") { request in
                let id = request.params["id"] ?? ""
                guard sender.removeWebhookTarget(id: id) else {
                    return EmulatorResponse.error(
                        404, code: "resource_missing", message: "No webhook target \(id)", param: "id")
                }
                return EmulatorResponse.json(200, ["id": .string(id), "removed": true])
            },
        ]
    }
}
