import Foundation

/// Afterpay + Cash App Pay wire facts (docs/protocols/cashapp-afterpay.md) and the client's choices where that file
/// says UNCONFIRMED or leaves a value open, in one place.
public enum CashAppProtocol {
    static let checkoutsPath = "/v2/checkouts"
    static let capturePath = "/v2/payments/capture"
    static let authPath = "/v2/payments/auth"
    static func deferredCapturePath(_ orderID: String) -> String { "/v2/payments/\(pathSegment(orderID))/capture" }
    static func paymentPath(_ orderID: String) -> String { "/v2/payments/\(pathSegment(orderID))" }
    /// Afterpay's "Get Payment By Token": the segment is literally `token:<checkout token>`.
    static func paymentByTokenPath(_ token: String) -> String { "/v2/payments/token:\(pathSegment(token))" }
    static let signPath = "/v2/payments/sign-payment"
    static let validatePath = "/v2/payments/validate-payment"
    static let buttonPath = "/v3/button"
    static let buttonConfirmPath = "/v3/button/confirm"
    static let requestsPath = "/customer-request/v1/requests"
    static func requestPath(_ id: String) -> String { "\(requestsPath)/\(pathSegment(id))" }

    /// The public v3 `shopDirectoryId` of the US sandbox.
    static let sandboxShopDirectoryID = "cd6b7914412b407d80aaf81d855d1105"

    /// Afterpay requires a User-Agent naming the integration and the merchant.
    static func userAgent(merchantID: String) -> String {
        "checkout-driver/\(DriverVersion.current) (Swift; Linux) Merchant/\(merchantID)"
    }

    /// DECISION: where the consumer would be sent back after the Afterpay checkout. Cash App Pay requires both URLs
    /// but never uses them for an in-app approval, so placeholders that name the driver do.
    static let defaultConfirmURL = "https://checkout-driver.invalid/afterpay/confirm"
    static let defaultCancelURL = "https://checkout-driver.invalid/afterpay/cancel"
    /// DECISION: the consumer e-mail of a checkout when none is given.
    static let defaultEmail = "shopper@checkout-driver.invalid"

    /// UNCONFIRMED (the iOS docs say brandId, the Android docs merchantId): the customer request's `scope_id`.
    /// Default brand; `--scope merchant` sends the merchant id.
    public enum Scope: String, CaseIterable, Sendable { case brand, merchant }

    /// Pay Kit polls the customer request every second.
    static let pollInterval: Double = 1
    /// Pay Kit refreshes the approval link before `refreshes_at`. DECISION: the wait reads the request again right
    /// after `refreshes_at` when that comes before the next poll (so a long --poll-interval never shows a stale link),
    /// but never sooner than this after the last read.
    static let refreshFloor: Double = 0.5
    /// The integration guide: "Set a timeout for this state" (Pay Kit itself waits forever).
    static let approvalTimeout: Double = 120
    /// Pay Kit's per-request timeout for the Cash App API.
    static let cashAppRequestTimeout: Double = 5

    /// UNCONFIRMED: a declined capture or auth may come as 201 with `status: DECLINED` or as 402. Both are read the
    /// same: a Payment body with status DECLINED is a decline whatever the HTTP status.
    static func isDecline(_ payment: JSON) -> Bool { payment["status"]?.stringValue == "DECLINED" }

    /// Payment states in which the order is authorised and money is still open to capture.
    /// UNCONFIRMED: what Afterpay answers to a second `button/confirm` of one checkout. The emulator answers it with
    /// the same card; the driver settles a lost confirm by repeating it.
    static let repeatedConfirm =
        "the emulator answers a repeated confirm with the same card; Afterpay's behaviour is UNCONFIRMED"
    /// The payment states that show a capture happened.
    static let capturedStates: Set<String> = ["PARTIALLY_CAPTURED", "CAPTURED"]
    static let capturableStates: Set<String> = ["AUTH_APPROVED", "PARTIALLY_CAPTURED"]
    /// Payment states nothing more happens in: a read that finds one settles an outcome left open on the payment.
    static let finalPaymentStates: Set<String> = ["CAPTURED", "VOIDED", "EXPIRED", "CAPTURE_DECLINED", "AUTH_DECLINED"]

    private static func pathSegment(_ s: String) -> String { PercentEncoding.pathSegment(s) }
}
