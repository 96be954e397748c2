/// §5.2.2.1: an anonymous operation is the document's only operation.
public enum LoneAnonymousOperationRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        let operations = context.document.operations
        guard operations.count > 1 else { return [] }
        return operations.filter { $0.name == nil }.map {
            GraphQLError("This anonymous operation must be the only defined operation.", locations: [$0.location])
        }
    }
}
