import CheckoutKit
import Foundation
import SandboxEmulator

/// The local emulator's webhook targets, for an invocation under `--env local`: a flow's provider listener (Bahn's
/// webhook inbox, for a flow that awaits webhooks) and `bahn listen` register a target of their own and remove it when
/// they end — on the embedded emulator directly, on a standalone `sandbox serve` over its control routes.
struct EmulatorControl: Sendable {
    let configuration: Configuration
    /// The emulator this process started (nil: a `sandbox serve` elsewhere, or a real provider).
    let emulator: Emulator?
    /// `--timeout`: each attempt of a control request.
    let timeout: Double
    let redactor: Redactor
    let console: Console

    /// Adds `url` as one of `provider`'s webhook targets, under an id of this process's own (through the one retry
    /// policy and within `--timeout` for a `sandbox serve`; a failure stops the run). Nil when the run talks to a real
    /// provider, whose webhooks are configured on its side.
    func registerWebhookTarget(
        url: String, provider: String, emulatorBase: String
    ) async throws(Diagnostic)
        -> (@Sendable () async -> Void)?
    {
        guard configuration.kind == .local else { return nil }
        let id = "run-\(getpid())-\(UUID.random().uuidString.prefix(8).lowercased())"
        if let emulator {
            guard emulator.addWebhookTarget(provider: provider, id: id, url: url) else { return nil }
            return { emulator.removeWebhookTarget(provider: provider, id: id) }
        }
        guard let base = configuration.value(emulatorBase) else { return nil }
        let route = base + "/_sandbox/\(provider)/webhook-targets/\(id)"
        if let problem = await control("PUT", route, body: ["url": .string(url)]) {
            throw .unavailable(
                "cannot register this run's webhook listener with sandbox serve at \(base): \(problem)",
                hint:
                    "check that `checkout-driver sandbox serve` is still running, or stop it to use an embedded emulator"
            )
        }
        // Removing it is only a warning when it fails: the run itself is over.
        return { [self] in
            if let problem = await control("DELETE", route, body: nil, goneIsFine: true) {
                console.err("warning: could not remove webhook target \(id) from sandbox serve at \(base): \(problem)")
            }
        }
    }

    /// One request to the emulator's control routes, retries included, within `--timeout`; nil on a 2xx answer (or a
    /// 404 when `goneIsFine`: a DELETE whose first answer was lost finds the target already removed), else what went
    /// wrong.
    private func control(_ method: String, _ url: String, body: JSON?, goneIsFine: Bool = false) async -> String? {
        let client = CurlTransport(options: .direct)
        let timeout = timeout
        // --timeout is each attempt's, as for any request: the retry policy gets the room to repeat one that timed out.
        let policy = RetryPolicy.default
        let budget = Double(policy.attempts) * (timeout + policy.maxDelay)
        do {
            let last = try await policy.exchange(
                client: client, deadline: Deadline(seconds: budget), during: "webhook target"
            ) {
                (_: Int) throws(Diagnostic) -> HTTPClientRequest in
                HTTPClientRequest(
                    method: method, url: url, headers: body == nil ? [:] : ["Content-Type": "application/json"],
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
