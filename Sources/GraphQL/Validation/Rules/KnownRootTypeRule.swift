/// §6.2 (the schema must define the operation's root type): a mutation or subscription against a schema with none
/// is refused before execution, like any other invalid document.
public enum KnownRootTypeRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.document.operations.compactMap { operation in
            context.schema.rootType(operation.operation) == nil
                ? GraphQLError(
                    "Schema is not configured to execute \(operation.operation.rawValue) operation.",
                    locations: [operation.location]) : nil
        }
    }
}
