extension BuiltinFlows {
    /// Apple Pay through Braintree, both halves: the phone (a token), the client SDK (configuration, tokenization into
    /// a nonce) and the merchant server (charge, or authorize then capture). The declined variant uses the sandbox's
    /// processor-declined range and passes when Braintree refuses.
    static let braintreeFlows = [
        Entry(PackageResources.braintree_apple_pay_json, retired: retired),
        Entry(PackageResources.braintree_apple_pay_auth_capture_json, retired: retired),
        Entry(PackageResources.braintree_apple_pay_declined_json, retired: retired),
    ]

    /// One amount, one variable: `amount_minor` told the token a second copy of the amount, which could differ from the
    /// charge.
    static let retired = [
        "amount_minor":
            "the flow's one amount is 'amount' now, in major units (10.00, or 10 for 10.00): the token's total and the charge both come from it"
    ]
}
