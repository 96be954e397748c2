import Foundation
import LoopbackHTTP
import Synchronization
import Testing
import WireTypes

@testable import SandboxEmulator

/// The webhook control routes are the same for any provider whose emulator sends webhooks: a sender that is not
/// Bahn's gets its events listed, triggered, resent and its targets registered under its own name.
@Suite struct WebhookRoutesTests {
    /// A provider's webhook side, as small as the protocol allows: events about "widgets", kept in memory.
    final class WidgetWebhooks: WebhookSender {
        private let state = Mutex((targets: [(id: String, url: String)](), events: [JSON](), resent: [String]()))
        let widgets: Set<String> = ["wd_1"]

        func addWebhookTarget(id: String, url: String) { state.withLock { $0.targets.append((id, url)) } }
        func removeWebhookTarget(id: String) -> Bool {
            state.withLock { s in
                let before = s.targets.count
                s.targets.removeAll { $0.id == id }
                return s.targets.count < before
            }
        }
        var webhookTargets: [(id: String, url: String)] { state.withLock { $0.targets } }
        let subjectName = "widget"
        func events(_ page: ListPage) -> (events: [JSON], hasMore: Bool)? {
            state.withLock { s in
                let start =
                    page.since.flatMap { id in s.events.firstIndex { $0["id"]?.stringValue == id } }
                    .map { $0 + 1 } ?? 0
                let end = min(s.events.count, start + page.limit)
                return (Array(s.events[start..<end]), end < s.events.count)
            }
        }
        func trigger(type: String, subject: String?) -> (event: String, subject: String)? {
            if let subject, !widgets.contains(subject) { return nil }
            return state.withLock { s in
                let event = "evt_\(s.events.count + 1)"
                let about = subject ?? "wd_new\(s.events.count + 1)"
                s.events.append(["id": .string(event), "type": .string(type), "subject": .string(about)])
                return (event, about)
            }
        }
        func resend(id: String) -> Bool {
            state.withLock { s in
                guard s.events.contains(where: { $0["id"]?.stringValue == id }) else { return false }
                s.resent.append(id)
                return true
            }
        }
        var resent: [String] { state.withLock { $0.resent } }
    }

    static func call(_ router: Router, _ method: String, _ target: String, _ body: JSON? = nil) -> (Int, JSON) {
        let request = HTTPRequest(method: method, target: target, body: body?.data ?? Data())
        guard case .respond(let response) = router.handle(request) else { return (0, .null) }
        return (response.status, (try? JSON.parse(response.body)) ?? .null)
    }

    @Test func anyProvidersSenderGetsTheSameRoutes() {
        let sender = WidgetWebhooks()
        let router = Router()
        router.register(WebhookRoutes.make(provider: "widgetpay", eventTypes: ["widget.shipped"], sender: sender))

        let (status, sent) = Self.call(router, "POST", "/_sandbox/widgetpay/events", ["type": "widget.shipped"])
        #expect(status == 200 && sent["id"] == "evt_1" && sent["subject"] == "wd_new1" && sent["targets"] == 0)
        let named = Self.call(
            router, "POST", "/_sandbox/widgetpay/events", ["type": "widget.shipped", "widget": "wd_1"])
        #expect(named.0 == 200 && named.1["subject"] == "wd_1" && named.1["widget_id"] == "wd_1", "\(named)")
        let unknown = Self.call(
            router, "POST", "/_sandbox/widgetpay/events", ["type": "widget.shipped", "subject": "x"])
        #expect(unknown.0 == 404 && unknown.1["error"]?["message"] == "No such widget: x", "\(unknown)")
        let type = Self.call(router, "POST", "/_sandbox/widgetpay/events", ["type": "payment_intent.canceled"])
        #expect(type.0 == 400 && type.1["error"]?["message"]?.stringValue?.contains("widget.shipped") == true)

        let listed = Self.call(router, "GET", "/_sandbox/widgetpay/events?limit=1")
        #expect(listed.1["events"]?.arrayValue?.map { $0["id"] } == ["evt_1"] && listed.1["hasMore"] == true)
        let next = Self.call(router, "GET", "/_sandbox/widgetpay/events?since=evt_1")
        #expect(next.1["events"]?.arrayValue?.map { $0["id"] } == ["evt_2"] && next.1["hasMore"] == false)

        #expect(Self.call(router, "POST", "/_sandbox/widgetpay/events/evt_2/resend").0 == 200)
        #expect(Self.call(router, "POST", "/_sandbox/widgetpay/events/evt_9/resend").0 == 404)
        #expect(sender.resent == ["evt_2"])

        let put = Self.call(router, "PUT", "/_sandbox/widgetpay/webhook-targets/t1", ["url": "http://127.0.0.1:9/"])
        #expect(put.0 == 200 && sender.webhookTargets.map(\.id) == ["t1"])
        #expect(Self.call(router, "PUT", "/_sandbox/widgetpay/webhook-targets/t2", ["url": "ftp://x"]).0 == 400)
        #expect(Self.call(router, "GET", "/_sandbox/widgetpay/webhook-targets").1["targets"]?.arrayValue?.count == 1)
        #expect(Self.call(router, "DELETE", "/_sandbox/widgetpay/webhook-targets/t1").0 == 200)
        #expect(Self.call(router, "DELETE", "/_sandbox/widgetpay/webhook-targets/t1").0 == 404)
        // Another provider's paths are not this one's.
        #expect(Self.call(router, "GET", "/_sandbox/bahn/events").0 == 404)
    }

    /// The emulator serves them for every installed provider that sends webhooks, and only for those.
    @Test func theEmulatorServesThemForEachSender() throws {
        let emulator = try Emulator()
        for provider in Emulator.providers {
            let (status, _) = Self.call(emulator.router, "GET", "/_sandbox/\(provider.name)/events")
            #expect((status == 200) == !provider.eventTypes.isEmpty, "\(provider.name): \(status)")
        }
    }
}
