extension CashAppEmulator {
    /// What `--env local` sets, by configuration variable, to point the driver at this emulator: its base URL and its
    /// test credentials.
    public static func localConfiguration(baseURL: String) -> [String: String] {
        [
            "AFTERPAY_API_URL": baseURL + "/afterpay",
            "AFTERPAY_PLUS_URL": baseURL + "/afterpay-plus",
            "CASHAPP_API_URL": baseURL + "/cashapp",
            "AFTERPAY_MERCHANT_ID": TestCredentials.afterpayMerchantID,
            "AFTERPAY_SECRET_KEY": TestCredentials.afterpaySecretKey,
            "AFTERPAY_SHOP_MERCHANT_ID": TestCredentials.afterpayShopMerchantID,
            "CASHAPP_CLIENT_ID": TestCredentials.cashAppClientID,
        ]
    }
}
