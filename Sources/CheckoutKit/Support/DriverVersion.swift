/// The driver's version: `--version` prints it, and providers that want to know the caller (Afterpay's required
/// `User-Agent`, its `X-Afterpay-SDK` header) are told it.
public enum DriverVersion {
    public static let current = "0.1.0"
}
