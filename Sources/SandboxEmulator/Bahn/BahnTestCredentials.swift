/// The emulator's Bahn test credentials (see `TestCredentials`): fixed, public, and useless anywhere but here.
/// NOT SECRET: published in this repository on purpose.
extension TestCredentials {
    /// The emulator's `Bn-Api-Key`.
    public static let bahnAPIKey = "bn_test_emulator_5c1f0e9a7d3b42c8"

    /// The registered client key that JWS bodies are signed with (private half, for `--env local`).
    public static let bahnClientPrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+vvRLoz6ysdZ25I+
        MR1DZJhEzHfGcyoNq2dHUFrxqJKhRANCAAQQYmKnPnnf9yihoCJ3G/0oMVLTPv8G
        +67UWae+lWXElxOPy+hyNQyvOvnrcysfPJHo2Y86TaoA5iBuDomugIAj
        -----END PRIVATE KEY-----
        """

    /// The registered client public key the emulator verifies JWS bodies against.
    public static let bahnClientPublicKeyPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEGJipz553/cooaAidxv9KDFS0z7/
        Bvuu1FmnvpVlxJcTj8vocjUMrzr563MrHzyR6NmPOk2qAOYgbg6JroCAIw==
        -----END PUBLIC KEY-----
        """

    /// The JWS `kid` of the registered client key.
    public static let bahnKeyID = "emulator-client-key-1"

    /// The secret the emulator signs Bahn webhooks with.
    public static let bahnWebhookSecret = "whsec_emulator_8a4d2f61b0c9e7a3"
}
