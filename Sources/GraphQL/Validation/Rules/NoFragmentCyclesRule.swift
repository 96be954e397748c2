/// §5.5.2.2: no fragment spreads itself, directly or through others (execution would never end).
///
/// The reference implementation's walk: every fragment is entered once over the whole document, with the path of
/// spreads that led to it, so a spread back onto the path is a cycle and the cost is linear in the document (an
/// explicit stack: a chain of fragments may be long).
public enum NoFragmentCyclesRule: ValidationRule {
    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        var errors: [GraphQLError] = []
        var visited = Set<String>()
        for fragment in context.document.fragments where !visited.contains(fragment.name) {
            var frames: [(name: String, spreads: [FragmentSpread], next: Int)] = []
            var path: [FragmentSpread] = []
            var pathIndex: [String: Int] = [:]
            func enter(_ name: String) {
                visited.insert(name)
                pathIndex[name] = path.count
                let spreads =
                    context.definitionIndex(ofFragment: name).map { (context.spreads[$0] ?? []).map(\.spread) } ?? []
                frames.append((name, spreads, 0))
            }
            enter(fragment.name)
            while let top = frames.indices.last {
                guard frames[top].next < frames[top].spreads.count else {
                    pathIndex[frames[top].name] = nil
                    frames.removeLast()
                    if !frames.isEmpty { path.removeLast() }
                    continue
                }
                let spread = frames[top].spreads[frames[top].next]
                frames[top].next += 1
                if let cycleIndex = pathIndex[spread.name] {
                    let cycle = Array(path[cycleIndex...]) + [spread]
                    let via = cycle.dropLast().map { "\"\($0.name)\"" }
                    errors.append(
                        GraphQLError(
                            "Cannot spread fragment \"\(spread.name)\" within itself\(via.isEmpty ? "" : " via \(via.joined(separator: ", "))").",
                            locations: cycle.map(\.location)))
                } else if !visited.contains(spread.name), context.fragments[spread.name] != nil {
                    path.append(spread)
                    enter(spread.name)
                }
            }
        }
        return errors
    }
}
