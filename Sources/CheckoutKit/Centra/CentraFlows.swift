extension BuiltinFlows {
    /// The Centra express checkout, one step per Apple Pay sheet callback (docs/protocols/centra.md, "The provider and
    /// the flow"). Its variants differ in what the flow is given: a PDP item (added, and rolled back in `finally`
    /// unless the payment placed the order), the emulator's 3DS items (a challenge is a page in the shopper's browser),
    /// the Ingrid workaround first. What they share from the shipping contact on is a fragment each includes.
    static let centraExpressFlows = [
        Entry(PackageResources.centra_express_pay_json, fragment: true),
        Entry(PackageResources.centra_express_json),
        Entry(PackageResources.centra_express_pdp_json),
        Entry(PackageResources.centra_express_3ds_redirect_json, needsPerson: true),
        Entry(PackageResources.centra_express_3ds_native_json, needsPerson: true),
        Entry(PackageResources.centra_express_ingrid_json),
    ]
}
