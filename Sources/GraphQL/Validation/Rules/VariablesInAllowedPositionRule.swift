/// §5.8.5: a variable is used only where its type fits: the same type, or a non-null one where nullable is expected;
/// a nullable variable where non-null is expected only when a default (the variable's or the position's) covers it.
public enum VariablesInAllowedPositionRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.operationIndices.flatMap { index, operation -> [GraphQLError] in
            let definitions = Dictionary(operation.variables.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            return context.recursiveVariableUsages(ofOperation: index).compactMap { usage in
                guard let definition = definitions[usage.name], let expected = usage.type,
                    context.schema[definition.type.namedType] != nil
                else { return nil }
                var given = definition.type
                if expected.isNonNull && !given.isNonNull {
                    let hasDefault = definition.defaultValue.map { $0 != .null } ?? false
                    guard hasDefault || usage.hasLocationDefault else {
                        return mismatch(usage, definition, expected)
                    }
                    given = .nonNull(given)
                }
                return Schema.isSubtype(given, of: expected, in: context.schema)
                    ? nil : mismatch(usage, definition, expected)
            }
        }
    }

    private static func mismatch(
        _ usage: ValidationContext.VariableUsage, _ definition: VariableDefinition,
        _ expected: TypeReference
    ) -> GraphQLError {
        GraphQLError(
            "Variable \"$\(usage.name)\" of type \"\(definition.type)\" used in position expecting type \"\(expected)\".",
            locations: [definition.location, usage.location])
    }
}
