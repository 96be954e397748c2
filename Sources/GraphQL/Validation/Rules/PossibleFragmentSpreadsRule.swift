/// §5.5.2.3: a fragment is spread only where its type and the parent type can both hold some object.
public enum PossibleFragmentSpreadsRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        let schema = context.schema
        func possible(_ fragmentType: String, _ parentType: String) -> Bool {
            // The same type always fits, even an interface nothing implements yet.
            fragmentType == parentType
                || !schema.possibleTypes(of: fragmentType).isDisjoint(with: schema.possibleTypes(of: parentType))
        }
        var errors: [GraphQLError] = []
        for visit in context.inlineFragments {
            guard let parent = visit.parentType, let condition = context.compositeName(visit.fragment.typeCondition)
            else { continue }
            if !possible(condition, parent) {
                errors.append(
                    GraphQLError(
                        "Fragment cannot be spread here as objects of type \"\(parent)\" can never be of type \"\(condition)\".",
                        locations: [visit.fragment.location]))
            }
        }
        for visit in context.spreads.keys.sorted().flatMap({ context.spreads[$0]! }) {
            guard let parent = visit.parentType, let fragment = context.fragments[visit.spread.name],
                let condition = context.compositeName(fragment.typeCondition)
            else { continue }
            if !possible(condition, parent) {
                errors.append(
                    GraphQLError(
                        "Fragment \"\(fragment.name)\" cannot be spread here as objects of type \"\(parent)\" can never be of type \"\(condition)\".",
                        locations: [visit.spread.location]))
            }
        }
        return errors
    }
}
