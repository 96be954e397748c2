/// §5.3.1: every selected field is defined on the type it is selected on (`__typename` is on every one).
public enum FieldsOnCorrectTypeRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.fields.compactMap { visit in
            guard let parent = visit.parentType, visit.definition == nil else { return nil }
            return GraphQLError(
                "Cannot query field \"\(visit.field.name)\" on type \"\(parent)\".", locations: [visit.field.location])
        }
    }
}
