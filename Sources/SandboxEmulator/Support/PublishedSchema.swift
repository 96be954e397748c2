import Foundation

/// The published GraphQL schemas the emulator serves, as bundled (see each `Schema/SOURCE.md`): Centra's Storefront
/// API and Braintree's API. Read when first asked for, never at start-up (Braintree's is 400 kB).
public enum PublishedSchema: String, CaseIterable, Sendable {
    case centra = "storefront_api_schema"
    case braintree = "schema"

    /// The SDL text, or nil when the file is missing from the resource bundle.
    public var sdl: String? {
        guard let url = Bundle.module.url(forResource: rawValue, withExtension: "graphql") else { return nil }
        return try? String(contentsOf: url, encoding: .utf8)
    }
}
