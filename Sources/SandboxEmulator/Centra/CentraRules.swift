import Crypto
import Foundation

/// Every choice the Centra emulator makes where `docs/protocols/centra.md` and the schema leave it open: the store's
/// catalogue, prices, shipping, sessions, and the magic values that pick a payment scenario. They live here, and only
/// here, so each can change in one place.
public enum CentraRules {
    // MARK: Endpoint and credentials

    /// DECISION: the emulated Storefront API plugin's endpoint (a real store's is configured per plugin).
    public static let endpointPath = "/centra/graphql"
    /// The plugin's Session-mode token (`CENTRA_TOKEN`) and shared secret (`CENTRA_SHARED_SECRET`): test values.
    public static let pluginToken = "centra_test_plugin_token_3f9b2c71"
    public static let sharedSecret = "centra_test_shared_secret_a61d08e4"

    /// DECISION: a session token is good for 30 minutes after its last use; each response hands out a new one, and the
    /// one before it stays good too, so an answer lost on the way does not lose the session.
    static let sessionIdleLifetime: TimeInterval = 30 * 60
    /// Sessions kept at most (the oldest idle ones go first): the emulator stays small however many are started.
    static let sessionCapacity = 20_000

    static func newToken() -> String { "cst_" + SecureRandom.bytes(24).base64URLEncodedString() }
    static func newID(_ prefix: String) -> String { prefix + SecureRandom.bytes(8).hexString }

    // MARK: Store

    /// DECISION: one market, Sweden, prices in SEK (numeric 752, two decimals).
    static let currency = (code: "SEK", isoNumber: "752", denominator: 100, name: "Swedish krona")
    static let country = (code: "SE", name: "Sweden")
    static let languageCode = "en"

    struct Product: Sendable {
        var item: String
        var displayItemID: Int
        var name: String
        var size: String
        /// Minor units (öre).
        var price: Int
        var scenario: PaymentScenario
    }

    /// What the final `paymentInstructions` does with an authorised Apple Pay token, chosen by the selection's items.
    public enum PaymentScenario: String, Sendable {
        /// `SuccessPaymentAction`: the order is placed.
        case success
        /// `RedirectPaymentAction` to the emulator's 3DS challenge page, which returns to `paymentReturnPage`.
        case redirect
        /// `JavascriptPaymentAction` with an Adyen `threeDS2` challenge action in `formFields`.
        case native3DS
        /// `FormPaymentAction`: an HTML form that posts `MD` and `PaRes` to `paymentReturnPage` (a 3DS1-style bank
        /// page).
        case form
        /// A refused authorisation: `userErrors` and no order.
        case declined
    }

    /// DECISION: the catalogue. Item ids are `<product>-<size>`; the magic products pick the payment scenario.
    static let products: [Product] = [
        Product(item: "1001-M", displayItemID: 1001, name: "Linen shirt", size: "M", price: 79_900, scenario: .success),
        Product(item: "1002-M", displayItemID: 1002, name: "Wool socks", size: "M", price: 14_950, scenario: .success),
        Product(
            item: "3001-M", displayItemID: 3001, name: "3DS redirect jacket", size: "M", price: 129_900,
            scenario: .redirect),
        Product(
            item: "3002-M", displayItemID: 3002, name: "3DS native coat", size: "M", price: 189_900,
            scenario: .native3DS),
        Product(
            item: "3003-M", displayItemID: 3003, name: "3DS form gloves", size: "M", price: 39_900, scenario: .form),
        Product(
            item: "4001-M", displayItemID: 4001, name: "Declined scarf", size: "M", price: 24_900, scenario: .declined),
    ]

    static func product(_ item: String) -> Product? { products.first { $0.item == item } }

    /// A new session's selection: one linen shirt, so a cart express checkout has something to pay for.
    static let startingItem = "1001-M"

    struct ShippingMethod: Sendable {
        var id: Int
        var name: String
        /// Minor units, by shipping country (ISO code); `nil` means not offered there.
        var prices: [String: Int]
        var defaultPrice: Int?

        func price(for country: String?) -> Int? {
            guard let country else { return defaultPrice }
            return prices[country] ?? defaultPrice
        }
    }

    /// DECISION: two shipping methods, priced per country; express only within the Nordics.
    static let shippingMethods: [ShippingMethod] = [
        ShippingMethod(
            id: 1, name: "Standard", prices: ["SE": 4_900, "NO": 9_900, "DK": 7_900, "FI": 7_900, "US": 19_900],
            defaultPrice: 14_900),
        ShippingMethod(
            id: 2, name: "Express", prices: ["SE": 9_900, "NO": 14_900, "DK": 12_900, "FI": 12_900], defaultPrice: nil),
    ]

    /// Countries the store ships to.
    static func shipsTo(_ country: String) -> Bool { country.count == 2 && country == country.uppercased() }

    // MARK: Adyen behind Centra

    /// The Adyen client key and context the `express_checkout_adyen` widget hands out (test values).
    public static let adyenClientKey = "test_EMULATORCLIENTKEY000000000000"
    static let adyenContext = "test"
    static let adyenMerchantAccount = "CheckoutDriverEmulatorECOM"

    /// Every request needs this header to reach `expressCheckoutWidgets`.
    static let sharedSecretHeader = "X-Shared-Secret"

    /// DECISION: the Ingrid store flag is off unless `PUT /_sandbox/centra/store {"ingrid": true}` turns it on; while
    /// on, the final payment fails with a userError until `handleWidgetEvent(payload: {expressCheckout: true})`.
    static let ingridUserError =
        "Ingrid delivery options are not set: call handleWidgetEvent with {expressCheckout: true} first"

    /// How long an order stays in a session's `order` query.
    static let orderCapacityPerSession = 20
}
