/// §5.8.3: every variable used — in the operation or any fragment it spreads — is defined by the operation.
public enum NoUndefinedVariablesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.operationIndices.flatMap { index, operation -> [GraphQLError] in
            let defined = Set(operation.variables.map(\.name))
            var reported = Set<String>()
            return context.recursiveVariableUsages(ofOperation: index).compactMap { usage in
                guard !defined.contains(usage.name), reported.insert(usage.name).inserted else { return nil }
                let by = operation.name.map { " by operation \"\($0)\"" } ?? ""
                return GraphQLError(
                    "Variable \"$\(usage.name)\" is not defined\(by).", locations: [usage.location, operation.location])
            }
        }
    }
}
