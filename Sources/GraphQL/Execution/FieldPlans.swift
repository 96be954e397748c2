import Foundation

/// One response key of a selection set on an object type: the fields merged under it (§6.3.2) and the definition
/// they select (nil for `__typename`).
struct PlannedField {
    let key: String
    let fields: [Field]
    let definition: FieldDefinition?
}

/// The fields each selection set of one document selects on each object type, worked out once and kept with the
/// document. A client sends the same few documents again and again, and collecting fields (fragments merged, type
/// conditions applied, definitions looked up) cost more than resolving them.
///
/// A plan is a pure function of the document, the schema and the variables' values of `@skip`/`@include`; a document
/// that uses either gets no plans (`GraphQLService` decides), so a plan here depends on nothing that changes by
/// request.
final class FieldPlans: @unchecked Sendable {
    // @unchecked: `plans` is only touched under `lock` (a pthread lock, as the service's cache is).
    private let lock = NSLock()
    private var plans: [Key: [PlannedField]] = [:]

    /// A selection set is named by the address of its storage: the document's arrays are never mutated and live as
    /// long as these plans (both are kept in one `Prepared`), so no two selection sets share one while a plan is kept.
    struct Key: Hashable {
        let first: UInt
        /// The further selection sets merged under one response key (rare: the same key selected twice).
        let others: [UInt]
        let objectType: String
    }

    func plan(_ selectionSets: [[Selection]], on objectType: String, make: () -> [PlannedField]) -> [PlannedField] {
        let others = selectionSets.count > 1 ? selectionSets.dropFirst().map(Self.address) : []
        let key = Key(first: selectionSets.first.map(Self.address) ?? 0, others: others, objectType: objectType)
        if let known = lock.withLock({ plans[key] }) { return known }
        let made = make()
        lock.withLock { plans[key] = made }
        return made
    }

    private static func address(_ selections: [Selection]) -> UInt {
        selections.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
}
