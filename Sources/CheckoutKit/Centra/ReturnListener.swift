import Foundation
import Synchronization

/// A loopback listener for the 3DS return: it serves `paymentReturnPage` and `paymentFailedPage` on 127.0.0.1 (and
/// a form action's page), keeps every query and form parameter of the first return, and tells the person they may
/// close the tab. It listens where the run's `Listening` says (a socket, or in a replay the recorded address).
final class ReturnListener: Sendable {
    struct Returned: Sendable {
        var parameters: JSON.Object
        var failed: Bool
    }

    /// What the handler (on the server's threads) and the waiting step share.
    private final class Shared: Sendable {
        let state = Mutex<(returned: Returned?, form: String?)>((nil, nil))
    }

    private let server: any Listener
    private let shared: Shared
    private let hearsOutside: Bool

    init(_ context: OperationContext) throws(Diagnostic) {
        let shared = Shared()
        self.shared = shared
        hearsOutside = context.services.listening.hearsOutside
        let state = shared
        server = try context.listen("3DS return listener") { request in
            if request.path == "/form", let html = state.state.withLock({ $0.form }) {
                return .respond(
                    HTTPResponse(
                        status: 200, headers: ["Content-Type": "text/html; charset=utf-8"], body: Data(html.utf8)))
            }
            guard request.path == "/return" || request.path == "/failed" else {
                return .respond(.text(404, "not found"))
            }
            var parameters = JSON.Object(request.query.mapValues(JSON.string))
            if request.headers["Content-Type"]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true {
                for (k, v) in FormEncoding.decode(request.body) { parameters[k] = .string(v) }
            }
            state.state.withLock { s in
                if s.returned == nil {
                    s.returned = Returned(parameters: parameters, failed: request.path == "/failed")
                }
            }
            let page =
                "<!doctype html><meta charset=utf-8><title>checkout-driver</title><p>Payment step received. You may close this tab.</p>"
            return .respond(
                HTTPResponse(status: 200, headers: ["Content-Type": "text/html; charset=utf-8"], body: Data(page.utf8)))
        }
    }

    var baseURL: String { server.baseURL }
    var returnURL: String { baseURL + "/return" }
    var failedURL: String { baseURL + "/failed" }

    func serveForm(_ html: String) -> String {
        shared.state.withLock { $0.form = html }
        return baseURL + "/form"
    }

    /// The first return, or nil when none came within `seconds` (an interrupt ends the wait too).
    func waitForReturn(seconds: Double) async -> Returned? {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while hearsOutside, ContinuousClock.now < end, !Task.isCancelled {
            if let returned = shared.state.withLock({ $0.returned }) { return returned }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return shared.state.withLock { $0.returned }
    }

    /// Begins answering: a return is coming (the payment answered with a redirect or a form).
    func start() { server.start() }

    func stop() { server.stop() }

}
