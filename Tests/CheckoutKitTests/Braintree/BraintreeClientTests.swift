import Foundation
import GraphQL
import LoopbackHTTP
import TestSupport
import Testing

@testable import CheckoutKit

/// The Braintree client against Braintree's published schema and a scripted server written from
/// docs/protocols/braintree.md (not the project's emulator): every document validates; the wire of the client API and
/// the GraphQL API; errors[] in an HTTP 200 answer; a charge never repeated, and read back by its orderId.
@Suite struct BraintreeClientTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let schema: Schema = {
        // The emulator's copy of Braintree's published schema (braintree/graphql-api, 2025-04-29), bundled as a
        // resource.
        let url = root.appendingPathComponent("Sources/SandboxEmulator/Braintree/Schema/schema.graphql")
        do { return try Schema(sdl: try String(contentsOf: url, encoding: .utf8)) } catch { fatalError("\(error)") }
    }()

    @Test(arguments: BraintreeDocuments.all.map(\.name))
    func everyDocumentValidatesAgainstBraintreesSchema(name: String) throws {
        let document = try #require(BraintreeDocuments.all.first { $0.name == name })
        let parsed = try Parser.parse(document.text)
        #expect(Validator.validate(parsed, against: Self.schema).map(\.description) == [])
        #expect(parsed.operations.map(\.name) == [name])
        #expect(parsed.operations.first?.operation == (document.isMutation ? .mutation : .query))
    }

    /// For Scripts/check-graphql: the same documents checked with graphql-core after the tests.
    @Test func everyDocumentIsExportedForTheIndependentCheck() throws {
        let directory = Self.root.appendingPathComponent(".build/graphql-documents/braintree")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for document in BraintreeDocuments.all {
            try Data(document.text.utf8).write(to: directory.appendingPathComponent(document.name + ".graphql"))
        }
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".graphql")
        }
        #expect(Set(written) == Set(BraintreeDocuments.all.map { $0.name + ".graphql" }))
    }

    static func harness(_ server: TestServer) -> Harness {
        var harness = Harness(registry: OperationRegistry(BraintreeOperations.all))
        harness.env = [
            "BRAINTREE_CLIENT_API_URL": server.url("/bt"), "BRAINTREE_GRAPHQL_URL": server.url("/graphql"),
            "BRAINTREE_TOKENIZATION_KEY": "sandbox_abc123_merchant9", "BRAINTREE_PUBLIC_KEY": "pub-key-1",
            "BRAINTREE_PRIVATE_KEY": "private-key-secret-1",
        ]
        return harness
    }

    static func step(_ use: String, _ with: String = "{}") -> String {
        #"{ "name": "t", "steps": [ { "name": "s", "use": "\#(use)", "with": \#(with) } ] }"#
    }

    static func body(_ request: HTTPRequest) -> JSON { (try? JSON.parse(request.body)) ?? .null }

    static let transaction: JSON = [
        "id": "dHJhbnNhY3Rpb25fYWJj", "legacyId": "abc", "status": "SUBMITTED_FOR_SETTLEMENT", "orderId": "o-1",
        "amount": ["value": "10.00", "currencyCode": "USD"],
        "paymentMethodSnapshot": [
            "__typename": "CreditCardDetails", "brandCode": "VISA", "last4": "1234", "origin": ["type": "APPLE_PAY"],
        ],
    ]

    @Test func theConfigurationIsReadWithTheClientKeyAndAMismatchWarns() async throws {
        let server = try TestServer { _, _ in
            .json(
                200,
                [
                    "clientApiUrl": "http://x/client_api", "environment": "sandbox",
                    "applePay": [
                        "status": "mock", "countryCode": "US", "currencyCode": "USD",
                        "merchantIdentifier": "merchant.x",
                        "supportedNetworks": ["visa", "mastercard"],
                    ],
                ])
        }
        let harness = Self.harness(server)
        let result = try await harness.run(
            Self.step("braintree.config", #"{ "currency": "EUR", "network": "Discover" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let request = try #require(server.requests.first)
        #expect(request.target == "/bt/merchants/merchant9/client_api/v1/configuration?configVersion=3")
        #expect(request.headers["Client-Key"] == "sandbox_abc123_merchant9")
        let notes = harness.events.all.compactMap { if case .note(_, let m) = $0 { m } else { nil } }
        #expect(notes.contains { $0.contains("currency EUR is not the gateway's USD") }, "\(notes)")
        #expect(notes.contains { $0.contains("Discover is not among the gateway's supported networks") }, "\(notes)")
    }

    @Test func aChargeSendsTheDecimalAmountAndAnOrderIdWithBasicAuthAndTheVersion() async throws {
        let server = try TestServer { _, _ in
            .json(200, ["data": ["chargePaymentMethod": ["transaction": Self.transaction]]])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "fake-apple-pay-visa-nonce", "amount": "10.00" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let request = try #require(server.requests.first)
        #expect(
            request.headers["Authorization"] == "Basic "
                + Data("pub-key-1:private-key-secret-1".utf8).base64EncodedString())
        #expect(request.headers["Braintree-Version"] == "2019-01-01")
        let input = Self.body(request)["variables"]?["input"]
        #expect(input?["paymentMethodId"] == "fake-apple-pay-visa-nonce")
        #expect(input?["transaction"]?["amount"] == "10.00", "the decimal string itself")
        #expect(input?["transaction"]?["orderId"]?.stringValue?.hasPrefix("cd-") == true, "an orderId is always set")
        #expect(Self.body(request)["operationName"] == "BraintreeCharge")
    }

    @Test func errorsInAnHTTP200AnswerAreAFailureShowingLegacyCodeAndInputPath() async throws {
        let server = try TestServer { _, _ in
            .json(
                200,
                [
                    "data": ["chargePaymentMethod": .null],
                    "errors": [
                        [
                            "message": "Amount is an invalid format.",
                            "extensions": [
                                "errorClass": "VALIDATION", "legacyCode": "81503",
                                "inputPath": ["input", "transaction", "amount"],
                            ],
                        ]
                    ],
                ])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00" }"#))
        #expect(result.exitCode == .failure)
        #expect(
            result.failure?.message.contains(
                "Amount is an invalid format. (legacyCode 81503, inputPath input.transaction.amount)") == true,
            "\(result.failure?.message ?? "")")
        #expect(server.requests.count == 1, "a mutation is never repeated")
    }

    /// A literal amount is refused when the flow is read; one from a variable before the step sends anything, naming
    /// it.
    @Test func aBadAmountIsRefusedBeforeAnythingIsSent() async throws {
        let server = try TestServer { _, _ in .json(200, ["data": ["ping": "pong"]]) }
        let literal = #expect(throws: Diagnostic.self) {
            try Self.harness(server).flow(
                Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.001" }"#))
        }
        #expect(
            literal?.message.hasSuffix("$.steps[0].with.amount: 10.001 has 3 decimals, and USD has 2") == true,
            "\(literal?.message ?? "")")
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "${vars.a}" }"#),
            vars: ["a": "10.001"])
        #expect(result.exitCode == .usage)
        #expect(
            result.failure?.message
                == "--var a=10.001 has 3 decimals, and USD has 2 (step 's', argument 'amount' of braintree.charge); nothing was sent"
        )
        #expect(server.requests.isEmpty)
    }

    /// The order's transactions as a search answers them: `before` until the charge was sent (attempt 1 is the read
    /// of what a given order id already holds), `after` from then on.
    static func search(_ request: HTTPRequest, _ attempt: Int, before: [JSON], after: [JSON]) -> HTTPReply {
        .json(
            200,
            [
                "data": [
                    "search": ["transactions": ["edges": .array((attempt == 1 ? before : after).map { ["node": $0] })]]
                ]
            ])
    }

    @Test func aLostChargeIsNeverResentAndIsReadBackByItsOrderId() async throws {
        let server = try TestServer { request, attempt in
            if Self.body(request)["operationName"] == "BraintreeCharge" { return .reset }
            return Self.search(request, attempt, before: [], after: [Self.transaction])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00", "orderId": "o-1" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let operations = server.requests.map { Self.body($0)["operationName"]?.stringValue ?? "?" }
        #expect(
            operations == ["BraintreeTransactionsByOrder", "BraintreeCharge", "BraintreeTransactionsByOrder"],
            "\(operations)")
        #expect(Self.body(server.requests[2])["variables"]?["input"] == ["orderId": ["is": "o-1"]])
    }

    @Test func aChargeAnsweredWithAServerErrorIsReadBackNotReportedAsAFailure() async throws {
        let server = try TestServer { request, attempt in
            if Self.body(request)["operationName"] == "BraintreeCharge" {
                return .json(
                    200,
                    [
                        "data": ["chargePaymentMethod": .null],
                        "errors": [
                            ["message": "An unexpected error occurred", "extensions": ["errorClass": "INTERNAL"]]
                        ],
                    ])
            }
            return Self.search(request, attempt, before: [], after: [Self.transaction])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10", "orderId": "o-1" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let operations = server.requests.map { Self.body($0)["operationName"]?.stringValue ?? "?" }
        #expect(
            operations == ["BraintreeTransactionsByOrder", "BraintreeCharge", "BraintreeTransactionsByOrder"],
            "\(operations)")
        #expect(
            Self.body(server.requests[1])["variables"]?["input"]?["transaction"]?["amount"] == "10.00",
            "sent with two decimals")
    }

    static let oldDecline: JSON = {
        var declined = transaction
        if case .object(var o) = declined {
            o["status"] = "PROCESSOR_DECLINED"
            o["id"] = "dHhfb2xk"
            declined = .object(o)
        }
        return declined
    }()

    /// A reused order id's earlier decline of the same amount, there before the charge, is never taken for it.
    @Test func aReusedOrderIdsEarlierTransactionIsNotTakenForThisCharge() async throws {
        let server = try TestServer { request, attempt in
            if Self.body(request)["operationName"] == "BraintreeCharge" { return .reset }
            return Self.search(request, attempt, before: [Self.oldDecline], after: [Self.oldDecline, Self.transaction])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00", "orderId": "o-1" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        #expect(result.step("s")?.output?["transaction"]?["id"] == Self.transaction["id"])
        // And when the lost charge left nothing new, the earlier decline does not say "nothing was charged": unknown.
        let quiet = try TestServer { request, attempt in
            if Self.body(request)["operationName"] == "BraintreeCharge" { return .reset }
            return Self.search(request, attempt, before: [Self.oldDecline], after: [Self.oldDecline])
        }
        let unknown = try await Self.harness(quiet).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00", "orderId": "o-1" }"#))
        #expect(unknown.exitCode == .outcomeUnknown, "\(unknown.failure?.description ?? "")")
    }

    @Test func twoNewTransactionsOfTheAmountSettleNothing() async throws {
        var other = Self.transaction
        if case .object(var o) = other {
            o["id"] = "dHhfbmV3Mg"
            other = .object(o)
        }
        let second = other
        let server = try TestServer { request, attempt in
            if Self.body(request)["operationName"] == "BraintreeCharge" { return .reset }
            return Self.search(request, attempt, before: [], after: [second, Self.transaction])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00", "orderId": "o-1" }"#))
        #expect(result.exitCode == .outcomeUnknown, "\(result.failure?.description ?? "")")
        #expect(result.failure?.message.contains("2 transactions of 10.00") == true)
    }

    @Test func aLostChargeNotFoundIsOutcomeUnknownNamingTheLookup() async throws {
        let server = try TestServer { request, _ in
            if Self.body(request)["operationName"] == "BraintreeCharge" { return .reset }
            return .json(200, ["data": ["search": ["transactions": ["edges": []]]]])
        }
        let result = try await Self.harness(server).run(
            Self.step("braintree.charge", #"{ "nonce": "n-123456", "amount": "10.00", "orderId": "o-9" }"#))
        #expect(result.exitCode == .outcomeUnknown)
        #expect(
            result.failure?.hint?.contains("`checkout-driver braintree transaction --order-id o-9`") == true,
            "\(result.failure?.hint ?? "")")
    }

    @Test func tokenizationSendsTheTokenFilesExactBytesAndThePassKitFields() async throws {
        let directory = try temporaryDirectory()
        let server = try TestServer { _, _ in
            .json(
                201, ["applePayCards": [["nonce": "tokenized-nonce-77", "details": ["cardType": "Apple Pay - Visa"]]]])
        }
        let token =
            #"{"data":"AAAA","header":{"ephemeralPublicKey":"BBBB","publicKeyHash":"CCCC","transactionId":"0a1b2c3d"},"signature":"DDDD","version":"EC_v1"}"#
        let path = directory + "/token.json"
        try Data(token.utf8).write(to: URL(fileURLWithPath: path))
        let result = try await Self.harness(server).run(
            Self.step(
                "braintree.tokenize",
                #"{ "tokenFile": "\#(path)", "clientApiUrl": "\#(server.url("/ca"))", "paymentNetwork": "MasterCard" }"#
            ))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let request = try #require(server.requests.first)
        #expect(request.path == "/ca/v1/payment_methods/apple_payment_tokens")
        #expect(request.headers["Content-Type"] == "application/json; charset=utf-8")
        let sent = Self.body(request)["applePaymentToken"]
        #expect(sent?["paymentData"]?.stringValue == Data(token.utf8).base64EncodedString())
        #expect(sent?["transactionIdentifier"] == "0a1b2c3d" && sent?["paymentNetwork"] == "MasterCard")
        #expect(Self.body(request)["_meta"]?["sessionId"]?.stringValue != nil)
        #expect(result.step("s")?.output?["nonce"] == "tokenized-nonce-77")
    }
}

/// A refused nonce's hint says how to make a fresh one, with the command.
@Suite struct BraintreeHintTests {
    @Test func aReusedNonceNamesTheCommandThatMakesAFreshOne() {
        let hint = BraintreeClient.hint(for: "91565")
        #expect(
            hint.contains("make a fresh one")
                && hint.contains("`checkout-driver braintree apple-pay --token-file FILE"), "\(hint)")
    }
}
