/// §5.7.1–2: every directive is defined, and used where its definition allows.
public enum KnownDirectivesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        context.directives.compactMap { visit in
            guard let definition = context.schema.directives[visit.directive.name] else {
                return GraphQLError(
                    "Unknown directive \"@\(visit.directive.name)\".", locations: [visit.directive.location])
            }
            guard definition.locations.contains(visit.location) else {
                return GraphQLError(
                    "Directive \"@\(visit.directive.name)\" may not be used on \(visit.location).",
                    locations: [visit.directive.location])
            }
            return nil
        }
    }
}
