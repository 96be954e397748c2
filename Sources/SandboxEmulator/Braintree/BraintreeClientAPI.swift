import Foundation
import LoopbackHTTP
import WireTypes

/// Braintree's client API as the iOS SDK calls it: the gateway configuration and Apple Pay tokenization, authorized
/// by a tokenization key (`Client-Key`) or a client token's fingerprint (`authorization_fingerprint`, in the JSON
/// body or, for GET, the query). The token is verified and decrypted by the same verifier Bahn's and Centra's
/// emulators use; the nonce it becomes remembers the card and the token's amount and currency.
struct BraintreeClientAPI: Sendable {
    let store: BraintreeStore
    let verifier: ApplePayTokenVerifier
    let baseURL: @Sendable () -> String

    func routes() -> [Route] {
        let merchant = BraintreeRules.prefix + "/merchants/:merchantId/client_api"
        return [
            Route("GET", merchant + "/v1/configuration") { configuration($0) },
            Route("POST", merchant + "/v1/payment_methods/apple_payment_tokens") { tokenize($0) },
        ]
    }

    /// The client API's error shape: `{"error": {"message": …}}`.
    static func error(_ status: Int, _ message: String) -> HTTPReply {
        EmulatorResponse.json(status, ["error": ["message": .string(message)]])
    }

    /// Nil when the request may go on; otherwise the 401 that says why not. The `Client-Key` header, when sent,
    /// decides alone (DECISION): a wrong key is refused even beside a good fingerprint.
    func authorize(_ request: EmulatorRequest, fingerprint: String?) -> HTTPReply? {
        let merchant = request.params["merchantId"] ?? ""
        if let key = request.headers["Client-Key"] {
            guard key == TestCredentials.braintreeTokenizationKey else {
                return Self.error(401, "Authorization failed: the tokenization key in Client-Key is not valid")
            }
        } else {
            guard let fingerprint, !fingerprint.isEmpty else {
                return Self.error(
                    401,
                    "Authorization required: send a tokenization key in Client-Key or a client token's authorization_fingerprint"
                )
            }
            guard store.fingerprintIsValid(fingerprint) else {
                return Self.error(
                    401,
                    "Authorization failed: the authorization fingerprint is unknown or expired (it is valid 24 hours)")
            }
        }
        // Both kinds of authorization belong to the one merchant.
        guard merchant == TestCredentials.braintreeMerchantID else {
            return Self.error(
                401,
                "Authorization failed: the authorization is for merchant \(TestCredentials.braintreeMerchantID), not \(merchant)"
            )
        }
        return nil
    }

    // MARK: Configuration

    private func configuration(_ request: EmulatorRequest) -> HTTPReply {
        if let refused = authorize(request, fingerprint: request.http.query["authorization_fingerprint"]) {
            return refused
        }
        let base = baseURL()
        let merchant = TestCredentials.braintreeMerchantID
        let applePay = store.withLock { $0.applePay }
        return EmulatorResponse.json(
            200,
            [
                "environment": .string(BraintreeRules.environment), "merchantId": .string(merchant),
                "clientApiUrl": .string(base + BraintreeRules.clientAPIPath(merchant)),
                // DECISION: nothing is served there; it only keeps every URL of the configuration on the emulator.
                "assetsUrl": .string(base + BraintreeRules.prefix + "/assets"),
                "graphQL": ["url": .string(base + BraintreeRules.graphQLPath), "features": []],
                "challenges": [], "paymentMethods": [],
                "applePay": applePay.json,
            ])
    }

    // MARK: Tokenization

    private func tokenize(_ request: EmulatorRequest) -> HTTPReply {
        // DECISION: a body that is not JSON at all is a 400; a JSON body with a bad or missing token is a 422.
        guard let body = request.jsonObject else {
            return Self.error(400, "The request body must be a JSON object")
        }
        if let refused = authorize(request, fingerprint: body.string("authorization_fingerprint")) { return refused }
        // DECISION: with Apple Pay off in the configuration, tokenization is refused (422).
        guard store.withLock({ $0.applePay.status }) != "off" else {
            return Self.error(
                422, "Apple Pay is not enabled for this merchant (the configuration's applePay.status is off)")
        }
        func invalid(_ problem: String) -> HTTPReply { Self.error(422, "Apple Pay token is invalid: \(problem)") }
        guard let fields = body.object("applePaymentToken") else {
            return invalid("applePaymentToken (an object) is missing")
        }
        guard let encoded = fields.string("paymentData"), !encoded.isEmpty else {
            return invalid("applePaymentToken.paymentData is missing")
        }
        guard let bytes = Data(base64Encoded: encoded) else {
            return invalid("applePaymentToken.paymentData is not base64")
        }
        let token: DecryptedPaymentToken
        do { token = try verifier.open(bytes) } catch { return invalid("\(error)") }
        // DECISION: transactionIdentifier is required and must be the token's header.transactionId (PassKit gives
        // the same value, in uppercase), so a client pairing a token with another payment's fields is caught.
        guard let identifier = fields.string("transactionIdentifier") else {
            return invalid("applePaymentToken.transactionIdentifier is missing")
        }
        guard identifier.lowercased() == token.transactionId else {
            return invalid("applePaymentToken.transactionIdentifier is not the token's header.transactionId")
        }
        // DECISION: the card network comes from the decrypted DPAN (not the request's paymentNetwork); one the
        // merchant does not take is a 422.
        guard let network = BraintreeRules.Card.Network(pan: token.pan) else {
            return invalid(
                "the card network of its device PAN is not one the merchant takes (\(BraintreeRules.ApplePaySettings.supportedNetworks.joined(separator: ", ")))"
            )
        }
        let card = BraintreeRules.Card(
            network: network, last4: String(token.pan.suffix(4)), bin: String(token.pan.prefix(6)),
            expirationMonth: String(token.expiration.dropFirst(2).prefix(2)),
            expirationYear: "20" + String(token.expiration.prefix(2)),
            instrumentName: fields.string("paymentInstrumentName"))
        let now = Date()
        // Spending the token and making its nonce happen together: two tokenizations of one token cannot both pass.
        let nonce: String? = store.withLock { s in
            guard s.spentTokens[token.transactionId] == nil else { return nil }
            s.spentTokens[token.transactionId] = true
            let nonce = BraintreeRules.newNonce()
            s.nonces[nonce] = BraintreeStore.Nonce(
                card: card, amount: token.amount, currencyCode: token.currencyCode,
                expiresAt: now.addingTimeInterval(BraintreeRules.nonceLifetime))
            return nonce
        }
        guard let nonce else {
            return Self.error(
                422,
                "Apple Pay token already used: its transaction id \(token.transactionId) was tokenized before (a token is single-use)"
            )
        }
        return EmulatorResponse.json(201, ["applePayCards": [Self.cardJSON(card, nonce: nonce)]])
    }

    /// DECISION: the card's description is "<cardType> ending in <last two>"; binData is all "Unknown", as for
    /// Braintree's sandbox cards.
    static func cardJSON(_ card: BraintreeRules.Card, nonce: String) -> JSON {
        let lastTwo = String(card.last4.suffix(2))
        let unknown: JSON = "Unknown"
        let details: JSON = [
            "cardType": .string(card.network.cardType), "lastTwo": .string(lastTwo), "lastFour": .string(card.last4),
            "dpanLastTwo": .string(lastTwo), "bin": .string(card.bin), "expirationMonth": .string(card.expirationMonth),
            "expirationYear": .string(card.expirationYear), "paymentInstrumentName": JSON(card.instrumentName),
        ]
        return [
            "type": "ApplePayCard", "nonce": .string(nonce),
            "description": .string("\(card.network.cardType) ending in \(lastTwo)"),
            "default": false, "consumed": false, "details": details,
            "binData": [
                "prepaid": unknown, "healthcare": unknown, "debit": unknown, "durbinRegulated": unknown,
                "commercial": unknown,
                "payroll": unknown, "issuingBank": unknown, "countryOfIssuance": unknown, "productId": unknown,
            ],
        ]
    }
}
