extension BuiltinFlows {
    /// Cash App Pay through Afterpay, one step per SDK call (docs/protocols/cashapp-afterpay.md, "The provider and the
    /// flows"). The variants differ in how the payment ends: captured at once, authorised (captured later with `cashapp
    /// capture`), a virtual card from the Afterpay Button, or the customer's decline (the emulator's 13.13) as the
    /// expected outcome. Each waits for the customer's approval in Cash App.
    static let cashAppFlows = [
        Entry(PackageResources.cashapp_server_json, needsPerson: true),
        Entry(PackageResources.cashapp_server_auth_json, needsPerson: true),
        Entry(PackageResources.cashapp_button_json, needsPerson: true),
        Entry(PackageResources.cashapp_declined_json, needsPerson: true),
    ]
}
