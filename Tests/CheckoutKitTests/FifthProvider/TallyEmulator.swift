import Foundation
import LoopbackHTTP
import SandboxEmulator
import Synchronization
import WireTypes

/// The emulator's side of Tally, a sketch of a fifth provider (see `FifthProviderTests`): what a provider's folder
/// under `Sources/SandboxEmulator/` would hold. Tally's API is one money call and its read:
///
/// - `POST /tally/charges` with `Authorization: Bearer <key>` and an `Idempotency-Key` header, body `{"amount": minor
///   units, "currency": "USD"}`: 201 and the charge (`succeeded`), or 402 and the charge (`declined`) for an amount of
///   13 minor units or less. A repeat of a key is answered with the first answer and moves nothing.
/// - `GET /tally/charges/{idempotency key}`: the charge that key made, or 404.
final class TallyEmulator: EmulatedProvider {
    static let name = "tally"
    static let apiKey = "tally_test_emulator_0001"
    static let scenariosHelp = "Tally: an amount of 13 minor units or less is declined (402)."

    private let ledger: Ledger
    /// Each answer by the idempotency key it was made under: its status and the charge.
    private let charges = Mutex<[String: (status: Int, charge: JSON)]>([:])

    private init(ledger: Ledger) { self.ledger = ledger }

    static func install(_ context: EmulatorContext) -> TallyEmulator {
        let emulator = TallyEmulator(ledger: context.ledger)
        context.router.register(emulator.routes())
        return emulator
    }

    static func localConfiguration(baseURL: String) -> [String: String] {
        ["TALLY_API_URL": baseURL + "/tally", "TALLY_API_KEY": apiKey]
    }

    private func routes() -> [Route] {
        [
            Route("POST", "/tally/charges") { [self] request in
                guard request.headers["Authorization"] == "Bearer \(Self.apiKey)" else {
                    return EmulatorResponse.error(401, code: "unauthorized", message: "unknown API key")
                }
                guard let key = request.headers["Idempotency-Key"], !key.isEmpty else {
                    return EmulatorResponse.error(
                        400, code: "idempotency_key_missing", message: "a charge needs an Idempotency-Key")
                }
                guard let body = request.jsonObject, let amount = body.integer("amount"), amount > 0,
                    let currency = body.string("currency")
                else {
                    return EmulatorResponse.error(
                        400, code: "parameter_invalid", message: "expected {\"amount\": minor units, \"currency\"}")
                }
                let answer = charges.withLock { charges in
                    if let first = charges[key] { return first }
                    let id = "ch_\(charges.count + 1)"
                    let declined = amount <= 13
                    if !declined {
                        ledger.append(
                            provider: Self.name, kind: .capture, reference: id, amount: amount, currency: currency)
                    }
                    let charge: JSON = [
                        "id": .string(id), "amount": JSON(amount), "currency": .string(currency),
                        "status": declined ? "declined" : "succeeded",
                    ]
                    charges[key] = (declined ? 402 : 201, charge)
                    return charges[key]!
                }
                return EmulatorResponse.json(answer.status, answer.charge)
            },
            Route("GET", "/tally/charges/:key") { [self] request in
                guard request.headers["Authorization"] == "Bearer \(Self.apiKey)" else {
                    return EmulatorResponse.error(401, code: "unauthorized", message: "unknown API key")
                }
                let key = request.params["key"] ?? ""
                guard let made = charges.withLock({ $0[key] }) else {
                    return EmulatorResponse.error(404, code: "resource_missing", message: "No charge for key \(key)")
                }
                return EmulatorResponse.json(200, made.charge)
            },
        ]
    }
}
