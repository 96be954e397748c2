/// §5.3.3: a leaf field (scalar, enum) has no selection; a composite one must have one.
public enum ScalarLeafsRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.fields.compactMap { visit in
            guard let definition = visit.definition, let type = context.schema[definition.type.namedType] else {
                return nil
            }
            let field = visit.field
            if type.isLeaf, field.selectionSet != nil {
                return GraphQLError(
                    "Field \"\(field.name)\" must not have a selection since type \"\(definition.type)\" has no subfields.",
                    locations: [field.location])
            }
            if !type.isLeaf, field.selectionSet == nil {
                return GraphQLError(
                    "Field \"\(field.name)\" of type \"\(definition.type)\" must have a selection of subfields. Did you mean \"\(field.name) { ... }\"?",
                    locations: [field.location])
            }
            return nil
        }
    }
}
