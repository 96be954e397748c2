/// §5.7.3 and §5.8.1's premise: every type a document names — in variable definitions and type conditions — exists.
public enum KnownTypeNamesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        func check(_ name: String, at location: SourceLocation) {
            if context.schema[name] == nil {
                errors.append(GraphQLError("Unknown type \"\(name)\".", locations: [location]))
            }
        }
        for definition in context.document.definitions {
            switch definition {
            case .operation(let o): for v in o.variables { check(v.type.namedType, at: v.location) }
            case .fragment(let f): check(f.typeCondition, at: f.location)
            default: break
            }
        }
        for visit in context.inlineFragments {
            if let condition = visit.fragment.typeCondition { check(condition, at: visit.fragment.location) }
        }
        return errors
    }
}
