/// The emulator's Afterpay and Cash App test credentials (see `TestCredentials`): fixed, public, and useless anywhere
/// but here. NOT SECRET: published in this repository on purpose.
extension TestCredentials {
    /// The Afterpay v2 merchant id (the user half of Basic auth).
    public static let afterpayMerchantID = "100101382"
    /// The Afterpay v2 secret key (the password half of Basic auth).
    public static let afterpaySecretKey = "ap_test_emulator_7c2e9b41d5a8f603"
    /// The v3 button's `shopDirectoryMerchantId`.
    public static let afterpayShopMerchantID = "emulator-shop-1"
    /// The public v3 `shopDirectoryId` constant (Afterpay's US sandbox value).
    public static let afterpayShopDirectoryID = "cd6b7914412b407d80aaf81d855d1105"
    /// The Pay Kit client id: fixed per environment (this is the sandbox one), sent as `Authorization: Client <id>`.
    public static let cashAppClientID = "CAS-CI_AFTERPAY"
    /// What sign-payment hands out as the JWT's `externalMerchantId` and as `externalBrandId`: the Cash App scope ids.
    public static let afterpayExternalMerchantID = "MMI_emulator0001"
    public static let afterpayExternalBrandID = "BRAND_emulator0001"

    /// The key api-plus signs sign-payment JWTs with (ES256) and verifies them against at validate-payment.
    public static let afterpayJWTPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgU4qeNUcdYG1OiPcE
        TzE/H/ayq+IlNp1aASxgyeZT1P+hRANCAAQ6JSnf1nzi+pkB0OvwJpYVvxZcw5uU
        4bgFtLk8KhMo8oz1wKdwSJIwsgZeUxdexpy2TxS8DupkDC3dEQShebV1
        -----END PRIVATE KEY-----
        """

    /// The public half: a client may check a sign-payment JWT with it.
    public static let afterpayJWTPublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEOiUp39Z84vqZAdDr8CaWFb8WXMOb
        lOG4BbS5PCoTKPKM9cCncEiSMLIGXlMXXsactk8UvA7qZAwt3REEoXm1dQ==
        -----END PUBLIC KEY-----
        """

    /// The JWT header's `kid`.
    public static let afterpayJWTKeyID = "emulator-sign-1"
}
