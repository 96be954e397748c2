import CheckoutKit
import Foundation

/// The run's services, and Bahn webhook targets: a flow that awaits webhooks, and `bahn listen`, register a listener
/// of their own with the local emulator and remove it when they end.
extension RunEnvironment {
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
}
