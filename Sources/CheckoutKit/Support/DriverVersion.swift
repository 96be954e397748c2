import CBuildStamp

/// The driver's version: `--version` prints it, and providers that want to know the caller (Afterpay's required
/// `User-Agent`, its `X-Afterpay-SDK` header, Braintree's client metadata) are told it.
public enum DriverVersion {
    /// The release this source is: what the wire carries, the same in every build of it (a recording made by one build
    /// replays under another).
    public static let current = "0.1.0"

    /// The build's own version, as `Scripts/package` stamped it from `git describe` (`0.1.0+812.g66b953d`: the release,
    /// the commits since it and the commit), or the release's outside git; nil for a build nobody stamped (`swift
    /// build`).
    public static let stamped: String? = text(checkout_driver_stamped_version())

    /// The commit the build was made from, when stamped.
    public static let commit: String? = text(checkout_driver_stamped_commit())

    /// What `--version` says: the build's version and commit, or that it is a development build.
    public static var described: String {
        guard let stamped else { return "\(current) (a development build: Scripts/package stamps the commit)" }
        return commit.map { "\(stamped) (commit \($0))" } ?? "\(stamped) (built outside git: no commit)"
    }

    private static func text(_ pointer: UnsafePointer<CChar>) -> String? {
        let text = String(cString: pointer)
        return text.isEmpty ? nil : text
    }
}
