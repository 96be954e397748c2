extension Provider {
    /// Cash App Pay through Afterpay (docs/protocols/cashapp-afterpay.md).
    public static let cashApp = Provider(
        name: "cashapp",
        variables: [
            .init(
                name: "AFTERPAY_API_URL", meaning: "Afterpay Online API v2",
                defaultValue: "https://global-api-sandbox.afterpay.com", isSecret: false),
            .init(
                name: "AFTERPAY_PLUS_URL", meaning: "sign / validate / v3 button host",
                defaultValue: "https://api-plus.us-sandbox.afterpay.com", isSecret: false),
            .init(name: "AFTERPAY_MERCHANT_ID", meaning: "v2 Basic auth user", defaultValue: nil, isSecret: true),
            .init(name: "AFTERPAY_SECRET_KEY", meaning: "v2 Basic auth password", defaultValue: nil, isSecret: true),
            .init(
                name: "AFTERPAY_SHOP_MERCHANT_ID", meaning: "v3 button shopDirectoryMerchantId", defaultValue: nil,
                isSecret: true),
            .init(
                name: "CASHAPP_API_URL", meaning: "Cash App Customer Request API",
                defaultValue: "https://sandbox.api.cash.app", isSecret: false),
            .init(
                name: "CASHAPP_CLIENT_ID", meaning: "Pay Kit client id (fixed and public per environment)",
                defaultValue: "CAS-CI_AFTERPAY", isSecret: false),
        ],
        operations: CashAppOperations.all,
        flows: BuiltinFlows.cashAppFlows,
        // The Afterpay checkout token and its signed JWT, which validate and confirm take; the redirect URL is sent as
        // the customer request's redirect_url, and Afterpay may build it with the checkout token in it.
        keptCredentials: [
            CashAppState.root.appending("token"), CashAppState.root.appending("jwt"),
            CashAppState.root.appending("redirectUri"),
        ],
        section: { (field) throws(Diagnostic) in _ = try CashAppSection(field) })
}
