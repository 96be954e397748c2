extension Provider {
    /// Bahn PaymentIntents with Apple Pay (docs/protocols/bahn.md).
    public static let bahn = Provider(
        name: "bahn",
        variables: [
            .init(
                name: "BAHN_API_URL", meaning: "Bahn base URL", defaultValue: "https://bn.cakedigibank.tech",
                isSecret: false),
            .init(name: "BAHN_API_KEY", meaning: "Bn-Api-Key", defaultValue: nil, isSecret: true),
            .init(
                name: "BAHN_SIGNING_KEY",
                meaning: "path to the PEM private key that signs JWS bodies (or the PEM itself)", defaultValue: nil,
                isSecret: true,
                pemOrPath: true),
            .init(name: "BAHN_KEY_ID", meaning: "JWS kid, when Bahn assigned one", defaultValue: nil, isSecret: true),
            .init(
                name: "BAHN_RESPONSE_KEY",
                meaning: "Bahn's public key (PEM, or a path to it): a JWS answer must verify with it",
                defaultValue: nil, isSecret: false),
            .init(
                name: "BAHN_WEBHOOK_SECRET", meaning: "verifies webhook signatures (bahn listen)", defaultValue: nil,
                isSecret: true),
            .init(
                name: "BAHN_WEBHOOK_PORT", meaning: "port of a run's own webhook listener", defaultValue: nil,
                isSecret: false),
        ],
        operations: BahnOperations.all,
        flows: BuiltinFlows.bahnFlows,
        services: [BahnWebhookService.recipe],
        section: { (field) throws(Diagnostic) in _ = try BahnSection(field) })
}
