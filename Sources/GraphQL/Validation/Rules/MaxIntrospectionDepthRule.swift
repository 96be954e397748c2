/// Not a rule of the spec but one the reference implementation recommends and applies: an introspection query may
/// nest the list fields of `__Type` (`fields`, `interfaces`, `possibleTypes`, `inputFields`) at most two deep, through
/// fragments too, so no client can make the schema describe itself into an answer of unbounded size.
public enum MaxIntrospectionDepthRule: ValidationRule {
    public static let followsSpreadsRecursively = true

    static let maxListDepth = 3
    private static let listFields: Set<String> = ["fields", "interfaces", "possibleTypes", "inputFields"]

    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        var checker = Checker(context: context)
        // Every `__schema` and `__type` field of every definition; below one that is reported, no deeper one again.
        func walk(_ selections: [Selection]) {
            for selection in selections {
                switch selection {
                case .field(let field):
                    if field.name == "__schema" || field.name == "__type",
                        checker.exceeds([selection], depth: 0, visited: [:])
                    {
                        errors.append(GraphQLError("Maximum introspection depth exceeded", locations: [field.location]))
                    } else if let sub = field.selectionSet {
                        walk(sub)
                    }
                case .inlineFragment(let inline): walk(inline.selectionSet)
                case .fragmentSpread: break
                }
            }
        }
        for definition in context.document.definitions {
            switch definition {
            case .operation(let operation): walk(operation.selectionSet)
            case .fragment(let fragment): walk(fragment.selectionSet)
            default: break
            }
        }
        return errors
    }

    private struct Checker {
        let context: ValidationContext
        /// Fragments whose walk ended within the limit, with the greatest depth they were entered at.
        var passed: [String: Int] = [:]

        mutating func exceeds(_ selections: [Selection], depth: Int, visited: [String: Int]) -> Bool {
            var visited = visited
            for selection in selections {
                switch selection {
                case .field(let field):
                    var level = depth
                    if MaxIntrospectionDepthRule.listFields.contains(field.name) {
                        level += 1
                        if level >= MaxIntrospectionDepthRule.maxListDepth { return true }
                    }
                    if let sub = field.selectionSet, exceeds(sub, depth: level, visited: visited) { return true }
                case .inlineFragment(let inline):
                    if exceeds(inline.selectionSet, depth: depth, visited: visited) { return true }
                case .fragmentSpread(let spread):
                    // Entered before at this depth or deeper (a cycle, or an answer already known): nothing new.
                    if visited[spread.name, default: -1] >= depth || passed[spread.name, default: -1] >= depth {
                        continue
                    }
                    guard let fragment = context.fragments[spread.name] else { continue }
                    visited[spread.name] = depth
                    if exceeds(fragment.selectionSet, depth: depth, visited: visited) { return true }
                    passed[spread.name] = depth
                }
            }
            return false
        }
    }
}
