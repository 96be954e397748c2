/// §5.4.1: every argument is defined by its field or directive.
public enum KnownArgumentNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.argumentLists.flatMap { visit -> [GraphQLError] in
            guard let definitions = visit.definitions else { return [] }  // the field or directive itself is unknown
            return visit.arguments.filter { a in !definitions.contains { $0.name == a.name } }.map { a in
                switch visit.owner {
                case .field(let type, let field):
                    GraphQLError(
                        "Unknown argument \"\(a.name)\" on field \"\(type).\(field)\".", locations: [a.location])
                case .directive(let name):
                    GraphQLError("Unknown argument \"\(a.name)\" on directive \"@\(name)\".", locations: [a.location])
                }
            }
        }
    }
}
