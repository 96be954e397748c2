/// §5.4.2.1: every required argument (non-null, no default) is given.
public enum ProvidedRequiredArgumentsRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.argumentLists.flatMap { visit -> [GraphQLError] in
            guard let definitions = visit.definitions else { return [] }
            return definitions.filter { d in
                d.type.isNonNull && d.defaultValue == nil && !visit.arguments.contains { $0.name == d.name }
            }.map { d in
                switch visit.owner {
                case .field(_, let field):
                    GraphQLError(
                        "Field \"\(field)\" argument \"\(d.name)\" of type \"\(d.type)\" is required, but it was not provided.",
                        locations: [visit.location])
                case .directive(let name):
                    GraphQLError(
                        "Directive \"@\(name)\" argument \"\(d.name)\" of type \"\(d.type)\" is required, but it was not provided.",
                        locations: [visit.location])
                }
            }
        }
    }
}
