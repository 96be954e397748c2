/// §5.4.2: a field or directive is given each argument once.
public enum UniqueArgumentNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.argumentLists.flatMap { visit -> [GraphQLError] in
            var seen: [String: SourceLocation] = [:]
            var errors: [GraphQLError] = []
            for a in visit.arguments {
                if let first = seen[a.name] {
                    errors.append(
                        GraphQLError(
                            "There can be only one argument named \"\(a.name)\".", locations: [first, a.location]))
                } else {
                    seen[a.name] = a.location
                }
            }
            return errors
        }
    }
}
