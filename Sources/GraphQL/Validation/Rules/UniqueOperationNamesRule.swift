/// §5.2.1.1: each named operation's name is unique in the document.
public enum UniqueOperationNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var seen: [String: SourceLocation] = [:]
        var errors: [GraphQLError] = []
        for (_, operation) in context.operationIndices {
            guard let name = operation.name else { continue }
            if let first = seen[name] {
                errors.append(
                    GraphQLError(
                        "There can be only one operation named \"\(name)\".", locations: [first, operation.location]))
            } else {
                seen[name] = operation.location
            }
        }
        return errors
    }
}
