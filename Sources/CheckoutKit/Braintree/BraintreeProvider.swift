extension Provider {
    /// Braintree's Apple Pay path: the client API and the GraphQL API (docs/protocols/braintree.md).
    public static let braintree = Provider(
        name: "braintree",
        variables: [
            .init(
                name: "BRAINTREE_CLIENT_API_URL", meaning: "client API host",
                defaultValue: "https://api.sandbox.braintreegateway.com", isSecret: false),
            .init(
                name: "BRAINTREE_GRAPHQL_URL", meaning: "GraphQL API",
                defaultValue: "https://payments.sandbox.braintree-api.com/graphql", isSecret: false),
            .init(
                name: "BRAINTREE_TOKENIZATION_KEY", meaning: "client-side authorization", defaultValue: nil,
                isSecret: true),
            // Braintree calls it public: an identifier (client tokens carry it in their fingerprint), not a secret.
            // Masking it would corrupt every client token printed.
            .init(
                name: "BRAINTREE_PUBLIC_KEY", meaning: "server-side Basic auth user (a public identifier)",
                defaultValue: nil, isSecret: false),
            .init(
                name: "BRAINTREE_PRIVATE_KEY", meaning: "server-side Basic auth password", defaultValue: nil,
                isSecret: true),
        ],
        operations: BraintreeOperations.all,
        flows: BuiltinFlows.braintreeFlows)
}
