import Foundation
import LoopbackHTTP
import Synchronization
import Testing

@testable import SandboxEmulator

/// Braintree's GraphQL API over real HTTP, served by the GraphQL engine from the published schema: authentication,
/// the version header, the payment mutations with the ledger, the fake nonces and magic amounts with Braintree's
/// error shapes, search and node, client tokens, and validation.
@Suite struct BraintreeGraphQLTests {
    typealias Client = BraintreeTestClient

    /// Wrong or missing API keys are HTTP 200 like every GraphQL answer, with an AUTHENTICATION error and no data.
    @Test func wrongOrMissingAPIKeysAreAnAuthenticationError() throws {
        try withBraintree { bt in
            let wrong =
                "Basic " + Data("\(TestCredentials.braintreePublicKey):not-the-private-key".utf8).base64EncodedString()
            for headers in [
                [("Braintree-Version", "2019-01-01")], [("Authorization", wrong), ("Braintree-Version", "2019-01-01")],
            ] {
                let response = try bt.post("{ ping }", headers: headers)
                #expect(response.status == 200)
                let error = Client.firstError(response.json)
                #expect(
                    error.message == "Authentication failed" && error.errorClass == "AUTHENTICATION", "\(response.json)"
                )
                #expect(response.json["data"] is NSNull)
            }
        }
    }

    @Test func theVersionHeaderIsRequired() throws {
        try withBraintree { bt in
            for headers in [
                [("Authorization", Client.basicAuth)],
                [("Authorization", Client.basicAuth), ("Braintree-Version", "yesterday")],
            ] {
                let response = try bt.post("{ ping }", headers: headers)
                #expect(response.status == 200)
                let json = response.json
                #expect(Client.firstError(json).message?.hasPrefix("Braintree-Version header") == true)
                #expect(Client.firstError(json).errorClass == "VALIDATION")
                #expect(json["data"] is NSNull)
                #expect((json["extensions"] as? [String: Any])?["requestId"] is String)
            }
        }
    }

    @Test func pingAnswersPong() throws {
        try withBraintree { bt in
            let response = try bt.graphQL("query Ping { ping }")
            #expect(Client.data(response)["ping"] as? String == "pong")
            #expect(response["errors"] == nil)
            let requestID = try #require((response["extensions"] as? [String: Any])?["requestId"] as? String)
            #expect(UUID(uuidString: requestID) != nil)
        }
    }

    @Test func aChargeIsSubmittedForSettlementAndRecordedAsACapture() throws {
        try withBraintree { bt in
            let t = try bt.transaction(of: try bt.pay("fake-apple-pay-visa-nonce", "10.00", orderID: "order-1"))
            #expect(t["status"] as? String == "SUBMITTED_FOR_SETTLEMENT")
            let amount = try #require(t["amount"] as? [String: Any])
            #expect(amount["value"] as? String == "10.00" && amount["currencyCode"] as? String == "USD")
            let legacy = try #require(t["legacyId"] as? String)
            #expect(legacy.count == 8 && legacy.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) })
            let id = try #require(t["id"] as? String)
            #expect(id.hasPrefix("dHJhbnNhY3Rpb25f"))
            let padded = id + String(repeating: "=", count: (4 - id.count % 4) % 4)
            #expect(Data(base64Encoded: padded).map { String(decoding: $0, as: UTF8.self) } == "transaction_" + legacy)
            #expect(
                t["orderId"] as? String == "order-1"
                    && t["merchantAccountId"] as? String == BraintreeRules.merchantAccountID)
            // The schema's Timestamp: ISO 8601 with microsecond precision, in UTC.
            let createdAt = try #require(t["createdAt"] as? String)
            #expect(createdAt.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/) != nil, "\(createdAt)")
            let snapshot = try #require(t["paymentMethodSnapshot"] as? [String: Any])
            #expect(
                snapshot["__typename"] as? String == "CreditCardDetails" && snapshot["brandCode"] as? String == "VISA")
            #expect(snapshot["last4"] as? String == "1111")
            let ledger = bt.ledger()
            #expect(ledger.count == 1)
            #expect(
                ledger.first.map { "\($0.kind.rawValue) \($0.reference) \($0.amount) \($0.currency)" }
                    == "capture \(id) 1000 USD")
        }
    }

    @Test func anAuthorizationIsCapturedOnceForAtMostItsAmount() throws {
        try withBraintree { bt in
            let authorized = try bt.authorized("10.00")
            #expect(authorized["status"] as? String == "AUTHORIZED")
            let id = try #require(authorized["id"] as? String)
            #expect(bt.ledger().map(\.kind) == [.authorization])

            let over = try bt.capture(id, amount: "10.01")
            #expect(Client.firstError(over).legacyCode == "91522")
            #expect(Client.firstError(over).inputPath == ["input", "transaction", "amount"])
            let captured = try bt.transaction(of: try bt.capture(id, amount: "6.00"))
            #expect(captured["status"] as? String == "SUBMITTED_FOR_SETTLEMENT")
            #expect((captured["amount"] as? [String: Any])?["value"] as? String == "6.00")
            #expect(
                bt.ledger().map { [$0.kind.rawValue, String($0.amount), $0.reference] } == [
                    ["authorization", "1000", id], ["capture", "600", id],
                ])

            let again = try bt.capture(id)
            #expect(Client.firstError(again).legacyCode == "91507")
            #expect(Client.firstError(again).message == BraintreeRules.cannotSubmitMessage)
            #expect(bt.ledger().count == 2)

            let unknown = try bt.capture(BraintreeRules.graphQLID(type: "transaction", legacyID: "zzzzzzzz"))
            #expect(Client.firstError(unknown).errorClass == "NOT_FOUND")
            #expect((Client.data(unknown)["captureTransaction"]) is NSNull)

            // The legacy id names the transaction too; no amount captures all of it.
            let other = try bt.authorized("7.50")
            let byLegacy = try bt.transaction(of: try bt.capture(try #require(other["legacyId"] as? String)))
            #expect((byLegacy["amount"] as? [String: Any])?["value"] as? String == "7.50")
            #expect(bt.ledger().last.map { "\($0.kind.rawValue) \($0.amount)" } == "capture 750")
        }
    }

    @Test func aVoidReversesAnAuthorizationOrACharge() throws {
        try withBraintree { bt in
            let authorized = try #require(try bt.authorized("20.00")["id"] as? String)
            let voided = try bt.reverse(authorized)
            let reversal = try #require(
                (Client.data(voided)["reverseTransaction"] as? [String: Any])?["reversal"] as? [String: Any])
            #expect(reversal["__typename"] as? String == "Transaction" && reversal["status"] as? String == "VOIDED")
            #expect(Client.firstError(try bt.reverse(authorized)).legacyCode == "91504")

            let charged = try #require(
                try bt.transaction(of: try bt.pay("fake-apple-pay-visa-nonce", "5.00"))["id"] as? String)
            #expect(
                ((Client.data(try bt.reverse(charged))["reverseTransaction"] as? [String: Any])?["reversal"]
                    as? [String: Any])?["status"] as? String == "VOIDED")
            #expect(
                bt.ledger().map { "\($0.kind.rawValue) \($0.amount)" } == [
                    "authorization 2000", "void 2000", "capture 500", "void 500",
                ])

            _ = try bt.pay("fake-apple-pay-visa-nonce", "2000.00", orderID: "declined-void")
            let declined = try #require(try bt.search(orderID: "declined-void").first?["id"] as? String)
            let refused = try bt.reverse(declined)
            #expect(Client.firstError(refused).legacyCode == "91504")
            #expect(Client.firstError(refused).message == BraintreeRules.cannotVoidMessage)
        }
    }

    @Test func theFakeNoncesAreReusableAndNameTheirCards() throws {
        try withBraintree { bt in
            let expected = [
                "fake-apple-pay-visa-nonce": "VISA", "fake-apple-pay-mastercard-nonce": "MASTERCARD",
                "fake-apple-pay-amex-nonce": "AMERICAN_EXPRESS",
            ]
            for (nonce, brand) in expected.sorted(by: { $0.key < $1.key }) {
                for _ in 0..<2 {
                    let t = try bt.transaction(of: try bt.pay(nonce, "1.00"))
                    #expect((t["paymentMethodSnapshot"] as? [String: Any])?["brandCode"] as? String == brand)
                }
            }
            #expect(bt.ledger().count == 6)
            let unknown = try bt.pay("fake-valid-nonce", "1.00")
            #expect(Client.firstError(unknown).legacyCode == "91565")
        }
    }

    @Test(arguments: [
        ("2000.00", "PROCESSOR_DECLINED", "2000", "Do Not Honor"),
        ("2999.99", "PROCESSOR_DECLINED", "2999", "Processor Declined"),
        ("3000.00", "FAILED", "3000", "Processor network unavailable - try again"),
        ("3000.99", "FAILED", "3000", "Processor network unavailable - try again"),
        ("5001.00", "GATEWAY_REJECTED", "5001", "Gateway rejected: application_incomplete"),
    ])
    func theMagicAmountsRefuseWithBraintreesErrorsAndKeepTheTransaction(
        _ amount: String, _ status: String, _ code: String, _ message: String
    ) throws {
        try withBraintree { bt in
            for authorize in [false, true] {
                let order = "magic-\(amount)-\(authorize)"
                let response = try bt.pay("fake-apple-pay-visa-nonce", amount, orderID: order, authorize: authorize)
                let field = authorize ? "authorizePaymentMethod" : "chargePaymentMethod"
                #expect(Client.data(response)[field] is NSNull)
                let error = Client.firstError(response)
                #expect(error.message == message && error.legacyCode == code && error.errorClass == "VALIDATION")
                #expect(Client.errors(response).first?["path"] as? [String] == [field])
                let found = try bt.search(orderID: order)
                #expect(found.map { $0["status"] as? String } == [status])
                #expect((found.first?["amount"] as? [String: Any])?["value"] as? String == amount)
            }
            #expect(bt.ledger().isEmpty, "nothing moved")
        }
    }

    @Test func amountsJustOutsideTheMagicRangesAreApproved() throws {
        try withBraintree { bt in
            for amount in ["1999.99", "3001.00", "5000.99", "5001.01"] {
                let t = try bt.transaction(of: try bt.pay("fake-apple-pay-visa-nonce", amount))
                #expect(t["status"] as? String == "SUBMITTED_FOR_SETTLEMENT", "\(amount)")
            }
        }
    }

    @Test func aTokenizedNonceIsSingleUse() throws {
        try withBraintree { bt in
            let nonce = try bt.nonce()
            #expect(
                try bt.transaction(of: try bt.pay(nonce, "10.00"))["status"] as? String == "SUBMITTED_FOR_SETTLEMENT")
            let again = try bt.pay(nonce, "10.00")
            let error = Client.firstError(again)
            #expect(error.message == "Unknown or expired payment_method_nonce." && error.legacyCode == "91565")
            #expect(error.inputPath == ["input", "paymentMethodId"])
            #expect(Client.data(again)["chargePaymentMethod"] is NSNull)
            #expect(bt.ledger().count == 1)
            // A declined charge used its nonce too (the transaction exists).
            let declinedNonce = try bt.nonce()
            _ = try bt.pay(declinedNonce, "2000.00")
            #expect(Client.firstError(try bt.pay(declinedNonce, "10.00")).legacyCode == "91565")
        }
    }

    @Test func racingChargesOfOneNonceAndRacingCapturesMoveMoneyOnce() throws {
        try withBraintree { bt in
            let nonce = try bt.nonce()
            let charged = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let response = try? bt.post(
                    Client.charge, ["input": ["paymentMethodId": nonce, "transaction": ["amount": "10.00"]]])
                if Client.data(response?.json ?? [:])["chargePaymentMethod"] is [String: Any] {
                    charged.withLock { $0 += 1 }
                }
            }
            #expect(charged.withLock { $0 } == 1)

            let id = try #require(try bt.authorized("10.00")["id"] as? String)
            let captured = Mutex(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let response = try? bt.post(Client.capture, ["input": ["transactionId": id]])
                if Client.data(response?.json ?? [:])["captureTransaction"] is [String: Any] {
                    captured.withLock { $0 += 1 }
                }
            }
            #expect(captured.withLock { $0 } == 1)
            #expect(bt.ledger().map(\.kind) == [.capture, .authorization, .capture])
        }
    }

    @Test func aNonceInAnotherCurrencyIsRefusedButItsAmountMayDiffer() throws {
        try withBraintree { bt in
            let euros = try bt.nonce(amount: 1000, currency: "978")
            let refused = try bt.pay(euros, "10.00")
            #expect(Client.firstError(refused).legacyCode == BraintreeRules.Code.instrumentNotSupported)
            #expect(bt.ledger().isEmpty)
            let dollars = try bt.nonce(amount: 1000, currency: "840")
            #expect(
                try bt.transaction(of: try bt.pay(dollars, "25.00"))["status"] as? String == "SUBMITTED_FOR_SETTLEMENT")
        }
    }

    @Test func aBadAmountIsRefusedAtItsInputPathAndSpendsNoNonce() throws {
        try withBraintree { bt in
            let nonce = try bt.nonce()
            for bad: Any in ["10.5", "10.005", "0.00", "0", "-1.00", "1,00", "ten", "", 10.5] {
                let response = try bt.pay(nonce, bad)
                let error = Client.firstError(response)
                #expect(error.legacyCode == "81503", "\(bad)")
                #expect(error.inputPath == ["input", "transaction", "amount"], "\(bad)")
            }
            #expect(bt.ledger().isEmpty)
            // Whole and three-decimal amounts are Amounts too; the nonce is still good.
            #expect(
                (try bt.transaction(of: try bt.pay(nonce, "10.000"))["amount"] as? [String: Any])?["value"] as? String
                    == "10.00")
            #expect(
                (try bt.transaction(of: try bt.pay("fake-apple-pay-visa-nonce", "12"))["amount"] as? [String: Any])?[
                    "value"] as? String == "12.00")
            #expect(bt.ledger().map(\.amount) == [1000, 1200])
        }
    }

    @Test func searchFindsTransactionsByOrderIDNewestFirst() throws {
        try withBraintree { bt in
            let first = try bt.transaction(of: try bt.pay("fake-apple-pay-visa-nonce", "1.00", orderID: "shared"))
            _ = try bt.pay("fake-apple-pay-visa-nonce", "2.00", orderID: "other")
            let second = try bt.transaction(
                of: try bt.pay("fake-apple-pay-visa-nonce", "3.00", orderID: "shared", authorize: true))
            let found = try bt.search(orderID: "shared")
            #expect(found.map { $0["id"] as? String } == [second["id"] as? String, first["id"] as? String])
            #expect(try bt.search(orderID: "nobody").isEmpty)
            let page = try bt.graphQL(Client.search, ["input": ["orderId": ["is": "shared"]], "first": 1])
            let connection = (Client.data(page)["search"] as? [String: Any])?["transactions"] as? [String: Any]
            #expect((connection?["edges"] as? [Any])?.count == 1)
            #expect((connection?["pageInfo"] as? [String: Any])?["hasNextPage"] as? Bool == true)

            let unsupported = try bt.graphQL(Client.search, ["input": ["status": ["is": "VOIDED"]]])
            #expect(Client.firstError(unsupported).errorClass == "VALIDATION")
            #expect(Client.firstError(unsupported).message?.contains("not supported by the emulator") == true)
            let contains = try bt.graphQL(Client.search, ["input": ["orderId": ["contains": "sha"]]])
            #expect(Client.firstError(contains).inputPath == ["input", "orderId"])
        }
    }

    @Test func nodeReadsATransaction() throws {
        try withBraintree { bt in
            let charged = try bt.transaction(
                of: try bt.pay("fake-apple-pay-mastercard-nonce", "4.20", orderID: "read-me"))
            let query =
                "query Read($id: ID!) { node(id: $id) { __typename ... on Transaction { ...TransactionParts } } }\n"
                + Client.transactionParts
            let read = try #require(
                Client.data(try bt.graphQL(query, ["id": charged["id"] as? String ?? ""]))["node"] as? [String: Any])
            #expect(read["__typename"] as? String == "Transaction")
            #expect(read["orderId"] as? String == "read-me" && read["status"] as? String == "SUBMITTED_FOR_SETTLEMENT")
            #expect(((read["paymentMethodSnapshot"] as? [String: Any])?["last4"]) as? String == "4444")
            let missing = try bt.graphQL(
                query, ["id": BraintreeRules.graphQLID(type: "transaction", legacyID: "nothere1")])
            #expect(Client.firstError(missing).errorClass == "NOT_FOUND")
        }
    }

    @Test func aClientTokenNamesAFreshFingerprintAndMayBeRefusedForAnUnknownAccount() throws {
        try withBraintree { bt in
            let one = try #require(try bt.createClientToken()["authorizationFingerprint"] as? String)
            let two = try #require(try bt.createClientToken()["authorizationFingerprint"] as? String)
            #expect(one != two)
            let refused = try bt.graphQL(Client.clientToken, ["input": ["clientToken": ["merchantAccountId": "nope"]]])
            #expect(Client.firstError(refused).legacyCode == "92807")
            #expect(Client.firstError(refused).inputPath == ["input", "clientToken", "merchantAccountId"])
        }
    }

    @Test func anInvalidDocumentGetsValidationErrorsAndRunsNothing() throws {
        try withBraintree { bt in
            let unknownField = try bt.graphQL(
                "mutation Charge($input: ChargePaymentMethodInput!) { chargePaymentMethod(input: $input) { transaction { id colour } } }",
                ["input": ["paymentMethodId": "fake-apple-pay-visa-nonce", "transaction": ["amount": "10.00"]]])
            let error = Client.firstError(unknownField)
            #expect(error.message == #"Cannot query field "colour" on type "Transaction"."#)
            #expect(error.errorClass == "VALIDATION")
            #expect(Client.errors(unknownField).first?["locations"] is [Any])
            #expect(unknownField["data"] is NSNull)

            let unknownInput = try bt.graphQL(
                Client.charge,
                [
                    "input": [
                        "paymentMethodId": "fake-apple-pay-visa-nonce",
                        "transaction": ["amount": "10.00", "colour": "red"],
                    ]
                ])
            #expect(
                Client.firstError(unknownInput).message?.contains(
                    #"Field "colour" is not defined by type "TransactionInput"."#) == true)
            #expect(Client.firstError(unknownInput).errorClass == "VALIDATION")
            #expect(bt.ledger().isEmpty, "nothing was charged")
        }
    }

    @Test func fieldsTheEmulatorDoesNotImplementAnswerNotImplemented() throws {
        try withBraintree { bt in
            let response = try bt.graphQL("query { viewer { id } ping }")
            #expect(Client.firstError(response).errorClass == "NOT_IMPLEMENTED")
            #expect(Client.data(response)["viewer"] is NSNull && Client.data(response)["ping"] as? String == "pong")
        }
    }
}

/// The pieces of the rules that the HTTP tests reach only in part.
@Suite struct BraintreeRulesTests {
    @Test func amountsAreReadDigitByDigitIntoCents() {
        #expect(BraintreeRules.cents(.string("10.00")) == 1000)
        #expect(BraintreeRules.cents(.string("0.01")) == 1)
        #expect(BraintreeRules.cents(.string("10.120")) == 1012)
        #expect(BraintreeRules.cents(.string("7")) == 700)
        #expect(BraintreeRules.cents(.int(7)) == 700)
        for bad in ["10.1", "10.121", "0", "0.00", ".50", "10.", "1e3", "+1.00"] {
            #expect(BraintreeRules.cents(.string(bad)) == nil, "\(bad)")
        }
        #expect(BraintreeRules.cents(.float(10.0)) == nil)
    }

    @Test func theMagicRangesEndWhereTheDocumentsSay() {
        #expect(BraintreeRules.outcome(forCents: 199_999) == .approved)
        #expect(BraintreeRules.outcome(forCents: 200_000) == .processorDeclined(code: 2000))
        #expect(BraintreeRules.outcome(forCents: 299_999) == .processorDeclined(code: 2999))
        #expect(BraintreeRules.outcome(forCents: 300_000) == .failed)
        #expect(BraintreeRules.outcome(forCents: 300_099) == .failed)
        #expect(BraintreeRules.outcome(forCents: 300_100) == .approved)
        #expect(BraintreeRules.outcome(forCents: 500_100) == .gatewayRejected)
        #expect(BraintreeRules.outcome(forCents: 500_101) == .approved)
    }

    @Test func cardNetworksComeFromTheDPAN() {
        #expect(BraintreeRules.Card.Network(pan: "4817499999994242") == .visa)
        #expect(BraintreeRules.Card.Network(pan: "5413330089010442") == .mastercard)
        #expect(BraintreeRules.Card.Network(pan: "2221000000000009") == .mastercard)
        #expect(BraintreeRules.Card.Network(pan: "378282246310005") == .amex)
        #expect(BraintreeRules.Card.Network(pan: "6011000990139424") == .discover)
        #expect(BraintreeRules.Card.Network(pan: "3530111333300000") == nil)
    }

    @Test func graphQLIDsRoundTrip() {
        let id = BraintreeRules.graphQLID(type: "transaction", legacyID: "abcd1234")
        #expect(!id.contains("="))
        #expect(BraintreeRules.legacyID(fromGraphQLID: id, type: "transaction") == "abcd1234")
        #expect(BraintreeRules.legacyID(fromGraphQLID: id + "=", type: "transaction") == "abcd1234")
        #expect(
            BraintreeRules.legacyID(
                fromGraphQLID: BraintreeRules.graphQLID(type: "refund", legacyID: "abcd1234"), type: "transaction")
                == nil)
    }

    @Test func theHelpNamesTheScenarios() {
        for text in [
            "fake-apple-pay-visa-nonce", "2000.00-2999.99", "3000.00-3000.99", "5001.00",
            "/_sandbox/braintree/configuration",
        ] {
            #expect(BraintreeEmulator.scenariosHelp.contains(text), "\(text)")
        }
    }
}
