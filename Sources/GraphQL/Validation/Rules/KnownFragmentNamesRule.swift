/// §5.5.2.1: every fragment spread names a fragment the document defines.
public enum KnownFragmentNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.spreads.keys.sorted().flatMap { context.spreads[$0]! }.compactMap { visit in
            context.fragments[visit.spread.name] == nil
                ? GraphQLError("Unknown fragment \"\(visit.spread.name)\".", locations: [visit.spread.location]) : nil
        }
    }
}
