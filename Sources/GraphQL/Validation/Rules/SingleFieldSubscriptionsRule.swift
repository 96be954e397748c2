/// §5.2.3.1 Single Root Field: a subscription selects exactly one top-level field, which is not an introspection
/// field. The fields are collected as execution would (fragments followed, each once; inline fragments and spreads
/// whose type condition the subscription type does not meet left out), and `@skip`/`@include` are not allowed at
/// that level: with no variables yet, which fields remain could not be known.
public enum SingleFieldSubscriptionsRule: ValidationRule {
    public static let followsSpreadsRecursively = true

    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        guard let root = context.schema.subscriptionType else { return [] }
        var errors: [GraphQLError] = []
        for (_, operation) in context.operationIndices where operation.operation == .subscription {
            let who = operation.name.map { "Subscription \"\($0)\"" } ?? "Anonymous Subscription"
            var collector = RootFields(context: context, root: root)
            collector.collect(operation.selectionSet)
            if !collector.conditional.isEmpty {
                errors.append(
                    GraphQLError(
                        "\(who) must not use `@skip` or `@include` directives in the top level selection.",
                        locations: collector.conditional))
                continue
            }
            if collector.keys.isEmpty {
                errors.append(GraphQLError("\(who) must select one top level field.", locations: [operation.location]))
            } else if collector.keys.count > 1 {
                errors.append(
                    GraphQLError(
                        "\(who) must select only one top level field.",
                        locations: collector.keys.dropFirst().flatMap { collector.fields[$0] ?? [] }.map(\.location)))
            }
            for key in collector.keys {
                let fields = collector.fields[key] ?? []
                if let first = fields.first, first.name.hasPrefix("__") {
                    errors.append(
                        GraphQLError(
                            "\(who) must not select an introspection top level field.",
                            locations: fields.map(\.location)))
                }
            }
        }
        return errors
    }

    /// The top-level fields of a subscription by response key, in order, as execution's field collection finds them.
    private struct RootFields {
        let context: ValidationContext
        let root: String
        var keys: [String] = []
        var fields: [String: [Field]] = [:]
        /// Where `@skip` or `@include` stands at the top level.
        var conditional: [SourceLocation] = []
        private var visited = Set<String>()

        init(context: ValidationContext, root: String) {
            self.context = context
            self.root = root
        }

        mutating func collect(_ selections: [Selection]) {
            for selection in selections {
                let conditions = selection.directives.filter { $0.name == "skip" || $0.name == "include" }
                if !conditions.isEmpty {
                    conditional += conditions.map(\.location)
                    continue
                }
                switch selection {
                case .field(let field):
                    if fields[field.responseKey] == nil { keys.append(field.responseKey) }
                    fields[field.responseKey, default: []].append(field)
                case .inlineFragment(let inline):
                    if applies(inline.typeCondition) { collect(inline.selectionSet) }
                case .fragmentSpread(let spread):
                    guard !visited.contains(spread.name), let fragment = context.fragments[spread.name],
                        applies(fragment.typeCondition)
                    else { continue }
                    visited.insert(spread.name)
                    collect(fragment.selectionSet)
                }
            }
        }

        private func applies(_ condition: String?) -> Bool {
            guard let condition else { return true }
            guard let type = context.schema[condition] else { return false }
            return condition == root || (type.isAbstract && context.schema.isPossible(root, of: condition))
        }
    }
}
