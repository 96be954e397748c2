/// §5.5.1.1: each fragment's name is unique in the document.
public enum UniqueFragmentNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var seen: [String: SourceLocation] = [:]
        var errors: [GraphQLError] = []
        for fragment in context.document.fragments {
            if let first = seen[fragment.name] {
                errors.append(
                    GraphQLError(
                        "There can be only one fragment named \"\(fragment.name)\".",
                        locations: [first, fragment.location]))
            } else {
                seen[fragment.name] = fragment.location
            }
        }
        return errors
    }
}
