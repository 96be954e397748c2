/// Not a rule of the spec, a limit of this server: fragments spread inside fragments at most `Parser.maxDepth` deep
/// (the parser bounds nesting within one definition; this bounds it across them), so execution never recurses
/// without bound. Fragment cycles are NoFragmentCycles' to report.
public enum FragmentDepthRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        let depth = depths(context)
        return context.operationIndices.compactMap { index, operation in
            let deepest = (context.spreads[index] ?? []).compactMap { depth[$0.spread.name] }.max() ?? 0
            return deepest > Parser.maxDepth
                ? GraphQLError(
                    "Fragments nest deeper than \(Parser.maxDepth) levels (\(deepest)).",
                    locations: [operation.location]) : nil
        }
    }

    /// Whether some fragment — spread by an operation or not — heads a chain of spreads deeper than the limit.
    static func anyTooDeep(_ context: ValidationContext) -> Bool {
        depths(context).values.contains { $0 > Parser.maxDepth }
    }

    /// The longest chain of spreads below each fragment, in an order where every fragment comes after the ones it
    /// spreads (an explicit stack: the chain itself may be long).
    private static func depths(_ context: ValidationContext) -> [String: Int] {
        var depth: [String: Int] = [:]
        var visiting = Set<String>()
        for fragment in context.document.fragments {
            var stack: [(name: String, expanded: Bool)] = [(fragment.name, false)]
            while let (name, expanded) = stack.popLast() {
                guard depth[name] == nil, let index = context.definitionIndex(ofFragment: name) else { continue }
                let children = (context.spreads[index] ?? []).map(\.spread.name)
                if expanded {
                    visiting.remove(name)
                    depth[name] = 1 + (children.compactMap { depth[$0] }.max() ?? 0)
                } else if !visiting.contains(name) {
                    visiting.insert(name)
                    stack.append((name, true))
                    for child in children where depth[child] == nil && !visiting.contains(child) {
                        stack.append((child, false))
                    }
                }
            }
        }
        return depth
    }
}
