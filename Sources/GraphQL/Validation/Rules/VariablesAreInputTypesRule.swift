/// §5.8.2: a variable's type is a scalar, an enum or an input object (wrapped or not).
public enum VariablesAreInputTypesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.document.operations.flatMap(\.variables).compactMap { v in
            guard let type = context.schema[v.type.namedType], !type.isInput else { return nil }
            return GraphQLError(
                "Variable \"$\(v.name)\" cannot be non-input type \"\(v.type)\".", locations: [v.location])
        }
    }
}
