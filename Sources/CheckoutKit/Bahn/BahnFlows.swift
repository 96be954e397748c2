extension BuiltinFlows {
    /// The README's main job: a whole native Apple Pay checkout through Bahn, with the driver playing the
    /// phone (a fresh EC_v1 token) and the merchant backend (create, confirm, poll, webhook).
    static let bahnFlows = [Entry(PackageResources.bahn_apple_pay_json)]
}
