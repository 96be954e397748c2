/// §5.8.4: every variable an operation defines is used, in it or in a fragment it spreads.
public enum NoUnusedVariablesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.operationIndices.flatMap { index, operation -> [GraphQLError] in
            let used = Set(context.recursiveVariableUsages(ofOperation: index).map(\.name))
            return operation.variables.filter { !used.contains($0.name) }.map { v in
                let op = operation.name.map { " in operation \"\($0)\"" } ?? ""
                return GraphQLError("Variable \"$\(v.name)\" is never used\(op).", locations: [v.location])
            }
        }
    }
}
