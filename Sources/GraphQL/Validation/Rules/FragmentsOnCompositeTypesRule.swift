/// §5.5.1.3: a fragment's type condition is an object, interface or union.
public enum FragmentsOnCompositeTypesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        for fragment in context.document.fragments {
            if let type = context.schema[fragment.typeCondition], !type.isComposite {
                errors.append(
                    GraphQLError(
                        "Fragment \"\(fragment.name)\" cannot condition on non composite type \"\(type.name)\".",
                        locations: [fragment.location]))
            }
        }
        for visit in context.inlineFragments {
            if let condition = visit.fragment.typeCondition, let type = context.schema[condition], !type.isComposite {
                errors.append(
                    GraphQLError(
                        "Fragment cannot condition on non composite type \"\(type.name)\".",
                        locations: [visit.fragment.location]))
            }
        }
        return errors
    }
}
