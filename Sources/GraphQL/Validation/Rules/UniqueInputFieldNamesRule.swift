/// §5.6.3: an input object literal names each field once.
public enum UniqueInputFieldNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.objectValues.flatMap { object -> [GraphQLError] in
            var seen = Set<String>()
            return object.fields.compactMap { field in
                seen.insert(field.name).inserted
                    ? nil
                    : GraphQLError(
                        "There can be only one input field named \"\(field.name)\".", locations: [object.location])
            }
        }
    }
}
