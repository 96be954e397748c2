/// §5.5.1.4: every fragment is used by some operation (directly or through other fragments).
public enum NoUnusedFragmentsRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var used = Set<Int>()
        for (index, _) in context.operationIndices { used.formUnion(context.fragmentsUsed(byDefinition: index)) }
        return context.document.definitions.enumerated().compactMap { index, definition in
            guard case .fragment(let f) = definition, !used.contains(index) else { return nil }
            return GraphQLError("Fragment \"\(f.name)\" is never used.", locations: [f.location])
        }
    }
}
