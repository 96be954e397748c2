extension BahnEmulator {
    /// What `--env local` sets, by configuration variable, to point the driver at this emulator: its base URL and its
    /// test credentials.
    public static func localConfiguration(baseURL: String) -> [String: String] {
        [
            "BAHN_API_URL": baseURL,
            "BAHN_API_KEY": TestCredentials.bahnAPIKey,
            "BAHN_SIGNING_KEY": TestCredentials.bahnClientPrivateKeyPEM,
            "BAHN_KEY_ID": TestCredentials.bahnKeyID,
            "BAHN_WEBHOOK_SECRET": TestCredentials.bahnWebhookSecret,
        ]
    }
}
