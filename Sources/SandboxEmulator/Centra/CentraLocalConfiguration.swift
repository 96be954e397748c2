extension CentraEmulator {
    /// What `--env local` sets, by configuration variable, to point the driver at this emulator: its base URL and its
    /// test credentials.
    public static func localConfiguration(baseURL: String) -> [String: String] {
        [
            "CENTRA_API_URL": baseURL + "/centra/graphql",
            "CENTRA_TOKEN": CentraRules.pluginToken,
            "CENTRA_SHARED_SECRET": CentraRules.sharedSecret,
        ]
    }
}
