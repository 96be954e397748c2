/// The emulator's Braintree test credentials (see `TestCredentials`): fixed, public, and useless anywhere but here.
/// NOT SECRET: published in this repository on purpose.
extension TestCredentials {
    /// The sandbox merchant the client API and GraphQL API belong to.
    public static let braintreeMerchantID = "emulatormerchant01"
    /// The client API's tokenization key (`<environment>_<random>_<merchant id>`), sent as `Client-Key`.
    public static let braintreeTokenizationKey = "sandbox_emu7k2q9_emulatormerchant01"
    /// The GraphQL API's key pair: `Authorization: Basic base64(public:private)`.
    public static let braintreePublicKey = "emulatorpublic0001"
    public static let braintreePrivateKey = "bt_private_emulator_4c9e1a7f3d2b8e60"
}
