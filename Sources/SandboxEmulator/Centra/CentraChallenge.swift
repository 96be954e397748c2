import Foundation
import LoopbackHTTP
import WireTypes

/// The emulator's side of 3DS and its test controls: the challenge page a `RedirectPaymentAction` points at (it
/// passes at once and redirects to the shop's `paymentReturnPage` with `redirectResult`, as Adyen's hosted page
/// does), the native challenge's completion (the `threeDSResult` Adyen's SDK would produce), the Ingrid store flag,
/// and ending every session (to exercise a client's re-session on `Unauthorized`).
enum CentraChallenge {
    static func pagePath(_ reference: String) -> String { "/_sandbox/centra/3ds/\(reference)" }
    static func completePath(_ reference: String) -> String { "/_sandbox/centra/3ds/\(reference)/complete" }

    static func routes(store: CentraStore) -> [Route] {
        [
            Route("GET", "/_sandbox/centra/3ds/:ref") { request in
                guard let payment = store.pending(request.params["ref"] ?? ""), payment.scenario == .redirect else {
                    return .respond(
                        HTTPResponse(
                            status: 404, headers: ["Content-Type": "text/html; charset=utf-8"],
                            body: Data(
                                "<!doctype html><title>3DS</title><p>No payment waits for this challenge.</p>".utf8)))
                }
                let separator = payment.returnPage.contains("?") ? "&" : "?"
                let location = payment.returnPage + separator + "redirectResult=" + payment.result
                let page =
                    "<!doctype html><title>3DS</title><p>Challenge passed. <a href=\"\(location)\">Back to the shop</a></p>"
                return .respond(
                    HTTPResponse(
                        status: 302, headers: ["Location": location, "Content-Type": "text/html; charset=utf-8"],
                        body: Data(page.utf8)))
            },
            Route("POST", "/_sandbox/centra/3ds/:ref/complete") { request in
                guard let payment = store.pending(request.params["ref"] ?? ""), payment.scenario == .native3DS else {
                    return EmulatorResponse.error(
                        404, code: "challenge_not_found", message: "no native 3DS challenge waits under this reference")
                }
                return EmulatorResponse.json(200, ["threeDSResult": .string(payment.result)])
            },
            Route("GET", "/_sandbox/centra/store") { _ in EmulatorResponse.json(200, ["ingrid": JSON(store.ingrid)]) },
            Route("PUT", "/_sandbox/centra/store") { request in
                guard let on = request.json?["ingrid"]?.boolValue else {
                    return EmulatorResponse.error(
                        400, code: "invalid_store_flags", message: "send {\"ingrid\": true|false}")
                }
                store.setIngrid(on)
                return EmulatorResponse.json(200, ["ingrid": JSON(on)])
            },
            Route("POST", "/_sandbox/centra/expire-sessions") { _ in
                store.expireSessions()
                return EmulatorResponse.json(200, ["expired": true])
            },
        ]
    }
}
