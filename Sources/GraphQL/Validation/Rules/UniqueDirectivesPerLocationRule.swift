/// §5.7.3: a non-repeatable directive appears at most once in one place.
public enum UniqueDirectivesPerLocationRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        func check(_ directives: [Directive]) {
            var seen: [String: SourceLocation] = [:]
            for d in directives where context.schema.directives[d.name]?.repeatable != true {
                if let first = seen[d.name] {
                    errors.append(
                        GraphQLError(
                            "The directive \"@\(d.name)\" can only be used once at this location.",
                            locations: [first, d.location]))
                } else {
                    seen[d.name] = d.location
                }
            }
        }
        for definition in context.document.definitions {
            switch definition {
            case .operation(let o):
                check(o.directives)
                for v in o.variables { check(v.directives) }
            case .fragment(let f): check(f.directives)
            default: break
            }
        }
        for visit in context.fields { check(visit.field.directives) }
        for visit in context.inlineFragments { check(visit.fragment.directives) }
        for index in context.spreads.keys.sorted() {
            for visit in context.spreads[index]! { check(visit.spread.directives) }
        }
        return errors
    }
}
