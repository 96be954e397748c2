extension BuiltinFlows {
    /// Apple Pay through Braintree, both halves: the phone (a token), the client SDK (configuration, tokenization into
    /// a nonce) and the merchant server (charge, or authorize then capture). The declined variant uses the sandbox's
    /// processor-declined range and passes when Braintree refuses.
    static let braintreeFlows = [
        Entry(PackageResources.braintree_apple_pay_json),
        Entry(PackageResources.braintree_apple_pay_auth_capture_json),
        Entry(PackageResources.braintree_apple_pay_declined_json),
    ]
}
