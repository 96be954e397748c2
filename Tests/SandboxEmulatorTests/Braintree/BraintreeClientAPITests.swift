import Crypto
import Foundation
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// Braintree's client API over real HTTP: the configuration with either authorization, the sandbox control of what
/// it advertises, and Apple Pay tokenization (verify, decrypt, single use).
@Suite struct BraintreeClientAPITests {
    @Test func theConfigurationWithTheTokenizationKeyAdvertisesApplePay() throws {
        try withBraintree { bt in
            let response = try bt.configuration()
            #expect(response.status == 200)
            let json = response.json
            let base = bt.emulator.baseURL
            #expect(json["environment"] as? String == "sandbox")
            #expect(json["merchantId"] as? String == TestCredentials.braintreeMerchantID)
            #expect(json["clientApiUrl"] as? String == base + "/braintree/merchants/emulatormerchant01/client_api")
            #expect((json["graphQL"] as? [String: Any])?["url"] as? String == base + "/braintree/graphql")
            let applePay = try #require(json["applePay"] as? [String: Any])
            #expect(applePay["status"] as? String == "mock")
            #expect(applePay["countryCode"] as? String == "US" && applePay["currencyCode"] as? String == "USD")
            #expect(applePay["merchantIdentifier"] as? String == TestCredentials.merchantIdentifier)
            #expect(applePay["supportedNetworks"] as? [String] == ["visa", "mastercard", "amex", "discover"])
        }
    }

    @Test func aClientTokensFingerprintAuthorizesTheConfigurationAndTokenization() throws {
        try withBraintree { bt in
            let token = try bt.createClientToken()
            #expect(token["version"] as? Int == 2 && token["environment"] as? String == "sandbox")
            #expect(token["merchantId"] as? String == TestCredentials.braintreeMerchantID)
            let configURL = try #require(token["configUrl"] as? String)
            #expect(
                configURL == bt.emulator.baseURL + "/braintree/merchants/emulatormerchant01/client_api/v1/configuration"
            )
            let fingerprint = try #require(token["authorizationFingerprint"] as? String)
            // Like Braintree's, it holds characters a URL query must encode.
            #expect(fingerprint.contains("|") && fingerprint.contains("&"))

            let configuration = try bt.configuration(key: nil, fingerprint: fingerprint)
            #expect(configuration.status == 200)
            #expect(configuration.json["merchantId"] as? String == TestCredentials.braintreeMerchantID)
            // The fingerprint goes into the body of a POST.
            let tokenized = try bt.tokenize(
                try TestApplePayToken.make(amount: 500, currency: "840"), key: nil, fingerprint: fingerprint)
            #expect(tokenized.status == 201)

            let madeUp = try bt.configuration(key: nil, fingerprint: String(fingerprint.reversed()))
            #expect(madeUp.status == 401 && madeUp.braintreeMessage?.contains("fingerprint") == true)
        }
    }

    @Test func aFingerprintExpiresAfter24Hours() {
        let store = BraintreeStore()
        let issued = Date(timeIntervalSince1970: 2_000_000_000)
        let fingerprint = store.issueFingerprint(now: issued)
        #expect(store.fingerprintIsValid(fingerprint, now: issued.addingTimeInterval(24 * 3600 - 1)))
        #expect(!store.fingerprintIsValid(fingerprint, now: issued.addingTimeInterval(24 * 3600)))
    }

    @Test func aWrongKeyAWrongMerchantOrNoAuthorizationIs401() throws {
        try withBraintree { bt in
            let wrongKey = try bt.configuration(key: "sandbox_emu7k2q9_othermerchant")
            #expect(wrongKey.status == 401)
            #expect(wrongKey.braintreeMessage?.contains("tokenization key") == true)
            let wrongMerchant = try bt.configuration(merchant: "othermerchant")
            #expect(wrongMerchant.status == 401)
            #expect(wrongMerchant.braintreeMessage?.contains("othermerchant") == true)
            let none = try bt.configuration(key: nil)
            #expect(none.status == 401 && none.braintreeMessage?.contains("Client-Key") == true)

            let token = try TestApplePayToken.make(currency: "840")
            #expect(try bt.tokenize(token, key: "sandbox_wrong_emulatormerchant01").status == 401)
            #expect(try bt.tokenize(token, merchant: "othermerchant").status == 401)
            // The refusals spent nothing: the token still tokenizes.
            #expect(try bt.tokenize(token).status == 201)
        }
    }

    @Test func tokenizationVerifiesAndDecryptsTheTokenIntoANonce() throws {
        try withBraintree { bt in
            let token = try TestApplePayToken.make(amount: 1234, currency: "840", pan: "5413330089010442")
            let response = try bt.tokenize(token)
            #expect(response.status == 201)
            let card = try #require((response.json["applePayCards"] as? [[String: Any]])?.first)
            #expect(card["type"] as? String == "ApplePayCard" && card["default"] as? Bool == false)
            let nonce = try #require(card["nonce"] as? String)
            #expect(UUID(uuidString: nonce) != nil)
            let details = try #require(card["details"] as? [String: Any])
            #expect(details["cardType"] as? String == "Apple Pay - MasterCard")
            #expect(details["dpanLastTwo"] as? String == "42")
            #expect(card["binData"] is [String: Any])
            // The nonce remembers what the decrypted token said.
            let remembered = try #require(
                bt.emulator.provider(BraintreeEmulator.self).store.withLock { $0.nonces[nonce] })
            #expect(remembered.amount == 1234 && remembered.currencyCode == "840" && remembered.card.last4 == "0442")
            #expect(remembered.card.instrumentName == "Visa 4242")
            // The charge shows the DPAN's network and last 4.
            let charged = try bt.transaction(of: try bt.pay(nonce, "12.34"))
            let snapshot = try #require(charged["paymentMethodSnapshot"] as? [String: Any])
            #expect(snapshot["brandCode"] as? String == "MASTERCARD" && snapshot["last4"] as? String == "0442")
            #expect((snapshot["origin"] as? [String: Any])?["type"] as? String == "APPLE_PAY")
        }
    }

    @Test func aBadTokenIs422NamingTheProblem() throws {
        try withBraintree { bt in
            var tampered = try TestApplePayToken.make(currency: "840")
            tampered.data = tampered.data.changingByte(at: 3)
            let forged = try bt.tokenize(tampered)
            #expect(forged.status == 422)
            #expect(forged.braintreeMessage?.hasPrefix("Apple Pay token is invalid") == true)
            #expect(forged.braintreeMessage?.contains("signature") == true)

            let otherMerchant = try bt.tokenize(
                try TestApplePayToken.make(currency: "840", merchantIdentifier: "merchant.com.example.other"))
            #expect(otherMerchant.status == 422 && otherMerchant.braintreeMessage?.contains("decryption") == true)

            let notBase64 = try bt.tokenize(body: [
                "applePaymentToken": ["paymentData": "%%%", "transactionIdentifier": "00"]
            ])
            #expect(notBase64.status == 422 && notBase64.braintreeMessage?.contains("base64") == true)

            let good = try TestApplePayToken.make(currency: "840")
            let wrongID = try bt.tokenize(
                body: BraintreeTestClient.tokenizationBody(good.bytes, transactionIdentifier: "ABCDEF"))
            #expect(wrongID.status == 422 && wrongID.braintreeMessage?.contains("transactionIdentifier") == true)
            let missing = try bt.tokenize(body: ["_meta": ["integration": "custom"]])
            #expect(missing.status == 422 && missing.braintreeMessage?.contains("applePaymentToken") == true)
        }
    }

    @Test func aTokenTokenizedTwiceIs422() throws {
        try withBraintree { bt in
            let token = try TestApplePayToken.make(currency: "840")
            #expect(try bt.tokenize(token).status == 201)
            let again = try bt.tokenize(token)
            #expect(again.status == 422)
            #expect(again.braintreeMessage?.contains("already used") == true)
        }
    }

    @Test func theSandboxControlChangesWhatTheConfigurationAdvertises() throws {
        try withBraintree { bt in
            let changed = try bt.setConfiguration(["currencyCode": "EUR", "countryCode": "DE"])
            #expect(changed.status == 200)
            #expect(
                changed.json["currencyCode"] as? String == "EUR" && changed.json["applePayStatus"] as? String == "mock")
            let applePay = try #require(try bt.configuration().json["applePay"] as? [String: Any])
            #expect(applePay["currencyCode"] as? String == "EUR" && applePay["countryCode"] as? String == "DE")

            #expect(try bt.setConfiguration(["applePayStatus": "off"]).status == 200)
            #expect((try bt.configuration().json["applePay"] as? [String: Any])?["status"] as? String == "off")
            let refused = try bt.tokenize(try TestApplePayToken.make(currency: "840"))
            #expect(refused.status == 422 && refused.braintreeMessage?.contains("not enabled") == true)

            #expect(try bt.setConfiguration(["applePayStatus": "maybe"]).status == 400)
            #expect(try bt.setConfiguration(["currency": "EUR"]).status == 400)
            #expect(try bt.setConfiguration(["currencyCode": "eur"]).status == 400)
            // The refused changes changed nothing.
            #expect((try bt.configuration().json["applePay"] as? [String: Any])?["currencyCode"] as? String == "EUR")
        }
    }
}
