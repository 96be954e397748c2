/// §5.6.1: every literal value fits the type of its position (arguments, and variables' defaults); variables inside
/// are left to VariablesInAllowedPosition.
public enum ValuesOfCorrectTypeRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        func check(_ value: Value, _ type: TypeReference, at location: SourceLocation) {
            do { _ = try InputCoercion.literal(value, to: type, variables: nil, in: context.schema) } catch {
                let at = error.path.isEmpty ? "" : " at \"\(error.path.joined(separator: "."))\""
                errors.append(
                    GraphQLError(
                        "Expected value of type \"\(type)\"\(at), found \(value.text); \(error.message)",
                        locations: [location]))
            }
        }
        for visit in context.argumentLists {
            guard let definitions = visit.definitions else { continue }
            for a in visit.arguments {
                if let d = definitions.first(where: { $0.name == a.name }) { check(a.value, d.type, at: a.location) }
            }
        }
        for operation in context.document.operations {
            for v in operation.variables {
                guard let d = v.defaultValue, context.schema[v.type.namedType]?.isInput == true else { continue }
                check(d, v.type, at: v.location)
            }
        }
        return errors
    }
}
