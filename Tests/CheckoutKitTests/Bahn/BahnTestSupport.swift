import Crypto
import Foundation
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutKit

/// One Bahn test's world: a real in-process emulator, a state file in a fresh directory, and flows run through
/// the real `FlowRunner` over the real `CurlTransport`, configured the way `--env` configures a sandbox.
final class BahnRig: Sendable {
    let sandbox: SandboxEmulatorHandle
    let directory: String
    let state: StateStore
    let events = EventLog()

    var emulator: Emulator { sandbox.emulator }

    init(faults: String = "") throws {
        sandbox = try SandboxEmulatorHandle(faults: faults)
        directory = try temporaryDirectory()
        state = StateStore(path: directory + "/state.json")
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    static let signer = try! PaymentTokenSigner(
        leafPEM: TestCredentials.applePayLeafCertificatePEM,
        leafKeyPEM: TestCredentials.applePayLeafPrivateKeyPEM,
        intermediatePEMs: [TestCredentials.applePayIntermediateCertificatePEM])
    static let recipient = try! P256PublicKey(pem: TestCredentials.paymentProcessingPublicKeyPEM)

    static let registry: OperationRegistry = {
        var registry = OperationRegistry(BahnOperations.all)
        registry.register(
            ApplePayOperations.makeToken(
                keys: { (signer, recipient) },
                merchantIdentifier: TestCredentials.merchantIdentifier))
        return registry
    }()

    var env: [String: String] {
        [
            "BAHN_API_URL": emulator.baseURL,
            "BAHN_API_KEY": TestCredentials.bahnAPIKey,
            "BAHN_SIGNING_KEY": TestCredentials.bahnClientPrivateKeyPEM,
            "BAHN_KEY_ID": TestCredentials.bahnKeyID,
            "BAHN_WEBHOOK_SECRET": TestCredentials.bahnWebhookSecret,
        ]
    }

    /// A runner; `env` entries override the defaults (an empty value unsets one).
    func runner(
        env overrides: [String: String] = [:], state: StateStore? = nil, services: RunServices = .init(),
        requestTimeout: Double = 5, client: any HTTPClient = CurlTransport(options: .direct)
    ) -> FlowRunner {
        let values = env.merging(overrides) { $1 }
        let configuration = Configuration(environment: "sandbox", kind: .sandbox, values: values)
        return FlowRunner(
            client: client, registry: Self.registry,
            settings: RunSettings(
                environment: "sandbox", requestTimeout: requestTimeout,
                retry: RetryPolicy(attempts: 3, interval: 0.05, backoff: 1, jitter: 0)),
            configuration: configuration, state: state ?? self.state,
            redactor: Redactor(secrets: configuration.secretValues), services: services, events: events.sink)
    }

    /// Runs a flow made of `steps` (a JSON array's contents).
    func run(
        _ steps: String, env overrides: [String: String] = [:], state: StateStore? = nil,
        services: RunServices = .init(), requestTimeout: Double = 5,
        client: any HTTPClient = CurlTransport(options: .direct)
    ) async throws -> FlowResult {
        let json = #"{"name":"bahn-test","steps":[\#(steps)]}"#
        let flow = try FlowFile.decode(Data(json.utf8), source: "test.json", registry: Self.registry)
        return await runner(
            env: overrides, state: state, services: services, requestTimeout: requestTimeout, client: client
        ).run(flow)
    }

    /// The notes operations made, in order.
    var notes: [String] { events.all.compactMap { if case .note(_, let m) = $0 { m } else { nil } } }

    /// The ledger's movements for one intent.
    func movements(_ intent: String) -> [Ledger.Kind] {
        emulator.ledger.entries().filter { $0.reference == intent }.map(\.kind)
    }

    /// A fresh token made with the emulator's test PKI, written to a file in the test's directory.
    func makeToken(amount: Int, currency: String = "704") throws -> (path: String, token: MadeToken) {
        let token = try PaymentTokenMaker.make(
            PaymentTokenRequest(
                amount: amount, currencyNumeric: currency, merchantIdentifier: TestCredentials.merchantIdentifier),
            recipient: Self.recipient, signer: Self.signer)
        return (try write(token.bytes), token)
    }

    /// `bytes` in a new file in the test's directory.
    func write(_ bytes: Data) throws -> String {
        let path = directory + "/token-\(UUID().uuidString).json"
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every request the emulator received on Bahn's API, in order (its control routes aside).
    var bahnRequests: [HTTPRequest] { emulator.receivedRequests().filter { $0.path.hasPrefix("/api/") } }

    func requests(_ method: String, suffix: String) -> [HTTPRequest] {
        bahnRequests.filter { $0.method == method && $0.path.hasSuffix(suffix) }
    }

    var createRequests: [HTTPRequest] {
        bahnRequests.filter { $0.method == "POST" && $0.path == "/api/payment_intents" }
    }
    var confirmRequests: [HTTPRequest] { requests("POST", suffix: "/confirm") }

    /// The state file as it is on disk, parsed independently of `StateStore`.
    func stateFile() throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: state.path))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The steps that make a token, create an intent for `order` and confirm it by order id.
    static func paySteps(amount: Int = 8000, order: String, confirmExtra: String = "") -> String {
        #"""
        {"name":"make-token","use":"applepay.makeToken","with":{"amount":\#(amount),"currency":"VND"},
         "capture":{"token_file":"path","txid":"transactionId"}},
        {"name":"create","use":"bahn.createIntent",
         "with":{"amount":\#(amount),"currency":"704","orderId":"\#(order)","description":"Order #\#(order)"},
         "capture":{"intent":"payment_intent.id"}},
        {"name":"confirm","use":"bahn.confirm","with":{"orderId":"\#(order)","tokenFile":"${vars.token_file}"\#(confirmExtra)}}
        """#
    }
}

/// A compact JWS as received, taken apart without any of the driver's code.
struct ReceivedJWS {
    let parts: [String]
    let header: [String: Any]
    let payload: Data
    let signature: Data

    var signingInput: Data { Data((parts[0] + "." + parts[1]).utf8) }
    var payloadObject: [String: Any] { ((try? JSONSerialization.jsonObject(with: payload)) as? [String: Any]) ?? [:] }

    init(_ body: Data) throws {
        let text = try #require(String(data: body, encoding: .utf8))
        parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3, "a compact JWS has three parts: \(text.prefix(80))")
        for part in parts {
            // Unpadded base64url: no padding, no characters of the standard alphabet.
            #expect(
                !part.contains("=") && !part.contains("+") && !part.contains("/"),
                "not unpadded base64url: \(part.prefix(40))")
        }
        let headerBytes = try #require(Data(base64URLEncoded: parts[0]))
        header = try #require(try JSONSerialization.jsonObject(with: headerBytes) as? [String: Any])
        payload = try #require(Data(base64URLEncoded: parts[1]))
        signature = try #require(Data(base64URLEncoded: parts[2]))
    }

    /// `payment_method_data.apple_pay.token` of a confirm body, as the UTF-8 bytes Bahn would verify.
    func appleToken() throws -> Data {
        let methodData = try #require(payloadObject["payment_method_data"] as? [String: Any])
        let applePay = try #require(methodData["apple_pay"] as? [String: Any])
        let token = try #require(applePay["token"] as? String)
        return Data(token.utf8)
    }
}

extension Diagnostic {
    /// Message and hint together, for "names X" checks.
    var text: String { message + "\n" + (hint ?? "") }
}
