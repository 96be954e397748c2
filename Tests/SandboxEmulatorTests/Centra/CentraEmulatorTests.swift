import Foundation
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// A shopper's session against the emulated Storefront API, over real HTTP, with documents valid against Centra's
/// published schema: sessions and token rotation, exact projection, widgets and the shared secret, the cart, the
/// shipping-contact and final payment steps, 3DS both ways, Ingrid, and the ledger.
final class CentraShopper {
    let emulator: Emulator
    var token = CentraRules.pluginToken
    var sharedSecret: String?

    init(_ emulator: Emulator) { self.emulator = emulator }

    /// Posts a document; keeps the rotated token like a client must.
    @discardableResult
    func call(_ query: String, _ variables: [String: Any] = [:], operationName: String? = nil) throws -> [String: Any] {
        var body: [String: Any] = ["query": query, "variables": variables]
        if let operationName { body["operationName"] = operationName }
        var headers = [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")]
        if let sharedSecret { headers.append(("X-Shared-Secret", sharedSecret)) }
        let response = try rawRequest(
            port: emulator.port, method: "POST", path: CentraRules.endpointPath, headers: headers,
            body: try JSONSerialization.data(withJSONObject: body))
        #expect(response.status == 200)
        let json = response.json
        if let next = (json["extensions"] as? [String: Any])?["token"] as? String { token = next }
        return json
    }

    static func data(_ response: [String: Any]) -> [String: Any] { response["data"] as? [String: Any] ?? [:] }

    static let selectionQuery =
        "query Cart { selection { id lines { id quantity item { id } } grandTotal { value formattedValue currency { code } } checkout { shippingMethods { id name price { value } selected } totals { type price { value } } } } }"

    func selection() throws -> [String: Any] {
        Self.data(try call(Self.selectionQuery))["selection"] as? [String: Any] ?? [:]
    }

    static let instructions = """
        mutation Pay($input: PaymentInstructionsInput!) {
          paymentInstructions(input: $input) {
            action { __typename action ... on SuccessPaymentAction { order { id number status } } ... on RedirectPaymentAction { url }
                     ... on JavascriptPaymentAction { formFields formType } }
            selection { grandTotal { value } checkout { shippingMethods { id price { value } } } }
            userErrors { message path }
          }
        }
        """

    static var fullAddress: [String: Any] {
        [
            "firstName": "Ada", "lastName": "Lovelace", "address1": "Storgatan 1", "city": "Stockholm",
            "zipCode": "11122", "country": "SE",
            "email": "ada@example.com",
        ]
    }

    func pay(token bytes: Data, returnPage: String = "http://127.0.0.1:9/return") throws -> [String: Any] {
        let input: [String: Any] = [
            "shippingAddress": Self.fullAddress, "paymentReturnPage": returnPage,
            "paymentFailedPage": returnPage + "?failed",
            "termsAndConditions": true, "express": true,
            "paymentMethodSpecificFields": [
                "paymentMethod": ["type": "applepay", "applePayToken": bytes.base64EncodedString()], "express": true,
            ],
        ]
        return Self.data(try call(Self.instructions, ["input": input]))["paymentInstructions"] as? [String: Any] ?? [:]
    }

    func grandTotalMinor() throws -> Int {
        let value = try #require((try selection()["grandTotal"] as? [String: Any])?["value"] as? NSNumber)
        return Int((value.doubleValue * 100).rounded())
    }

    func addItem(_ item: String) throws -> [String: Any] {
        Self.data(
            try call(
                "mutation Add($item: String!) { addItem(item: $item) { line { id } selection { lines { id } } userErrors { message path } } }",
                ["item": item]))["addItem"] as? [String: Any] ?? [:]
    }

    func setItems(_ items: [String]) throws {
        for line in (try selection()["lines"] as? [[String: Any]]) ?? [] {
            try call(
                "mutation Remove($id: String!) { updateLine(lineId: $id, quantity: 0) { userErrors { message } } }",
                ["id": line["id"] as? String ?? ""])
        }
        for item in items { _ = try addItem(item) }
    }
}

@Suite struct CentraEmulatorTests {
    func start() throws -> Emulator {
        let emulator = try Emulator()
        emulator.start()
        return emulator
    }

    @Test func theFirstCallStartsASessionAndEveryResponseRotatesItsToken() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let first = try shopper.call(CentraShopper.selectionQuery)
        let extensions = try #require(first["extensions"] as? [String: Any])
        #expect((extensions["token"] as? String)?.hasPrefix("cst_") == true && extensions["traceId"] is String)
        let selection = try #require(CentraShopper.data(first)["selection"] as? [String: Any])
        // One linen shirt (799.00) and standard shipping to Sweden (49.00).
        #expect((selection["grandTotal"] as? [String: Any])?["formattedValue"] as? String == "848.00 SEK")
        #expect(
            ((selection["lines"] as? [[String: Any]])?.first?["item"] as? [String: Any])?["id"] as? String == "1001-M")
        // Exactly the selected fields come back.
        #expect(Set(selection.keys) == ["id", "lines", "grandTotal", "checkout"])

        let firstToken = shopper.token
        let again = try shopper.selection()
        #expect(again["id"] as? String == selection["id"] as? String, "the rotated token names the same session")
        #expect(shopper.token != firstToken)
        // The token before the newest still works (an answer lost on the way), the one before that does not.
        let newest = shopper.token
        shopper.token = firstToken
        #expect(try shopper.selection()["id"] as? String == selection["id"] as? String)
        shopper.token = newest
        _ = try shopper.selection()
        shopper.token = firstToken
        let stale = try shopper.call(CentraShopper.selectionQuery)
        #expect((stale["errors"] as? [[String: Any]])?.first?["message"] as? String == "Unauthorized")
        #expect(stale["extensions"] == nil)
        // The plugin token starts a new session: a new selection.
        shopper.token = CentraRules.pluginToken
        #expect(try shopper.selection()["id"] as? String != selection["id"] as? String)
    }

    @Test func expiredSessionsAndBadTokensAreUnauthorized() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        _ = try shopper.selection()
        _ = try rawRequest(port: emulator.port, method: "POST", path: "/_sandbox/centra/expire-sessions")
        #expect(
            (try shopper.call(CentraShopper.selectionQuery)["errors"] as? [[String: Any]])?.first?["message"] as? String
                == "Unauthorized")
        shopper.token = "cst_made_up"
        #expect(
            (try shopper.call(CentraShopper.selectionQuery)["errors"] as? [[String: Any]])?.first?["message"] as? String
                == "Unauthorized")
    }

    @Test func documentsAreValidatedAgainstTheRealSchema() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let r = try shopper.call("{ selection { id lineItems { id } } }")
        let error = try #require((r["errors"] as? [[String: Any]])?.first)
        #expect(error["message"] as? String == #"Cannot query field "lineItems" on type "Selection"."#)
        #expect((error["locations"] as? [[String: Any]])?.first?["column"] as? Int == 18)
        #expect(r["data"] == nil)
        // The integration guide's sample type names do not exist (docs/protocols/centra.md).
        let seed = try shopper.call(
            "query W($p: [ExpressCheckoutWidgetsInput!]!) { expressCheckoutWidgets(plugins: $p) { list { name } } }",
            ["p": []])
        #expect(
            (seed["errors"] as? [[String: Any]])?.contains {
                ($0["message"] as? String) == #"Unknown type "ExpressCheckoutWidgetsInput"."#
            } == true)
    }

    static let widgets = """
        query Widgets($plugins: [ExpressCheckoutWidgetsPluginItem!]!) {
          expressCheckoutWidgets(plugins: $plugins) { list { name widgets { name contents error } } userErrors { message } }
        }
        """

    @Test func theAdyenWidgetNeedsTheSharedSecretAndCarriesItsConfigAsAJSONString() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let plugins: [[String: Any]] = [
            [
                "type": "express_checkout_adyen",
                "additionalData": [
                    "amount": 84800, "lineItems": [["name": "Linen shirt", "price": "799.00"]],
                    "returnUrl": "http://127.0.0.1:9/r",
                ],
            ]
        ]
        let refused = try shopper.call(Self.widgets, ["plugins": plugins])
        #expect(
            ((refused["errors"] as? [[String: Any]])?.first?["message"] as? String)?.contains("X-Shared-Secret") == true
        )
        shopper.sharedSecret = CentraRules.sharedSecret
        let r = try shopper.call(Self.widgets, ["plugins": plugins])
        let widget = try #require(
            (((CentraShopper.data(r)["expressCheckoutWidgets"] as? [String: Any])?["list"] as? [[String: Any]])?.first?[
                "widgets"] as? [[String: Any]])?.first)
        #expect(widget["name"] as? String == "express_checkout_adyen")
        let contents = try #require(
            try JSONSerialization.jsonObject(with: Data((widget["contents"] as? String ?? "").utf8)) as? [String: Any])
        #expect(
            contents["clientKey"] as? String == CentraRules.adyenClientKey && contents["context"] as? String == "test")
        #expect((contents["paymentAmount"] as? [String: Any])?["amount"] as? Int == 84800)
        let methods =
            ((contents["paymentMethodsResponse"] as? [String: Any])?["paymentMethods"] as? [[String: Any]]) ?? []
        #expect(methods.contains { $0["type"] as? String == "applepay" })
    }

    @Test func aPDPItemIsAddedAndRolledBack() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let added = try shopper.addItem("1002-M")
        let lineID = try #require((added["line"] as? [String: Any])?["id"] as? String)
        #expect(((added["selection"] as? [String: Any])?["lines"] as? [[String: Any]])?.count == 2)
        let missing = try shopper.addItem("9999-X")
        #expect((missing["userErrors"] as? [[String: Any]])?.first?["path"] as? [String] == ["item"])
        let rolledBack = CentraShopper.data(
            try shopper.call(
                "mutation Rollback($id: String!) { updateLine(lineId: $id, quantity: 0) { selection { lines { id } } userErrors { message } } }",
                ["id": lineID]))
        let lines =
            ((rolledBack["updateLine"] as? [String: Any])?["selection"] as? [String: Any])?["lines"] as? [[String: Any]]
        #expect(lines?.count == 1 && lines?.first?["id"] as? String != lineID)
    }

    @Test func theShippingContactStepPricesShippingForThePartialAddress() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let input: [String: Any] = [
            "shippingAddress": ["country": "no", "city": "Oslo", "zipCode": "0150", "address1": ""],
            "paymentReturnPage": "http://127.0.0.1:9/r", "paymentFailedPage": "http://127.0.0.1:9/f",
            "termsAndConditions": false, "paymentInitiateOnly": true,
        ]
        let r =
            CentraShopper.data(try shopper.call(CentraShopper.instructions, ["input": input]))["paymentInstructions"]
            as? [String: Any] ?? [:]
        #expect(r["action"] is NSNull)
        #expect((r["userErrors"] as? [Any])?.isEmpty == true)
        let methods =
            (((r["selection"] as? [String: Any])?["checkout"] as? [String: Any])?["shippingMethods"] as? [[String: Any]])
            ?? []
        #expect(
            methods.compactMap { ($0["price"] as? [String: Any])?["value"] as? NSNumber }.map(\.doubleValue) == [
                99, 149,
            ])
        #expect(((r["selection"] as? [String: Any])?["grandTotal"] as? [String: Any])?["value"] as? NSNumber == 898)
        // The shipping-method callback changes the total.
        let changed = CentraShopper.data(
            try shopper.call(
                "mutation M($id: Int!) { setShippingMethod(id: $id) { selection { grandTotal { value } } userErrors { message } } }",
                ["id": 2]))
        #expect(
            (((changed["setShippingMethod"] as? [String: Any])?["selection"] as? [String: Any])?["grandTotal"]
                as? [String: Any])?["value"] as? NSNumber == 948)
    }

    @Test func theFinalStepChargesAVerifiedTokenForTheExactTotalOnce() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        let total = try shopper.grandTotalMinor()
        let wrong = try TestApplePayToken.make(amount: total + 1, currency: "752")
        #expect(
            ((try shopper.pay(token: wrong.bytes)["userErrors"] as? [[String: Any]])?.first?["message"] as? String)?
                .contains("the token is for \(total + 1)") == true)
        let token = try TestApplePayToken.make(amount: total, currency: "752")
        let paid = try shopper.pay(token: token.bytes)
        let action = try #require(paid["action"] as? [String: Any])
        #expect(action["__typename"] as? String == "SuccessPaymentAction" && action["action"] as? String == "SUCCESS")
        let orderID = try #require((action["order"] as? [String: Any])?["id"] as? String)
        #expect(emulator.ledger.entries().filter { $0.provider == "centra" }.map(\.reference) == [orderID])
        #expect(emulator.ledger.entries().first { $0.provider == "centra" }?.amount == total)
        // The order is the session's latest; the same token again is refused (single use).
        let order =
            CentraShopper.data(try shopper.call("{ order { id status orderDate totals { type price { value } } } }"))[
                "order"] as? [String: Any]
        #expect(order?["id"] as? String == orderID && order?["status"] as? String == "CONFIRMED")
        // orderDate in whole seconds, UTC: 2026-12-05T23:59:59Z.
        let date = try #require(order?["orderDate"] as? String)
        #expect(date.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z/) != nil, "\(date)")
        #expect(abs((try Date.ISO8601FormatStyle().parse(date)).timeIntervalSinceNow) < 60)
        try shopper.setItems(["1001-M"])
        let reused = try shopper.pay(token: token.bytes)
        #expect(
            ((reused["userErrors"] as? [[String: Any]])?.first?["message"] as? String)?.contains("already used") == true
        )
        #expect(emulator.ledger.entries().filter { $0.provider == "centra" }.count == 1)
        // A re-serialised token fails its signature.
        let object = try JSONSerialization.jsonObject(with: token.bytes)
        let reserialised = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
        #expect(
            ((try shopper.pay(token: reserialised)["userErrors"] as? [[String: Any]])?.first?["message"] as? String)?
                .contains("Payment refused") == true)
    }

    @Test func aRedirectChallengeReturnsToTheShopAndPaymentResultPlacesTheOrderOnce() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        try shopper.setItems(["3001-M"])
        let paid = try shopper.pay(
            token: try TestApplePayToken.make(amount: try shopper.grandTotalMinor(), currency: "752").bytes,
            returnPage: "http://127.0.0.1:9/return?shop=1")
        let action = try #require(paid["action"] as? [String: Any])
        #expect(action["__typename"] as? String == "RedirectPaymentAction")
        let url = try #require(URL(string: action["url"] as? String ?? ""))
        let page = try rawRequest(port: emulator.port, method: "GET", path: url.path)
        #expect(page.status == 302)
        let location = try #require(page.headers["Location"])
        #expect(location.hasPrefix("http://127.0.0.1:9/return?shop=1&redirectResult="))
        let result = String(location.split(separator: "=").last ?? "")
        let query =
            "mutation R($f: Map!) { paymentResult(paymentMethodFields: $f) { __typename type userErrors { message } ... on PaymentResultSuccessPayload { order { id } } } }"
        let done =
            CentraShopper.data(try shopper.call(query, ["f": ["redirectResult": result, "shop": "1"]]))["paymentResult"]
            as? [String: Any]
        #expect(done?["type"] as? String == "SUCCESS", "\(String(describing: done))")
        let orderID = (done?["order"] as? [String: Any])?["id"] as? String
        // The same result again answers with the same order, and nothing is charged twice.
        let again =
            CentraShopper.data(try shopper.call(query, ["f": ["redirectResult": result]]))["paymentResult"]
            as? [String: Any]
        #expect((again?["order"] as? [String: Any])?["id"] as? String == orderID)
        #expect(emulator.ledger.entries().filter { $0.provider == "centra" }.count == 1)
        let bad =
            CentraShopper.data(try shopper.call(query, ["f": ["redirectResult": "res_forged"]]))["paymentResult"]
            as? [String: Any]
        #expect(bad?["type"] as? String == "FAILED" && bad?["__typename"] as? String == "PaymentResultFailedPayload")
    }

    @Test func aNativeChallengeCompletesWithDetailsAndPaymentData() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        try shopper.setItems(["3002-M"])
        let paid = try shopper.pay(
            token: try TestApplePayToken.make(amount: try shopper.grandTotalMinor(), currency: "752").bytes)
        let action = try #require(paid["action"] as? [String: Any])
        #expect(action["__typename"] as? String == "JavascriptPaymentAction")
        let adyen = try #require(action["formFields"] as? [String: Any])
        #expect(adyen["type"] as? String == "threeDS2")
        let paymentData = try #require(adyen["paymentData"] as? String)
        let token = try #require(
            try JSONSerialization.jsonObject(with: Data(base64Encoded: adyen["token"] as? String ?? "") ?? Data())
                as? [String: Any])
        let acs = try #require(URL(string: token["acsURL"] as? String ?? ""))
        let challenge = try rawRequest(port: emulator.port, method: "POST", path: acs.path)
        let threeDSResult = try #require(challenge.json["threeDSResult"] as? String)
        let done =
            CentraShopper.data(
                try shopper.call(
                    "mutation R($f: Map!) { paymentResult(paymentMethodFields: $f) { type ... on PaymentResultSuccessPayload { order { id } } } }",
                    ["f": ["details": ["threeDSResult": threeDSResult], "paymentData": paymentData]]))["paymentResult"]
            as? [String: Any]
        #expect(done?["type"] as? String == "SUCCESS")
        #expect(emulator.ledger.entries().filter { $0.provider == "centra" }.count == 1)
    }

    @Test func ingridBlocksTheFinalCallUntilTheWidgetEvent() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        _ = try rawRequest(
            port: emulator.port, method: "PUT", path: "/_sandbox/centra/store", body: Data(#"{"ingrid": true}"#.utf8))
        let shopper = CentraShopper(emulator)
        let total = try shopper.grandTotalMinor()
        let blocked = try shopper.pay(token: try TestApplePayToken.make(amount: total, currency: "752").bytes)
        #expect(
            (blocked["userErrors"] as? [[String: Any]])?.first?["message"] as? String == CentraRules.ingridUserError)
        #expect(blocked["action"] is NSNull)
        let event = CentraShopper.data(
            try shopper.call(
                "mutation I($p: Map!) { handleWidgetEvent(payload: $p) { userErrors { message } } }",
                ["p": ["expressCheckout": true]]))
        #expect(((event["handleWidgetEvent"] as? [String: Any])?["userErrors"] as? [Any])?.isEmpty == true)
        let paid = try shopper.pay(token: try TestApplePayToken.make(amount: total, currency: "752").bytes)
        #expect((paid["action"] as? [String: Any])?["__typename"] as? String == "SuccessPaymentAction")
    }

    @Test func aDeclinedProductIsAUserErrorAndNoCharge() throws {
        let emulator = try start()
        defer { emulator.shutdown() }
        let shopper = CentraShopper(emulator)
        try shopper.setItems(["4001-M"])
        let paid = try shopper.pay(
            token: try TestApplePayToken.make(amount: try shopper.grandTotalMinor(), currency: "752").bytes)
        #expect(
            ((paid["userErrors"] as? [[String: Any]])?.first?["message"] as? String)?.hasPrefix(
                "Payment refused: Refused") == true)
        #expect(emulator.ledger.entries().filter { $0.provider == "centra" }.isEmpty)
    }
}
