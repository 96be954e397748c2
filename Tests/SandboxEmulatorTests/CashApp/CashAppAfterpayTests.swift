import Crypto
import Foundation
import LoopbackHTTP
import Testing
import WireTypes

@testable import SandboxEmulator

/// Afterpay's side over real HTTP: v2 (Basic auth, User-Agent, checkouts, capture, auth, deferred capture, reading a
/// payment), api-plus (sign-payment's JWT, validate-payment's checks) and the v3 button, and the ledger they write.
@Suite struct CashAppAfterpayTests {
    @Test func checkoutAnswersATokenThatExpiresInAnHour() throws {
        try withCashApp { client in
            let response = try client.afterpay("POST", "/checkouts", CashAppTestClient.checkoutBody("50.00"))
            #expect(response.status == 201)
            let token = try #require(response.json["token"] as? String)
            #expect(token.hasPrefix("002."))
            #expect(
                response.json["redirectCheckoutUrl"] as? String == client.emulator.baseURL + "/afterpay/checkout/"
                    + token)
            let expires = try #require(response.json["expires"] as? String)
            // Nanoseconds: nine fraction digits.
            #expect(expires.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$"#, options: .regularExpression) != nil)
            let whole = try Date.ISO8601FormatStyle().parse(String(expires.prefix(19)) + "Z")
            #expect(abs(whole.timeIntervalSinceNow - 3600) < 5)
        }
    }

    @Test func basicAuthAndUserAgentAreRequired() throws {
        try withCashApp { client in
            let wrongSecret = "Basic " + Data("\(TestCredentials.afterpayMerchantID):nope".utf8).base64EncodedString()
            let refused: [[(String, String)]] = [
                [("User-Agent", "x")], [("Authorization", wrongSecret), ("User-Agent", "x")],
            ]
            for headers in refused {
                let response = try client.afterpay(
                    "POST", "/checkouts", CashAppTestClient.checkoutBody("50.00"), headers: headers)
                #expect(response.status == 401)
                #expect(response.afterpayError == "unauthorized")
            }
            #expect(try client.afterpay("GET", "/payments/1", headers: []).status == 401)
            for agent in [nil, ""] as [String?] {
                var headers = [("Authorization", CashAppTestClient.basicAuth)]
                if let agent { headers.append(("User-Agent", agent)) }
                let response = try client.afterpay(
                    "POST", "/checkouts", CashAppTestClient.checkoutBody("50.00"), headers: headers)
                #expect(response.status == 400)
                #expect(response.afterpayError == "invalid_object")
                #expect((response.json["message"] as? String)?.contains("User-Agent") == true)
            }
        }
    }

    @Test func checkoutRefusesBadAmountsAndMissingRedirects() throws {
        try withCashApp { client in
            for amount: Any in ["50", "0.00", "50.001", 50.0, "-5.00"] {
                var body = CashAppTestClient.checkoutBody("50.00")
                body["amount"] = ["amount": amount, "currency": "USD"]
                let response = try client.afterpay("POST", "/checkouts", body)
                #expect(response.status == 422, "\(amount)")
                #expect(response.afterpayError == "invalid_object")
            }
            var euros = CashAppTestClient.checkoutBody("50.00")
            euros["amount"] = ["amount": "50.00", "currency": "EUR"]
            #expect(try client.afterpay("POST", "/checkouts", euros).status == 422)

            var noCancel = CashAppTestClient.checkoutBody("50.00")
            noCancel["merchant"] = ["redirectConfirmUrl": "https://shop.example/confirm"]
            let missing = try client.afterpay("POST", "/checkouts", noCancel)
            #expect(missing.status == 422)
            #expect(missing.afterpayError == "invalid_object")
            #expect((missing.json["message"] as? String)?.contains("redirectCancelUrl") == true)
        }
    }

    @Test func signPaymentAnswersAJWTSignedByTheTestKey() throws {
        try withCashApp { client in
            let token = try client.checkout("19.99")
            let response = try client.plus("/v2/payments/sign-payment", ["token": token])
            #expect(response.status == 200)
            #expect(response.json["externalBrandId"] as? String == "BRAND_emulator0001")
            #expect(response.json["redirectUrl"] as? String == "https://shop.example/confirm")
            let jwt = try #require(response.json["jwtToken"] as? String)
            let header = try CashAppTestClient.decodePart(jwt, 0)
            #expect(header["kid"] as? String == "emulator-sign-1")
            #expect(header["alg"] as? String == "ES256")
            #expect(header["ttl"] as? Int == 600)
            let payload = try CashAppTestClient.decodePart(jwt, 1)
            #expect(payload["externalMerchantId"] as? String == "MMI_emulator0001")
            #expect(payload["token"] as? String == token)
            #expect(payload["redirectUrl"] as? String == "https://shop.example/confirm")
            #expect((payload["amount"] as? [String: String]) == ["amount": "19.99", "currency": "USD", "symbol": "$"])
            let iat = try #require(payload["iat"] as? Int)
            let exp = try #require(payload["exp"] as? Int)
            #expect(exp - iat == 600)
            let parts = jwt.split(separator: ".").map(String.init)
            let key = try P256PublicKey(pem: TestCredentials.afterpayJWTPublicKeyPEM)
            #expect(
                key.verifyES256(
                    signature: try #require(Data(base64URLEncoded: parts[2])),
                    message: Data((parts[0] + "." + parts[1]).utf8)))

            let unknown = try client.plus("/v2/payments/sign-payment", ["token": "002.nothing"])
            #expect(unknown.status == 400)
            #expect(unknown.afterpayError == "invalid_token")
        }
    }

    @Test func validateThenCaptureMovesTheMoneyOnce() throws {
        try withCashApp { client in
            let token = try client.checkout("50.00")
            let (jwt, _) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 5000)
            let validated = try client.validate(jwt, customer: approved.customer, grant: approved.grant)
            #expect(validated.status == 200)
            #expect(validated.json["status"] as? String == "SUCCESS")
            #expect(validated.json["cashAppTag"] as? String == "$emulator")
            #expect(validated.json["callbackBaseUrl"] is String)

            let capture = try client.afterpay(
                "POST", "/payments/capture", ["token": token, "merchantReference": "order-1"])
            #expect(capture.status == 201)
            let payment = capture.json
            let id = try #require(payment["id"] as? String)
            #expect(!id.isEmpty && id.allSatisfy(\.isNumber))
            #expect(payment["token"] as? String == token)
            #expect(payment["status"] as? String == "APPROVED")
            #expect(payment["paymentState"] as? String == "CAPTURED")
            #expect(payment["merchantReference"] as? String == "order-1")
            #expect((payment["originalAmount"] as? [String: String]) == ["amount": "50.00", "currency": "USD"])
            #expect((payment["openToCaptureAmount"] as? [String: String]) == ["amount": "0.00", "currency": "USD"])
            let events = try #require(payment["events"] as? [[String: Any]])
            #expect(events.map { $0["type"] as? String } == ["CAPTURED"])
            #expect((events.first?["amount"] as? [String: String])?["amount"] == "50.00")

            let repeated = try client.afterpay("POST", "/payments/capture", ["token": token])
            #expect(repeated.status == 201)
            #expect(repeated.json["id"] as? String == id)
            let ledger = client.afterpayLedger()
            #expect(ledger.count == 1)
            #expect(
                ledger.first.map { [$0.kind.rawValue, $0.reference, String($0.amount), $0.currency] } == [
                    "capture", id, "5000", "USD",
                ])

            // The token is paid by capture: an auth of it is refused.
            let auth = try client.afterpay("POST", "/payments/auth", ["token": token])
            #expect(auth.status == 412)
            #expect(auth.afterpayError == "invalid_order_transaction_status")
        }
    }

    @Test func captureIsRefusedBeforeValidation() throws {
        try withCashApp { client in
            let token = try client.checkout("50.00")
            for path in ["/payments/capture", "/payments/auth"] {
                let response = try client.afterpay("POST", path, ["token": token])
                #expect(response.status == 402)
                #expect(response.afterpayError == "invalid_token")
                #expect((response.json["message"] as? String)?.contains("not been validated") == true)
            }
            let unknown = try client.afterpay("POST", "/payments/capture", ["token": "002.unknown"])
            #expect(unknown.status == 402)
            #expect(unknown.afterpayError == "invalid_token")
            // A FAILED validate does not validate either.
            let (jwt, _) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 5000)
            #expect(
                try client.validate(jwt, customer: "CST_someone", grant: approved.grant).json["status"] as? String
                    == "FAILED")
            #expect(try client.afterpay("POST", "/payments/capture", ["token": token]).status == 402)
            #expect(client.afterpayLedger().isEmpty)
        }
    }

    @Test func validateVerifiesTheJWT() throws {
        try withCashApp { client in
            let token = try client.checkout("50.00")
            let (jwt, payload) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 5000)
            // The payload changed to a smaller amount, the signature kept.
            var cheaper = payload
            cheaper["amount"] = ["amount": "0.01", "currency": "USD", "symbol": "$"]
            let parts = jwt.split(separator: ".").map(String.init)
            let tampered =
                parts[0] + "." + (try JSONSerialization.data(withJSONObject: cheaper)).base64URLEncodedString() + "."
                + parts[2]
            let refused = try client.validate(tampered, customer: approved.customer, grant: approved.grant)
            #expect(refused.status == 400)
            #expect(refused.afterpayError == "invalid_jwt")
            // Signed by the right key but expired.
            var old = payload
            old["iat"] = Int(Date().timeIntervalSince1970) - 1200
            old["exp"] = Int(Date().timeIntervalSince1970) - 600
            let expired = try client.validate(
                CashAppJWT.sign(try JSON.parse(JSONSerialization.data(withJSONObject: old))),
                customer: approved.customer, grant: approved.grant)
            #expect(expired.status == 400)
            #expect(expired.afterpayError == "invalid_jwt")
            #expect(
                try client.validate("not.a.jwt", customer: approved.customer, grant: approved.grant).afterpayError
                    == "invalid_jwt")
            // The genuine one passes.
            #expect(
                try client.validate(jwt, customer: approved.customer, grant: approved.grant).json["status"] as? String
                    == "SUCCESS")
        }
    }

    @Test func validateNeedsTheMatchingCustomerGrantAndAmount() throws {
        try withCashApp { client in
            let token = try client.checkout("50.00")
            let (jwt, _) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 5000)
            let otherAmount = try client.approvedRequest(cents: 4999)
            func status(_ customer: String, _ grant: String) throws -> String? {
                try client.validate(jwt, customer: customer, grant: grant).json["status"] as? String
            }
            #expect(try status("CST_someone", approved.grant) == "FAILED")
            #expect(try status(approved.customer, "GRG_unknown") == "FAILED")
            #expect(try status(otherAmount.customer, otherAmount.grant) == "FAILED")
            #expect(try status(otherAmount.customer, approved.grant) == "FAILED")
            #expect(try status(approved.customer, approved.grant) == "SUCCESS")
            // A one-time grant pays one checkout: not a second one of the same amount.
            let second = try client.checkout("50.00")
            let (secondJWT, _) = try client.sign(second)
            #expect(
                try client.validate(secondJWT, customer: approved.customer, grant: approved.grant).json["status"]
                    as? String == "FAILED")
            // The checkout it validated may validate again (a retry after a lost answer).
            #expect(try status(approved.customer, approved.grant) == "SUCCESS")
        }
    }

    @Test func anExpiredGrantFailsValidation() throws {
        try withCashApp { client in
            try client.setSettings(["grantLifetimeSeconds": 1])
            let token = try client.checkout("50.00")
            let (jwt, _) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 5000)
            Thread.sleep(forTimeInterval: 1.2)
            let response = try client.validate(jwt, customer: approved.customer, grant: approved.grant)
            #expect(response.status == 200)
            #expect(response.json["status"] as? String == "FAILED")
        }
    }

    @Test func scenarioAmountsFailValidationAndDeclinePayments() throws {
        try withCashApp { client in
            let failing = try client.checkout("16.16")
            let (jwt, _) = try client.sign(failing)
            let approved = try client.approvedRequest(cents: 1616)
            #expect(
                try client.validate(jwt, customer: approved.customer, grant: approved.grant).json["status"] as? String
                    == "FAILED")

            let declinedCapture = try client.validatedCheckout("17.17", cents: 1717)
            let capture = try client.afterpay("POST", "/payments/capture", ["token": declinedCapture])
            #expect(capture.status == 201)
            #expect(capture.json["status"] as? String == "DECLINED")
            #expect(capture.json["paymentState"] as? String == "CAPTURE_DECLINED")

            let declinedAuth = try client.validatedCheckout("17.17", cents: 1717)
            let auth = try client.afterpay("POST", "/payments/auth", ["token": declinedAuth])
            #expect(auth.status == 402)
            #expect(auth.json["status"] as? String == "DECLINED")
            #expect(auth.json["paymentState"] as? String == "AUTH_DECLINED")
            #expect(try client.afterpay("POST", "/payments/auth", ["token": declinedAuth]).status == 402)
            #expect(client.afterpayLedger().isEmpty)
        }
    }

    @Test func authThenDeferredCapturesAreExactAndBounded() throws {
        try withCashApp { client in
            let token = try client.validatedCheckout("100.00", cents: 10_000)
            let auth = try client.afterpay("POST", "/payments/auth", ["token": token, "requestId": UUID().uuidString])
            #expect(auth.status == 201)
            #expect(auth.json["status"] as? String == "APPROVED")
            #expect(auth.json["paymentState"] as? String == "AUTH_APPROVED")
            #expect((auth.json["openToCaptureAmount"] as? [String: String])?["amount"] == "100.00")
            let id = try #require(auth.json["id"] as? String)
            #expect(try client.afterpay("POST", "/payments/auth", ["token": token]).json["id"] as? String == id)
            #expect(try client.afterpay("POST", "/payments/capture", ["token": token]).status == 412)

            func capture(_ amount: String, requestID: String = UUID().uuidString) throws -> RawResponse {
                try client.afterpay(
                    "POST", "/payments/\(id)/capture",
                    ["amount": ["amount": amount, "currency": "USD"], "requestId": requestID])
            }
            let first = try capture("30.01", requestID: "capture-1")
            #expect(first.status == 201)
            #expect(first.json["paymentState"] as? String == "PARTIALLY_CAPTURED")
            #expect((first.json["openToCaptureAmount"] as? [String: String])?["amount"] == "69.99")
            let replay = try capture("30.01", requestID: "capture-1")
            #expect(replay.status == 201)
            #expect(replay.body == first.body)

            let over = try capture("70.00")
            #expect(over.status == 422)
            #expect(over.afterpayError == "invalid_amount")
            let rest = try capture("69.99")
            #expect(rest.status == 201)
            #expect(rest.json["paymentState"] as? String == "CAPTURED")
            #expect((rest.json["openToCaptureAmount"] as? [String: String])?["amount"] == "0.00")
            #expect(
                (rest.json["events"] as? [[String: Any]])?.compactMap { $0["type"] as? String } == [
                    "AUTH_APPROVED", "CAPTURED", "CAPTURED",
                ])
            let after = try capture("0.01")
            #expect(after.status == 412)
            #expect(after.afterpayError == "invalid_order_transaction_status")
            let unknown = try client.afterpay(
                "POST", "/payments/999/capture", ["amount": ["amount": "1.00", "currency": "USD"]])
            #expect(unknown.status == 404)
            #expect(unknown.afterpayError == "not_found")

            let ledger = client.afterpayLedger()
            #expect(ledger.map(\.kind) == [.authorization, .capture, .capture])
            #expect(ledger.map(\.amount) == [10_000, 3001, 6999])
            #expect(ledger.allSatisfy { $0.reference == id && $0.currency == "USD" })
        }
    }

    @Test func paymentIsReadByOrderIDOrByToken() throws {
        try withCashApp { client in
            let token = try client.validatedCheckout("50.00", cents: 5000)
            #expect(try client.afterpay("GET", "/payments/token:\(token)").status == 404)
            let id = try #require(
                try client.afterpay("POST", "/payments/capture", ["token": token]).json["id"] as? String)
            let byID = try client.afterpay("GET", "/payments/\(id)")
            #expect(byID.status == 200)
            #expect(byID.json["token"] as? String == token)
            let byToken = try client.afterpay("GET", "/payments/token:\(token)")
            #expect(byToken.status == 200)
            #expect(byToken.json["id"] as? String == id)
            let missing = try client.afterpay("GET", "/payments/123")
            #expect(missing.status == 404)
            #expect(missing.afterpayError == "not_found")
        }
    }

    static func buttonBody(_ amount: String, merchant: String = TestCredentials.afterpayShopMerchantID) -> [String: Any]
    {
        [
            "shopDirectoryId": TestCredentials.afterpayShopDirectoryID, "shopDirectoryMerchantId": merchant,
            "amount": ["amount": amount, "currency": "USD"], "shippingAmount": ["amount": "0", "currency": "USD"],
            "taxAmount": ["amount": "0", "currency": "USD"], "items": [] as [Any],
            "consumer": ["email": "ada@example.com"],
            "merchant": [
                "redirectConfirmUrl": "https://shop.example/confirm",
                "redirectCancelUrl": "https://shop.example/cancel",
            ],
            "isCashAppPay": true,
        ]
    }

    @Test func buttonAndConfirmHandOutOneCard() throws {
        try withCashApp { client in
            let sdk = [("X-Afterpay-SDK", "5.8.0")]
            let noSDK = try client.plus("/v3/button", Self.buttonBody("10"))
            #expect(noSDK.status == 400)
            #expect(noSDK.afterpayError == "invalid_object")
            let stranger = try client.plus("/v3/button", Self.buttonBody("10", merchant: "someone"), headers: sdk)
            #expect(stranger.status == 401)
            #expect(stranger.afterpayError == "unauthorized")

            let button = try client.plus("/v3/button", Self.buttonBody("10"), headers: sdk)
            #expect(button.status == 200)
            let token = try #require(button.json["token"] as? String)
            #expect(token.hasPrefix("003."))
            let cardToken = try #require(button.json["singleUseCardToken"] as? String)
            #expect(UUID(uuidString: cardToken) != nil)
            #expect(button.json["confirmMustBeCalledBefore"] is String)
            #expect(button.json["redirectCheckoutUrl"] is String)

            let (jwt, payload) = try client.sign(token)
            #expect((payload["amount"] as? [String: String])?["amount"] == "10.00")
            let approved = try client.approvedRequest(cents: 1000)
            func confirm(_ singleUse: String) throws -> RawResponse {
                try client.plus(
                    "/v3/button/confirm",
                    [
                        "token": token, "singleUseCardToken": singleUse,
                        "cashAppPspInfo": [
                            "externalCustomerId": approved.customer,
                            "externalGrantId": approved.grant, "jwt": jwt,
                        ],
                    ])
            }
            let wrong = try confirm(UUID().uuidString.lowercased())
            #expect(wrong.status == 400)
            #expect(wrong.afterpayError == "invalid_token")

            let card = try confirm(cardToken)
            #expect(card.status == 200)
            let virtual = try #require(
                (card.json["paymentDetails"] as? [String: Any])?["virtualCard"] as? [String: String])
            #expect(virtual["cardType"] == "VISA")
            #expect(virtual["cardNumber"]?.count == 16)
            #expect(virtual["cvc"]?.count == 3)
            #expect(virtual["expiry"] == "2029-12")
            #expect(
                (card.json["cardValidUntil"] as? String)?.range(of: #"\.\d{9}Z$"#, options: .regularExpression) != nil)
            let again = try confirm(cardToken)
            #expect(again.status == 200)
            #expect(again.body == card.body)
            // A button is paid with its card, not captured.
            #expect(try client.afterpay("POST", "/payments/capture", ["token": token]).status == 402)
        }
    }

    @Test func confirmDeclinesWhenTheGrantDoesNotPay() throws {
        try withCashApp { client in
            let sdk = [("X-Afterpay-SDK", "5.8.0")]
            let button = try client.plus("/v3/button", Self.buttonBody("16.16"), headers: sdk)
            let token = try #require(button.json["token"] as? String)
            let cardToken = try #require(button.json["singleUseCardToken"] as? String)
            let (jwt, _) = try client.sign(token)
            let approved = try client.approvedRequest(cents: 1616)
            let declined = try client.plus(
                "/v3/button/confirm",
                [
                    "token": token, "singleUseCardToken": cardToken,
                    "cashAppPspInfo": [
                        "externalCustomerId": approved.customer,
                        "externalGrantId": approved.grant, "jwt": jwt,
                    ],
                ])
            #expect(declined.status == 402)
            #expect(declined.afterpayError == "payment_declined")
        }
    }
}
