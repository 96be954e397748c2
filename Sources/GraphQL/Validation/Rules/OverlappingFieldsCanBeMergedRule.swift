/// §5.3.2 Field Selection Merging: the fields that answer to one response key must be one field — the same name and
/// the same arguments, unless their parents can never be the same object — and must return shapes that merge, to
/// every depth.
///
/// The algorithm is the reference implementation's. Each selection set's fields are collected once (inline
/// fragments merged in, fragment spreads listed) and cached; the fields of a set are compared with each other, with
/// each fragment it spreads, and fragment with fragment; and every fragment pair compared is remembered, so the cost
/// stays close to linear in the document instead of growing with every path through its fragments. A document that
/// still needs more comparisons than `budget` is refused rather than validated for ever.
public enum OverlappingFieldsCanBeMergedRule: ValidationRule {
    public static let followsSpreadsRecursively = true

    /// Comparison steps one document may take (the reference implementation's bound).
    static let budget = 500_000

    public static func validate(_ context: ValidationContext) -> [GraphQLError] {
        let finder = ConflictFinder(context)
        var errors: [GraphQLError] = []
        for set in context.selectionSets where !set.ofInlineFragment {
            // An inline fragment's fields are compared within the set it merges into; one field alone has nothing to
            // merge with (its own sub-selection is a set of its own).
            guard set.selections.count > 1 || set.selections.first.map(isInlineFragment) == true else { continue }
            for conflict in finder.conflicts(within: set.selections, parent: set.parentType) {
                errors.append(
                    GraphQLError(
                        "Fields \"\(conflict.responseKey)\" conflict because \(conflict.reason). "
                            + "Use different aliases on the fields to fetch both if this was intentional.",
                        locations: conflict.fields1 + conflict.fields2))
            }
            if finder.remaining < 0 {
                errors.append(
                    GraphQLError("Validation aborted: the document needs more than \(budget) field comparisons."))
                break
            }
        }
        return errors
    }

    private static func isInlineFragment(_ selection: Selection) -> Bool {
        if case .inlineFragment = selection { true } else { false }
    }
}

/// Two fields under one response key that cannot be merged, and why.
private struct Conflict {
    var responseKey: String
    var reason: String
    var fields1: [SourceLocation]
    var fields2: [SourceLocation]
}

/// The fields of one selection set by response key (in the order they first appear), with the fragments it spreads.
private final class CollectedFields {
    struct Entry {
        var parentType: String?
        var field: Field
        /// Only an object's or interface's own fields: meta-fields such as `__typename` have none here, as in the
        /// reference implementation.
        var definition: FieldDefinition?
    }

    let id: Int
    var keys: [String] = []
    var entries: [String: [Entry]] = [:]
    /// Names of the fragments spread, each once, in the order they first appear.
    var spreads: [String] = []

    init(id: Int) { self.id = id }
}

private final class ConflictFinder {
    private struct SetKey: Hashable {
        var parent: String?
        /// A selection set is known by where its first selection stands: no two sets of a document share it.
        var start: SourceLocation
    }

    private struct FieldsAndFragment: Hashable {
        var fields: Int
        var fragment: String
    }

    private struct FragmentPair: Hashable {
        var first: String
        var second: String
        init(_ a: String, _ b: String) { (first, second) = a < b ? (a, b) : (b, a) }
    }

    private let context: ValidationContext
    private var collected: [SetKey: CollectedFields] = [:]
    /// Pairs compared, each with whether the comparison took the parents as mutually exclusive: a pair compared as
    /// exclusive must be compared again when it is not (the stricter comparison), never the other way round.
    private var comparedFieldsAndFragments: [FieldsAndFragment: Bool] = [:]
    private var comparedFragments: [FragmentPair: Bool] = [:]
    private(set) var remaining = OverlappingFieldsCanBeMergedRule.budget

    init(_ context: ValidationContext) { self.context = context }

    private var schema: Schema { context.schema }

    /// Conflicts among the fields of one selection set, through the fragments it spreads too.
    func conflicts(within selections: [Selection], parent: String?) -> [Conflict] {
        var conflicts: [Conflict] = []
        let fields = collect(selections, parent: parent)
        for key in fields.keys {
            let list = fields.entries[key] ?? []
            for i in list.indices {
                for j in list.indices where j > i {
                    if let c = conflict(key, list[i], list[j], parentsExclusive: false) { conflicts.append(c) }
                }
            }
        }
        if !fields.spreads.isEmpty && (!fields.keys.isEmpty || fields.spreads.count > 1) {
            for (i, fragment) in fields.spreads.enumerated() {
                collectBetween(fields, andFragment: fragment, parentsExclusive: false, into: &conflicts)
                for other in fields.spreads[(i + 1)...] {
                    collectBetween(fragment: fragment, andFragment: other, parentsExclusive: false, into: &conflicts)
                }
            }
        }
        return conflicts
    }

    // MARK: Collecting

    private func collect(_ selections: [Selection], parent: String?) -> CollectedFields {
        guard let first = selections.first else { return CollectedFields(id: -1) }
        let key = SetKey(parent: parent, start: first.location)
        if let cached = collected[key] { return cached }
        let fields = CollectedFields(id: collected.count)
        var spread = Set<String>()
        collect(selections, parent: parent, into: fields, spread: &spread)
        collected[key] = fields
        return fields
    }

    private func collect(
        _ selections: [Selection], parent: String?, into fields: CollectedFields, spread: inout Set<String>
    ) {
        for selection in selections {
            switch selection {
            case .field(let field):
                let type = parent.flatMap { schema[$0] }
                let definition = type.flatMap { $0.isObject || $0.isInterface ? $0.fields[field.name] : nil }
                if fields.entries[field.responseKey] == nil { fields.keys.append(field.responseKey) }
                fields.entries[field.responseKey, default: []].append(
                    .init(parentType: parent, field: field, definition: definition))
            case .fragmentSpread(let s):
                // A fragment that does not exist is KnownFragmentNames' to report; it has no fields to compare.
                if context.fragments[s.name] != nil, spread.insert(s.name).inserted { fields.spreads.append(s.name) }
            case .inlineFragment(let inline):
                let type = inline.typeCondition.map { schema[$0]?.name } ?? parent
                collect(inline.selectionSet, parent: type, into: fields, spread: &spread)
            }
        }
    }

    private func fields(ofFragment name: String) -> CollectedFields? {
        guard let fragment = context.fragments[name] else { return nil }
        return collect(fragment.selectionSet, parent: schema[fragment.typeCondition]?.name)
    }

    // MARK: Comparing

    /// The fields of a set against those of a fragment it meets, and of every fragment that fragment spreads.
    private func collectBetween(
        _ fields: CollectedFields, andFragment name: String, parentsExclusive: Bool, into conflicts: inout [Conflict]
    ) {
        remaining -= 1
        guard !fields.keys.isEmpty, remaining >= 0 else { return }
        let pair = FieldsAndFragment(fields: fields.id, fragment: name)
        if let exclusive = comparedFieldsAndFragments[pair], parentsExclusive || !exclusive { return }
        comparedFieldsAndFragments[pair] = parentsExclusive
        guard let other = self.fields(ofFragment: name), other !== fields else { return }
        collectBetween(fields, other, parentsExclusive: parentsExclusive, into: &conflicts)
        for nested in other.spreads {
            collectBetween(fields, andFragment: nested, parentsExclusive: parentsExclusive, into: &conflicts)
        }
    }

    /// Two fragments against each other, and each against the fragments the other spreads.
    private func collectBetween(
        fragment a: String, andFragment b: String, parentsExclusive: Bool, into conflicts: inout [Conflict]
    ) {
        remaining -= 2
        guard a != b, remaining >= 0 else { return }
        let pair = FragmentPair(a, b)
        if let exclusive = comparedFragments[pair], parentsExclusive || !exclusive { return }
        comparedFragments[pair] = parentsExclusive
        guard let fieldsA = fields(ofFragment: a), let fieldsB = fields(ofFragment: b) else { return }
        collectBetween(fieldsA, fieldsB, parentsExclusive: parentsExclusive, into: &conflicts)
        for nested in fieldsB.spreads {
            collectBetween(fragment: a, andFragment: nested, parentsExclusive: parentsExclusive, into: &conflicts)
        }
        for nested in fieldsA.spreads {
            collectBetween(fragment: nested, andFragment: b, parentsExclusive: parentsExclusive, into: &conflicts)
        }
    }

    /// Every field of one collection against each field of the other under the same response key.
    private func collectBetween(
        _ first: CollectedFields, _ second: CollectedFields, parentsExclusive: Bool, into conflicts: inout [Conflict]
    ) {
        guard !first.keys.isEmpty, !second.keys.isEmpty else { return }
        for key in first.keys {
            remaining -= 1
            guard let others = second.entries[key] else { continue }
            for a in first.entries[key] ?? [] {
                for b in others {
                    if let c = conflict(key, a, b, parentsExclusive: parentsExclusive) { conflicts.append(c) }
                }
            }
        }
    }

    /// Sub-selections of two fields that share a response key: fields against fields, against each other's
    /// fragments, and fragments against fragments.
    private func conflicts(
        between first: [Selection], _ parent1: String?, and second: [Selection], _ parent2: String?,
        parentsExclusive: Bool
    ) -> [Conflict] {
        var conflicts: [Conflict] = []
        let fields1 = collect(first, parent: parent1)
        let fields2 = collect(second, parent: parent2)
        collectBetween(fields1, fields2, parentsExclusive: parentsExclusive, into: &conflicts)
        for fragment in fields2.spreads {
            collectBetween(fields1, andFragment: fragment, parentsExclusive: parentsExclusive, into: &conflicts)
        }
        for fragment in fields1.spreads {
            collectBetween(fields2, andFragment: fragment, parentsExclusive: parentsExclusive, into: &conflicts)
        }
        for a in fields1.spreads {
            for b in fields2.spreads {
                collectBetween(fragment: a, andFragment: b, parentsExclusive: parentsExclusive, into: &conflicts)
            }
        }
        return conflicts
    }

    private func conflict(
        _ key: String, _ a: CollectedFields.Entry, _ b: CollectedFields.Entry, parentsExclusive: Bool
    ) -> Conflict? {
        remaining -= 2
        guard remaining >= 0 else { return nil }
        // Two different object types are never the same object, so fields on them may differ freely; an interface or
        // union may be any of its types, now or in a later version of the schema.
        let exclusive =
            parentsExclusive
            || (a.parentType != b.parentType && isObject(a.parentType) && isObject(b.parentType))
        if !exclusive {
            if a.field.name != b.field.name {
                return Conflict(
                    responseKey: key, reason: "\"\(a.field.name)\" and \"\(b.field.name)\" are different fields",
                    fields1: [a.field.location], fields2: [b.field.location])
            }
            if !Self.sameArguments(a.field.arguments, b.field.arguments) {
                return Conflict(
                    responseKey: key, reason: "they have differing arguments", fields1: [a.field.location],
                    fields2: [b.field.location])
            }
        }
        let type1 = a.definition?.type
        let type2 = b.definition?.type
        if let type1, let type2, typesConflict(type1, type2) {
            return Conflict(
                responseKey: key, reason: "they return conflicting types \"\(type1)\" and \"\(type2)\"",
                fields1: [a.field.location], fields2: [b.field.location])
        }
        if let sub1 = a.field.selectionSet, let sub2 = b.field.selectionSet {
            let nested = conflicts(
                between: sub1, type1?.namedType, and: sub2, type2?.namedType, parentsExclusive: exclusive)
            guard !nested.isEmpty else { return nil }
            return Conflict(
                responseKey: key,
                reason: nested.map { "subfields \"\($0.responseKey)\" conflict because \($0.reason)" }.joined(
                    separator: " and "),
                fields1: [a.field.location] + nested.flatMap(\.fields1),
                fields2: [b.field.location] + nested.flatMap(\.fields2))
        }
        return nil
    }

    private func isObject(_ name: String?) -> Bool { name.flatMap { schema[$0] }?.isObject == true }

    /// Lists and non-null must match exactly; leaf types must be the same type. Composite types never conflict
    /// here: their fields are compared, one level down.
    private func typesConflict(_ a: TypeReference, _ b: TypeReference) -> Bool {
        switch (a, b) {
        case (.list(let x), .list(let y)): return typesConflict(x, y)
        case (.list, _), (_, .list): return true
        case (.nonNull(let x), .nonNull(let y)): return typesConflict(x, y)
        case (.nonNull, _), (_, .nonNull): return true
        case (.named(let x), .named(let y)):
            let leaf = schema[x]?.isLeaf == true || schema[y]?.isLeaf == true
            return leaf && x != y
        }
    }

    /// The same argument names with the same values as written (an object's fields in any order).
    static func sameArguments(_ a: [Argument], _ b: [Argument]) -> Bool {
        guard a.count == b.count else { return false }
        return a.allSatisfy { argument in
            guard let other = b.last(where: { $0.name == argument.name }) else { return false }
            return canonical(argument.value) == canonical(other.value)
        }
    }

    private static func canonical(_ value: Value) -> Value {
        switch value {
        case .list(let items): .list(items.map(canonical))
        case .object(let fields):
            .object(
                fields.map { Value.ObjectField(name: $0.name, value: canonical($0.value)) }
                    .enumerated().sorted { ($0.element.name, $0.offset) < ($1.element.name, $1.offset) }.map(\.element))
        default: value
        }
    }
}
