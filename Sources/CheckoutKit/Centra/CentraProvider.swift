extension Provider {
    /// Centra's Storefront API with Adyen Apple Pay (docs/protocols/centra.md).
    public static let centra = Provider(
        name: "centra",
        variables: [
            .init(
                name: "CENTRA_API_URL", meaning: "the store's Storefront API endpoint", defaultValue: nil,
                isSecret: false),
            .init(name: "CENTRA_TOKEN", meaning: "the plugin's Session-mode token", defaultValue: nil, isSecret: true),
            .init(
                name: "CENTRA_SHARED_SECRET", meaning: "shared secret for expressCheckoutWidgets", defaultValue: nil,
                isSecret: true),
        ],
        operations: CentraOperations.all,
        flows: BuiltinFlows.centraExpressFlows,
        // The shopper's session token, which every later call of the checkout sends.
        keptCredentials: [JSONPath(components: [.key("centra"), .key("session")])],
        section: { (field) throws(Diagnostic) in _ = try CentraSection(field) })
}
