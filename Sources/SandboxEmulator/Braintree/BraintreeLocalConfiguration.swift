extension BraintreeEmulator {
    /// What `--env local` sets, by configuration variable, to point the driver at this emulator: its base URL and its
    /// test credentials.
    public static func localConfiguration(baseURL: String) -> [String: String] {
        [
            "BRAINTREE_CLIENT_API_URL": baseURL + "/braintree",
            "BRAINTREE_GRAPHQL_URL": baseURL + "/braintree/graphql",
            "BRAINTREE_TOKENIZATION_KEY": TestCredentials.braintreeTokenizationKey,
            "BRAINTREE_PUBLIC_KEY": TestCredentials.braintreePublicKey,
            "BRAINTREE_PRIVATE_KEY": TestCredentials.braintreePrivateKey,
        ]
    }
}
