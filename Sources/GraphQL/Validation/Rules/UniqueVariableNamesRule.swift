/// §5.8.1: an operation defines each variable once.
public enum UniqueVariableNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.document.operations.flatMap { operation -> [GraphQLError] in
            var seen: [String: SourceLocation] = [:]
            var errors: [GraphQLError] = []
            for v in operation.variables {
                if let first = seen[v.name] {
                    errors.append(
                        GraphQLError(
                            "There can be only one variable named \"$\(v.name)\".", locations: [first, v.location]))
                } else {
                    seen[v.name] = v.location
                }
            }
            return errors
        }
    }
}
