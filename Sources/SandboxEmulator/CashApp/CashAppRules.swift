import Crypto
import Foundation
import WireTypes

/// Every choice the Afterpay + Cash App Pay emulator makes where `docs/protocols/cashapp-afterpay.md` and the shared
/// contract leave it open: mount points, ids, lifetimes, the magic amounts, the test card. They live here, and only
/// here, so that each can change in one place.
public enum CashAppRules {
    // MARK: Mount points (what `--env local` points the base URLs at)

    static let afterpayPrefix = "/afterpay"
    static let plusPrefix = "/afterpay-plus"
    static let cashAppPrefix = "/cashapp"
    static let sandboxPrefix = "/_sandbox/cashapp"

    // MARK: Identifiers

    /// Lowercase Crockford base32: no i, l, o, u, so an id read aloud or off a screen is unambiguous.
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz")

    static func randomText(_ count: Int) -> String {
        String(SecureRandom.bytes(count).map { alphabet[Int($0) & 31] })
    }

    /// DECISION: checkout tokens are the version prefix ("002." server checkouts, "003." v3 buttons, as Afterpay's
    /// are) plus 48 random base32 characters.
    static func newCheckoutToken() -> String { "002." + randomText(48) }
    static func newButtonToken() -> String { "003." + randomText(48) }

    /// DECISION: Afterpay order ids are 12 digits, counted up from here (unique within one emulator run).
    static let firstOrderID = 100_000_000_001

    /// DECISION: `errorId` and payment-event ids are 16 random hex digits.
    static func newErrorID() -> String { SecureRandom.bytes(8).hexString }

    /// DECISION: Cash App ids are the documented prefix plus 24 base32 characters; a new customer id per approved
    /// request (the emulator models no accounts), so a client passing another request's customer is caught.
    static func newCashAppID(_ prefix: String) -> String { prefix + randomText(24) }

    /// DECISION: the sandbox customer's cashtag.
    static let cashtag = "$emulator"

    // MARK: Lifetimes

    /// A v2 checkout token (`expires`) and a v3 button (`confirmMustBeCalledBefore`): one hour, as the contract says.
    static let checkoutLifetime: TimeInterval = 60 * 60
    /// The v3 virtual card's `cardValidUntil`: 30 minutes after confirm.
    static let cardLifetime: TimeInterval = 30 * 60
    /// The JWT header's `ttl` and the payload's `exp - iat`, in seconds.
    static let jwtTTL = 600
    /// DECISION: a customer request expires an hour after it was made; one still PENDING then is DECLINED.
    static let requestLifetime: TimeInterval = 60 * 60

    // MARK: Settings (PUT /_sandbox/cashapp/settings)

    /// How a PENDING customer request gets decided.
    public enum Approval: String, Sendable {
        /// The request decides by itself on its `autoApproveAfterPolls`-th GET, as the customer would.
        case auto
        /// Only `POST /_sandbox/cashapp/requests/:id/approve|decline` (or the approve page) decides it.
        case manual
    }

    struct Settings: Sendable, Equatable {
        var approval = Approval.auto
        var autoApproveAfterPolls = 2
        var triggerLifetimeSeconds = 30
        var grantLifetimeSeconds = 600

        var json: JSON {
            [
                "approval": .string(approval.rawValue), "autoApproveAfterPolls": JSON(autoApproveAfterPolls),
                "triggerLifetimeSeconds": JSON(triggerLifetimeSeconds),
                "grantLifetimeSeconds": JSON(grantLifetimeSeconds),
            ]
        }
    }

    /// DECISION: the settings' integers must be 1 or more (0 polls or a 0-second lifetime would mean "never pending").
    static let settingsRange = 1...86_400

    // MARK: Scenarios (magic amounts, in cents)

    /// What the customer does in Cash App, chosen by the customer request's (first action's) amount.
    enum CustomerChoice: Equatable {
        case approve
        case decline
        /// APPROVED with `grants: []` (Pay Kit counts it as declined).
        case approveWithoutGrants
        /// Never decides by itself: stays PENDING (a manual approve still approves it).
        case never
    }

    static func customerChoice(forAmount cents: Int) -> CustomerChoice {
        switch cents {
        case 1313: .decline
        case 1414: .approveWithoutGrants
        case 1515: .never
        default: .approve
        }
    }

    /// validate-payment answers FAILED (and v3 confirm 402 payment_declined) for a checkout of this amount.
    static let validationFailsAmount = 1616
    /// Capture answers 201 DECLINED / CAPTURE_DECLINED and auth 402 DECLINED / AUTH_DECLINED for this amount.
    static let paymentDeclinedAmount = 1717

    // MARK: Money

    /// The only currency the emulated US merchant takes.
    static let currency = "USD"
    static let currencySymbol = "$"

    // MARK: Scopes and the v3 card

    /// The Cash App scope ids a customer request may name (the iOS docs use the brand, the Android docs the merchant).
    static let scopeIDs: Set<String> = [
        TestCredentials.afterpayExternalBrandID, TestCredentials.afterpayExternalMerchantID,
    ]

    /// DECISION: the one-time virtual card v3 confirm hands out: Visa's well-known test PAN.
    static let virtualCard: [String: String] = [
        "cardType": "VISA", "cardNumber": "4111111111111111", "cvc": "123", "expiry": "2029-12",
    ]

    /// DECISION: channels a customer request may name (the three Cash App documents).
    static let channels: Set<String> = ["IN_APP", "ONLINE", "IN_PERSON"]

    /// How many objects of each kind the emulator keeps: the oldest go first, so it stays small however it is driven.
    static let capacity = 50_000

    static let scenariosHelp = """
        Afterpay + Cash App Pay (under /afterpay, /afterpay-plus and /cashapp), magic amounts in USD:
          13.13  the customer declines in Cash App (the customer request becomes DECLINED)
          14.14  approved without grants (Pay Kit counts it as declined)
          15.15  the customer never decides (the request stays PENDING: poll with a timeout)
          16.16  validate-payment answers status FAILED; v3 confirm answers 402 payment_declined
          17.17  capture answers 201 DECLINED (CAPTURE_DECLINED); auth answers 402 DECLINED (AUTH_DECLINED)
          other  approved on the request's 2nd poll (with one ACTIVE grant); capture and auth approved
        Decide by hand: POST /_sandbox/cashapp/requests/ID/approve or /decline, or open the request's mobile_url.
        PUT /_sandbox/cashapp/settings {"approval": "auto"|"manual", "autoApproveAfterPolls": 2,
          "triggerLifetimeSeconds": 30, "grantLifetimeSeconds": 600} (any subset; these are the defaults).
        """
}
