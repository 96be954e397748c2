import Foundation
import LoopbackHTTP
import WireTypes

/// The emulator's Braintree controls (not Braintree's API, so no authorization): what the configuration endpoint
/// advertises for Apple Pay, so that tests can turn Apple Pay off or make the gateway disagree with a token's currency.
struct BraintreeSandbox: Sendable {
    let store: BraintreeStore

    static let configurationPath = BraintreeRules.sandboxPrefix + "/configuration"

    func routes() -> [Route] {
        [
            Route("GET", Self.configurationPath) { _ in
                EmulatorResponse.json(200, Self.json(store.withLock { $0.applePay }))
            },
            Route("PUT", Self.configurationPath) { update($0) },
        ]
    }

    static func json(_ settings: BraintreeRules.ApplePaySettings) -> JSON {
        [
            "applePayStatus": .string(settings.status), "currencyCode": .string(settings.currencyCode),
            "countryCode": .string(settings.countryCode),
        ]
    }

    /// Any subset of the settings; a key the emulator does not know is refused, so a typo cannot silently do nothing.
    private func update(_ request: EmulatorRequest) -> HTTPReply {
        func invalid(_ message: String) -> HTTPReply {
            EmulatorResponse.error(400, code: "invalid_braintree_configuration", message: message)
        }
        guard let body = request.jsonObject else {
            return invalid("send a JSON object, e.g. {\"applePayStatus\": \"off\"}")
        }
        if let unknown = body.keys.sorted().first(where: {
            !["applePayStatus", "currencyCode", "countryCode"].contains($0)
        }) {
            return invalid("unknown setting \(unknown): use applePayStatus, currencyCode, countryCode")
        }
        var changed = store.withLock { $0.applePay }
        if let value = body["applePayStatus"] {
            guard let status = value.stringValue, BraintreeRules.ApplePaySettings.statuses.contains(status) else {
                return invalid("applePayStatus must be \"off\", \"mock\" or \"production\"")
            }
            changed.status = status
        }
        let codes: [(String, Int, WritableKeyPath<BraintreeRules.ApplePaySettings, String>)] = [
            ("currencyCode", 3, \.currencyCode), ("countryCode", 2, \.countryCode),
        ]
        for (key, length, path) in codes {
            guard let value = body[key] else { continue }
            guard let code = value.stringValue, code.count == length, code.allSatisfy({ $0.isASCII && $0.isUppercase })
            else {
                return invalid("\(key) must be \(length) uppercase letters")
            }
            changed[keyPath: path] = code
        }
        // Only the keys given change, even if another request changed the rest meanwhile.
        let result = store.withLock { s -> BraintreeRules.ApplePaySettings in
            if body["applePayStatus"] != nil { s.applePay.status = changed.status }
            if body["currencyCode"] != nil { s.applePay.currencyCode = changed.currencyCode }
            if body["countryCode"] != nil { s.applePay.countryCode = changed.countryCode }
            return s.applePay
        }
        return EmulatorResponse.json(200, Self.json(result))
    }
}
