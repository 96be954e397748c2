import Foundation
import LoopbackHTTP
import TestSupport
import Testing

@testable import CheckoutKit

/// The Cash App + Afterpay operations against a scripted server written from docs/protocols/cashapp-afterpay.md (not
/// the project's emulator): error bodies whatever the status, the signing data taken from the JWT's payload, the
/// customer request's body and idempotency key, the approval loop's endings, and the read-back of a lost capture.
@Suite struct CashAppClientTests {
    static func jwt(
        amount: String, redirect: String = "https://merchant.example/confirm", token: String = "002.tok"
    ) -> String {
        let header = JSON.object(["kid": "k1", "alg": "ES256", "ttl": 600]).data.base64URLEncodedString()
        let payload = JSON.object([
            "externalMerchantId": "MMI_m1", "token": .string(token),
            "amount": ["amount": .string(amount), "currency": "USD", "symbol": "$"],
            "redirectUrl": .string(redirect),
        ]).data.base64URLEncodedString()
        return "\(header).\(payload).c2lnbmF0dXJl"
    }

    struct Setup {
        let server: TestServer
        let harness: Harness
        let directory: String
    }

    static func setup(_ handler: @escaping TestServer.Handler) throws -> Setup {
        let server = try TestServer(handler)
        let directory = try temporaryDirectory()
        var harness = Harness(registry: OperationRegistry(CashAppOperations.all))
        harness.env = [
            "AFTERPAY_API_URL": server.url("/ap"), "AFTERPAY_PLUS_URL": server.url("/plus"),
            "CASHAPP_API_URL": server.url("/ca"),
            "AFTERPAY_MERCHANT_ID": "100200300", "AFTERPAY_SECRET_KEY": "merchant-secret-key-xyz",
            "CASHAPP_CLIENT_ID": "CAS-CI_AFTERPAY",
            "AFTERPAY_SHOP_MERCHANT_ID": "shop-1",
        ]
        harness.state = StateStore(path: directory + "/state.json")
        return Setup(server: server, harness: harness, directory: directory)
    }

    static func step(_ use: String, _ with: String = "{}") -> String {
        #"{ "name": "t", "steps": [ { "name": "s", "use": "\#(use)", "with": \#(with) } ] }"#
    }

    static func body(_ request: HTTPRequest) -> JSON { (try? JSON.parse(request.body)) ?? .null }

    @Test func anAfterpayErrorBodyIsAFailureEvenWithStatus200() async throws {
        let s = try Self.setup { _, _ in
            .json(
                200, ["errorCode": "invalid_token", "errorId": "e1", "message": "Token invalid", "httpStatusCode": 402])
        }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "002.tok", "flow": "server"]] }
        let result = try await s.harness.run(Self.step("cashapp.sign"))
        #expect(result.exitCode == .failure)
        #expect(result.failure?.message.contains("invalid_token") == true, "\(result.failure?.message ?? "")")
        #expect(try s.harness.state!.read()["cashapp"]?["jwt"] == nil, "nothing was recorded from an error")
    }

    @Test func aCashAppErrorsArrayIsAFailureEvenWithStatus200AndUnauthorizedIs78() async throws {
        let s = try Self.setup { request, _ in
            if request.path.hasSuffix("/requests") {
                return .json(
                    200,
                    [
                        "errors": [
                            [
                                "category": "INVALID_REQUEST_ERROR", "code": "IDEMPOTENCY_KEY_REUSED",
                                "detail": "key reused",
                            ]
                        ]
                    ])
            }
            return .json(
                401, ["errors": [["category": "AUTHENTICATION_ERROR", "code": "UNAUTHORIZED", "detail": "bad client"]]])
        }
        try s.harness.state!.update {
            $0 = [
                "cashapp": [
                    "token": "002.tok", "flow": "server", "signedAmount": 1000, "brandId": "BRAND_b",
                    "merchantId": "MMI_m",
                ]
            ]
        }
        let created = try await s.harness.run(Self.step("cashapp.request"))
        #expect(created.exitCode == .failure)
        #expect(
            created.failure?.message.contains(
                "Cash App answered 200 INVALID_REQUEST_ERROR IDEMPOTENCY_KEY_REUSED: key reused") == true,
            "\(created.failure?.message ?? "")")
        #expect(created.failure?.hint?.contains("went out with another body") == true, "mapped on the code")
        let polled = try await s.harness.run(Self.step("cashapp.poll", #"{ "request": "GRR_1" }"#))
        #expect(polled.exitCode == .configuration, "\(polled.failure?.message ?? "")")
        #expect(polled.failure?.hint?.contains("CASHAPP_CLIENT_ID") == true)
    }

    @Test func signingDataComesFromTheJWTPayloadWithTheAmountParsedExactly() async throws {
        let s = try Self.setup { _, _ in
            .json(
                200,
                [
                    "jwtToken": .string(Self.jwt(amount: "0.07", redirect: "https://payload.example/r")),
                    "redirectUrl": "https://response.example/other", "externalBrandId": "BRAND_b1",
                ])
        }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "002.tok", "flow": "server", "amount": 7]] }
        let result = try await s.harness.run(Self.step("cashapp.sign"))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let section = try #require(try s.harness.state!.read()["cashapp"])
        #expect(section["signedAmount"] == 7)
        #expect(section["redirectUri"] == "https://payload.example/r", "the payload's redirectUrl, not the response's")
        #expect(section["merchantId"] == "MMI_m1")
        #expect(section["brandId"] == "BRAND_b1")
        #expect(
            section["jwt"]?.stringValue == Self.jwt(amount: "0.07", redirect: "https://payload.example/r"),
            "kept for validate")
        let sent = try #require(s.server.requests("/plus/v2/payments/sign-payment").first)
        #expect(Self.body(sent) == ["token": "002.tok"])
        #expect(sent.headers["Authorization"] == nil, "sign-payment takes no credentials")
    }

    @Test func theCustomerRequestSendsIntegerCentsAndKeepsItsKeyForTheSameBody() async throws {
        let s = try Self.setup { request, attempt in
            .json(
                201,
                [
                    "request": [
                        "id": .string("GRR_\(attempt)"), "status": "PENDING",
                        "auth_flow_triggers": ["mobile_url": .string("https://sandbox.cash.app/approve/\(attempt)")],
                    ]
                ])
        }
        try s.harness.state!.update {
            $0 = [
                "cashapp": [
                    "token": "002.tok", "flow": "server", "signedAmount": 1999, "currency": "USD",
                    "brandId": "BRAND_b", "merchantId": "MMI_m", "redirectUri": "https://payload.example/r",
                ]
            ]
        }
        #expect(try await s.harness.run(Self.step("cashapp.request")).passed)
        #expect(try await s.harness.run(Self.step("cashapp.request")).passed)
        #expect(try await s.harness.run(Self.step("cashapp.request", #"{ "scope": "merchant" }"#)).passed)
        let sent = s.server.requests("/ca/customer-request/v1/requests").map(Self.body)
        #expect(sent.count == 3)
        let action = sent[0]["request"]?["actions"]?.arrayValue?.first
        let expected: JSON = ["type": "ONE_TIME_PAYMENT", "scope_id": "BRAND_b", "amount": 1999, "currency": "USD"]
        #expect(action == expected)
        #expect(
            String(decoding: s.server.requests("/ca/customer-request/v1/requests")[0].body, as: UTF8.self).contains(
                #""amount":1999"#),
            "an integer on the wire")
        #expect(sent[0]["request"]?["channel"] == "IN_APP")
        #expect(sent[0]["request"]?["redirect_url"] == "https://payload.example/r", "the signing data's redirectUri")
        #expect(sent[0]["idempotency_key"] == sent[1]["idempotency_key"], "the same body keeps its key")
        #expect(sent[2]["idempotency_key"] != sent[0]["idempotency_key"], "a changed body gets a new key")
        #expect(sent[2]["request"]?["actions"]?.arrayValue?.first?["scope_id"] == "MMI_m")
        #expect(
            s.server.requests("/ca/customer-request/v1/requests")[0].headers["Authorization"]
                == "Client CAS-CI_AFTERPAY")
        let links = s.harness.events.all.compactMap { if case .link(_, _, let url) = $0 { url } else { nil } }
        #expect(links.first == "https://sandbox.cash.app/approve/1")
    }

    static func pending(_ link: String) -> JSON {
        ["request": ["id": "GRR_1", "status": "PENDING", "auth_flow_triggers": ["mobile_url": .string(link)]]]
    }

    @Test func theApprovalLoopRecordsTheGrantAndShowsARefreshedLink() async throws {
        let s = try Self.setup { _, attempt in
            switch attempt {
            case 1: .json(200, Self.pending("https://cash.app/a?v=1"))
            case 2: .json(200, Self.pending("https://cash.app/a?v=2"))
            default:
                .json(
                    200,
                    [
                        "request": [
                            "id": "GRR_1", "status": "APPROVED", "customer_profile": ["id": "CST_9", "cashtag": "$x"],
                            "grants": [["id": "GRG_7", "customer_id": "CST_9", "status": "ACTIVE"]],
                        ]
                    ])
            }
        }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1"]] }
        let result = try await s.harness.run(Self.step("cashapp.poll", #"{ "interval": "10ms" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let section = try #require(try s.harness.state!.read()["cashapp"])
        #expect(section["customerId"] == "CST_9" && section["grantId"] == "GRG_7")
        let labels = s.harness.events.all.compactMap {
            if case .link(_, let label, let url) = $0 { "\(label) \(url)" } else { nil }
        }
        #expect(
            labels == [
                "approve in Cash App https://cash.app/a?v=1", "the approval link was refreshed https://cash.app/a?v=2",
            ])
        #expect(s.harness.events.polls == 2)
    }

    @Test(arguments: [("DECLINED", "declined the payment"), ("APPROVED", "without a grant")])
    func aDeclineOrAnApprovalWithoutGrantsFailsSayingWhich(status: String, says: String) async throws {
        let s = try Self.setup { _, _ in
            .json(200, ["request": ["id": "GRR_1", "status": .string(status), "grants": []]])
        }
        let result = try await s.harness.run(Self.step("cashapp.poll", #"{ "request": "GRR_1", "interval": "10ms" }"#))
        #expect(result.exitCode == .failure)
        #expect(result.failure?.message.contains(says) == true, "\(result.failure?.message ?? "")")
    }

    @Test func theApprovalTimeoutEndsTheWaitWithExit1() async throws {
        let s = try Self.setup { _, _ in .json(200, Self.pending("https://cash.app/a")) }
        let started = Date()
        let result = try await s.harness.run(
            Self.step("cashapp.poll", #"{ "request": "GRR_1", "interval": "50ms", "timeout": "300ms" }"#))
        #expect(result.exitCode == .failure)
        #expect(
            result.failure?.message.contains("no decision from the customer within 0.3s") == true,
            "\(result.failure?.message ?? "")")
        let waited = Date().timeIntervalSince(started)
        #expect(
            waited >= 0.3 && waited < 10, "it waited the whole timeout, not less and not the default 120 s: \(waited)")
        #expect(s.server.count("/ca/customer-request/v1/requests/GRR_1") >= 2, "it kept polling")
    }

    /// The customer gets the whole timeout: a decision made after the last full interval, just before the limit, is
    /// read at the limit (3 s with a 1 s interval once gave up after 2 s).
    @Test func aDecisionJustBeforeTheTimeoutIsStillRead() async throws {
        let first = Box<Date?>(nil)
        let s = try Self.setup { _, _ in
            let start = first.withLock { f -> Date in
                if f == nil { f = Date() }
                return f!
            }
            return Date().timeIntervalSince(start) < 0.5
                ? .json(200, Self.pending("https://cash.app/a"))
                : .json(
                    200,
                    [
                        "request": [
                            "id": "GRR_1", "status": "APPROVED", "customer_profile": ["id": "CST_9", "cashtag": "$x"],
                            "grants": [["id": "GRG_7", "customer_id": "CST_9", "status": "ACTIVE"]],
                        ]
                    ])
        }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1"]] }
        // Reads at 0, 0.4 and then — at the limit, 0.6 — once more: approved by then.
        let result = try await s.harness.run(Self.step("cashapp.poll", #"{ "interval": "400ms", "timeout": "600ms" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        #expect(s.server.count("/ca/customer-request/v1/requests/GRR_1") == 3)
    }

    @Test(arguments: [201, 402])
    func aDeclinedCaptureIsAFailureWhetherItComesAs201Or402(status: Int) async throws {
        let s = try Self.setup { _, _ in
            .json(status, ["id": "1001", "token": "002.tok", "status": "DECLINED", "paymentState": "CAPTURE_DECLINED"])
        }
        try s.harness.state!.update {
            $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1", "validated": true]]
        }
        let result = try await s.harness.run(Self.step("cashapp.capture"))
        #expect(result.exitCode == .failure)
        #expect(
            result.failure?.message.contains("Afterpay declined the capture") == true,
            "\(result.failure?.message ?? "")")
        let sent = try #require(s.server.requests("/ap/v2/payments/capture").first)
        #expect(Self.body(sent) == ["token": "002.tok"], "only the token: never the grant")
        #expect(
            sent.headers["Authorization"] == "Basic "
                + Data("100200300:merchant-secret-key-xyz".utf8).base64EncodedString())
        #expect(
            sent.headers["User-Agent"]?.hasPrefix("checkout-driver/") == true
                && sent.headers["User-Agent"]?.hasSuffix("Merchant/100200300") == true)
    }

    @Test func captureIsRefusedBeforeSendingWhenValidationWasSkipped() async throws {
        let s = try Self.setup { _, _ in .json(201, ["id": "1001", "status": "APPROVED"]) }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1"]] }
        let result = try await s.harness.run(Self.step("cashapp.capture"))
        #expect(result.exitCode == .failure)
        #expect(result.failure?.message.contains("has not validated") == true)
        #expect(s.server.requests.isEmpty, "nothing was sent")
    }

    @Test func aLostCaptureIsRepeatedOnItsTokenThenReadBack() async throws {
        let s = try Self.setup { request, _ in
            if request.path == "/ap/v2/payments/capture" {
                return .json(500, ["errorCode": "internal", "errorId": "x", "message": "boom", "httpStatusCode": 500])
            }
            return .json(
                200,
                [
                    "id": "1001", "token": "002.tok", "status": "APPROVED", "paymentState": "CAPTURED",
                    "originalAmount": ["amount": "10.00", "currency": "USD"],
                    "openToCaptureAmount": ["amount": "0.00", "currency": "USD"],
                ])
        }
        try s.harness.state!.update {
            $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1", "validated": true]]
        }
        let result = try await s.harness.run(Self.step("cashapp.capture"))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        #expect(s.server.count("/ap/v2/payments/capture") == 3, "idempotent on the token: the engine repeats it")
        #expect(s.server.count("/ap/v2/payments/token:002.tok") == 1, "then reads the payment back by token")
        #expect(try s.harness.state!.read()["cashapp"]?["orderId"] == "1001")
    }

    @Test func aCaptureNoReadBackCanSettleIsOutcomeUnknownWithTheCommands() async throws {
        let s = try Self.setup { request, _ in
            if request.path == "/ap/v2/payments/capture" { return .reset }
            return .json(404, ["errorCode": "not_found", "errorId": "x", "message": "none", "httpStatusCode": 404])
        }
        try s.harness.state!.update {
            $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1", "validated": true]]
        }
        let result = try await s.harness.run(Self.step("cashapp.capture"))
        #expect(result.exitCode == .outcomeUnknown, "\(result.failure?.description ?? "")")
        #expect(result.failure?.hint?.contains("`checkout-driver cashapp capture`") == true)
        #expect(result.failure?.hint?.contains("`checkout-driver cashapp payment`") == true)
    }

    @Test func aFullDeferredCaptureWhoseAnswerIsLostIsReadBackAsDone() async throws {
        let order: JSON = [
            "id": "1001", "status": "APPROVED", "paymentState": "AUTH_APPROVED",
            "originalAmount": ["amount": "25.00", "currency": "USD"],
            "openToCaptureAmount": ["amount": "25.00", "currency": "USD"],
        ]
        let captured: JSON = [
            "id": "1001", "status": "APPROVED", "paymentState": "CAPTURED",
            "originalAmount": ["amount": "25.00", "currency": "USD"],
            "openToCaptureAmount": ["amount": "0.00", "currency": "USD"],
        ]
        let s = try Self.setup { request, attempt in
            if request.path == "/ap/v2/payments/1001/capture" { return .reset }
            return .json(200, attempt == 1 ? order : captured)
        }
        try s.harness.state!.update {
            $0 = [
                "cashapp": [
                    "token": "002.tok", "flow": "server", "orderId": "1001", "paymentState": "AUTH_APPROVED",
                    "validated": true,
                ]
            ]
        }
        let result = try await s.harness.run(Self.step("cashapp.capture"))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let sent = Self.body(try #require(s.server.requests("/ap/v2/payments/1001/capture").first))
        #expect(sent["amount"] == ["amount": "25.00", "currency": "USD"] && sent["requestId"]?.stringValue != nil)
        #expect(s.server.count("/ap/v2/payments/1001/capture") == 3, "repeated under its requestId")
        #expect(try s.harness.state!.read()["cashapp"]?["paymentState"] == "CAPTURED")
    }

    @Test func aRefusedAuthForgetsItsRequestIDSoTheNextOneIsNew() async throws {
        let s = try Self.setup { _, attempt in
            attempt == 1
                ? .json(
                    412,
                    [
                        "errorCode": "invalid_order_transaction_status", "errorId": "e", "message": "no",
                        "httpStatusCode": 412,
                    ])
                : .json(201, ["id": "1001", "status": "APPROVED", "paymentState": "AUTH_APPROVED"])
        }
        try s.harness.state!.update {
            $0 = ["cashapp": ["token": "002.tok", "flow": "server", "requestId": "GRR_1", "validated": true]]
        }
        #expect(try await s.harness.run(Self.step("cashapp.auth")).exitCode == .failure)
        #expect(try await s.harness.run(Self.step("cashapp.auth")).passed)
        let ids = s.server.requests("/ap/v2/payments/auth").map { Self.body($0)["requestId"] }
        #expect(ids.count == 2 && ids[0] != ids[1], "\(ids)")
    }

    @Test func theButtonConfirmSendsTheGrantsCustomer() async throws {
        let s = try Self.setup { request, _ in
            .json(
                200,
                [
                    "request": [
                        "id": "GRR_1", "status": "APPROVED", "customer_profile": ["id": "CST_profile"],
                        "grants": [["id": "GRG_1", "customer_id": "CST_grant", "status": "ACTIVE"]],
                    ]
                ])
        }
        try s.harness.state!.update { $0 = ["cashapp": ["token": "003.tok", "flow": "button", "requestId": "GRR_1"]] }
        #expect(try await s.harness.run(Self.step("cashapp.poll", #"{ "interval": "10ms" }"#)).passed)
        #expect(
            try s.harness.state!.read()["cashapp"]?["customerId"] == "CST_grant", "v3 takes the grant's customer_id")
    }

    @Test func theButtonConfirmShowsTheCardMaskedAndWritesItOnlyToANewFile() async throws {
        let s = try Self.setup { _, _ in
            .json(
                200,
                [
                    "paymentDetails": [
                        "virtualCard": [
                            "cardType": "VISA", "cardNumber": "4111111111114321", "cvc": "987", "expiry": "2029-12",
                        ]
                    ],
                    "cardValidUntil": "2099-01-01T00:00:00.123456789Z",
                ])
        }
        try s.harness.state!.update {
            $0 = [
                "cashapp": [
                    "token": "003.tok", "flow": "button", "singleUseCardToken": "sut-1", "jwt": "a.b.c",
                    "customerId": "CST_1", "grantId": "GRG_1",
                ]
            ]
        }
        let out = s.directory + "/card.json"
        let result = try await s.harness.run(Self.step("cashapp.confirm", #"{ "cardOut": "\#(out)" }"#))
        #expect(result.passed, "\(result.failure?.description ?? "")")
        let card = try #require(result.step("s")?.output?["card"])
        #expect(card["last4"] == "4321" && card["number"] == "•••• 4321" && card["type"] == "VISA")
        // The card names the file it was written to, whose random directory name may hold any digits, and the seconds
        // left before its deadline, a countdown that does: look past both (the members, not their text, which the
        // serializer may have escaped).
        let shown = JSON.object(
            (card.objectValue ?? [:]).filter { $0.value.stringValue != out && $0.key != "secondsLeft" }
        ).serialized()
        #expect(!shown.contains("4111111111114321") && !shown.contains("987"), "\(shown)")
        let written = try String(contentsOfFile: out, encoding: .utf8)
        #expect(written.contains("4111111111114321") && written.contains("987"))
        let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let sent = Self.body(try #require(s.server.requests("/plus/v3/button/confirm").first))
        #expect(sent["cashAppPspInfo"] == ["externalCustomerId": "CST_1", "externalGrantId": "GRG_1", "jwt": "a.b.c"])
        // An existing file is refused before anything is sent.
        let again = try await s.harness.run(Self.step("cashapp.confirm", #"{ "cardOut": "\#(out)" }"#))
        #expect(again.exitCode == .usage)
        #expect(s.server.count("/plus/v3/button/confirm") == 1)
    }

    /// A confirm after the button's confirmMustBeCalledBefore is refused before anything is sent; one before it goes.
    @Test func aConfirmPastTheButtonsDeadlineIsRefusedBeforeSending() async throws {
        let s = try Self.setup { _, _ in
            .json(
                200,
                [
                    "paymentDetails": [
                        "virtualCard": [
                            "cardType": "VISA", "cardNumber": "4111111111114321", "cvc": "987", "expiry": "2029-12",
                        ]
                    ],
                    "cardValidUntil": "2099-01-01T00:00:00.123456789Z",
                ])
        }
        let state: (String) -> JSON = { before in
            [
                "cashapp": [
                    "token": "003.tok", "flow": "button", "singleUseCardToken": "sut-1", "jwt": "a.b.c",
                    "customerId": "CST_1",
                    "grantId": "GRG_1", "confirmBefore": .string(before),
                ]
            ]
        }
        try s.harness.state!.update { $0 = state("2020-01-01T00:00:00.000000000Z") }
        let late = try await s.harness.run(Self.step("cashapp.confirm", "{}"))
        #expect(late.exitCode == .failure)
        #expect(
            late.failure?.message.contains(
                "can no longer be confirmed: its confirmMustBeCalledBefore, 2020-01-01T00:00:00.000000000Z, has passed")
                == true,
            "\(String(describing: late.failure))")
        #expect(late.failure?.hint?.contains("cashapp pay --flow button") == true)
        #expect(s.server.count("/plus/v3/button/confirm") == 0, "nothing was sent")
        try s.harness.state!.update { $0 = state("2099-01-01T00:00:00.000000000Z") }
        let inTime = try await s.harness.run(Self.step("cashapp.confirm", "{}"))
        #expect(inTime.passed, "\(String(describing: inTime.failure))")
        #expect(s.server.count("/plus/v3/button/confirm") == 1)
    }
}
