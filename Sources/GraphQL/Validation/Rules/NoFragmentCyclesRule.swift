/// §5.5.2.2: no fragment spreads itself, directly or through others (execution would never end).
public enum NoFragmentCyclesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        var reported = Set<String>()
        for fragment in context.document.fragments {
            // Depth-first from the fragment, along the spreads inside it, looking for the way back to it.
            var stack: [(name: String, via: [FragmentSpread])] = [(fragment.name, [])]
            var seen = Set<String>()
            while let (name, via) = stack.popLast() {
                guard let index = context.definitionIndex(ofFragment: name) else { continue }
                for visit in context.spreads[index] ?? [] {
                    let path = via + [visit.spread]
                    if visit.spread.name == fragment.name {
                        guard !reported.contains(fragment.name) else { continue }
                        reported.formUnion(path.map(\.name))
                        let through = path.dropLast().map { "\"\($0.name)\"" }
                        let suffix = through.isEmpty ? "" : " via \(through.joined(separator: ", "))"
                        errors.append(GraphQLError("Cannot spread fragment \"\(fragment.name)\" within itself\(suffix).",
                                                   locations: path.map(\.location)))
                    } else if !seen.contains(visit.spread.name) {
                        seen.insert(visit.spread.name)
                        stack.append((visit.spread.name, path))
                    }
                }
            }
        }
        return errors
    }
}
