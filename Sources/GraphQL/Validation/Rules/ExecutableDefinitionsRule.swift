/// §5.1.1: an executable document holds only operations and fragments.
public enum ExecutableDefinitionsRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.document.definitions.compactMap { definition in
            let name: String? =
                switch definition {
                case .operation, .fragment: nil
                case .schema, .schemaExtension: "schema"
                case .type(let t), .typeExtension(let t): t.name
                case .directive(let d): "@" + d.name
                }
            return name.map {
                GraphQLError("The \"\($0)\" definition is not executable.", locations: [definition.location])
            }
        }
    }
}
