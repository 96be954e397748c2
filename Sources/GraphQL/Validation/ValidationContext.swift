/// What the validation rules look at, gathered in one walk of the document with the schema's types alongside (the
/// reference implementation's TypeInfo): every field with its parent type and definition, every argument with its
/// definition, every directive with where it stands, every fragment spread and inline fragment with its parent type,
/// and every variable usage with the type its position expects. Each rule then reads the lists it needs.
public struct ValidationContext {
    public struct FieldVisit {
        public var field: Field
        /// The composite type the field is selected on; nil when that type is itself unknown (already reported).
        public var parentType: String?
        public var definition: FieldDefinition?
    }

    public enum ArgumentOwner {
        case field(type: String, field: String)
        case directive(String)
    }

    public struct ArgumentsVisit {
        public var arguments: [Argument]
        public var definitions: [InputValueDefinition]?
        public var owner: ArgumentOwner
        public var location: SourceLocation
    }

    public struct DirectiveVisit {
        public var directive: Directive
        /// `FIELD`, `QUERY`, `FRAGMENT_SPREAD`, … (`__DirectiveLocation`).
        public var location: String
    }

    public struct SpreadVisit {
        public var spread: FragmentSpread
        public var parentType: String?
    }

    public struct InlineFragmentVisit {
        public var fragment: InlineFragment
        public var parentType: String?
    }

    public struct SelectionSetVisit {
        public var selections: [Selection]
        /// The composite type it selects from; nil when that type is unknown (already reported).
        public var parentType: String?
        /// An inline fragment's selections, which merge into the enclosing selection set's response.
        public var ofInlineFragment: Bool
    }

    public struct VariableUsage {
        public var name: String
        /// The type the position expects; nil when the position itself is unknown (already reported).
        public var type: TypeReference?
        /// The position has a default value of its own (an argument or input field with a default).
        public var hasLocationDefault: Bool
        public var location: SourceLocation
    }

    public let schema: Schema
    public let document: Document
    public private(set) var fragments: [String: FragmentDefinition] = [:]
    private var fragmentIndices: [String: Int] = [:]
    public private(set) var fields: [FieldVisit] = []
    public private(set) var argumentLists: [ArgumentsVisit] = []
    public private(set) var directives: [DirectiveVisit] = []
    public private(set) var inlineFragments: [InlineFragmentVisit] = []
    /// Every selection set of the document, in document order, with the type it selects from.
    public private(set) var selectionSets: [SelectionSetVisit] = []
    /// By definition index in the document: the spreads and variable usages directly inside it.
    public private(set) var spreads: [Int: [SpreadVisit]] = [:]
    public private(set) var variableUsages: [Int: [VariableUsage]] = [:]
    /// Object values written in the document (for unique input field names).
    public private(set) var objectValues: [(fields: [Value.ObjectField], location: SourceLocation)] = []

    private var current = 0

    init(schema: Schema, document: Document) {
        self.schema = schema
        self.document = document
        for f in document.fragments where fragments[f.name] == nil { fragments[f.name] = f }
        for (index, definition) in document.definitions.enumerated() {
            if case .fragment(let f) = definition, fragmentIndices[f.name] == nil { fragmentIndices[f.name] = index }
        }
        for (index, definition) in document.definitions.enumerated() {
            current = index
            switch definition {
            case .operation(let operation):
                walk(operation.directives, at: operation.operation.rawValue.uppercased())
                for v in operation.variables {
                    walk(v.directives, at: "VARIABLE_DEFINITION")
                    if let d = v.defaultValue { collectObjects(d, at: v.location) }
                }
                walk(operation.selectionSet, parent: schema.rootType(operation.operation)?.name)
            case .fragment(let fragment):
                walk(fragment.directives, at: "FRAGMENT_DEFINITION")
                walk(fragment.selectionSet, parent: compositeName(fragment.typeCondition))
            default:
                break
            }
        }
    }

    /// The name if it is a composite type of the schema.
    func compositeName(_ name: String?) -> String? {
        guard let name, schema[name]?.isComposite == true else { return nil }
        return name
    }

    private mutating func walk(_ selections: [Selection], parent: String?, ofInlineFragment: Bool = false) {
        selectionSets.append(
            SelectionSetVisit(selections: selections, parentType: parent, ofInlineFragment: ofInlineFragment))
        for selection in selections {
            switch selection {
            case .field(let field):
                let definition = parent.flatMap { schema.field(field.name, on: $0) }
                fields.append(FieldVisit(field: field, parentType: parent, definition: definition))
                walk(field.directives, at: "FIELD")
                walk(
                    field.arguments, definitions: definition?.arguments,
                    owner: .field(type: parent ?? "?", field: field.name), location: field.location)
                if let sub = field.selectionSet { walk(sub, parent: compositeName(definition?.type.namedType)) }
            case .fragmentSpread(let spread):
                spreads[current, default: []].append(SpreadVisit(spread: spread, parentType: parent))
                walk(spread.directives, at: "FRAGMENT_SPREAD")
            case .inlineFragment(let inline):
                inlineFragments.append(InlineFragmentVisit(fragment: inline, parentType: parent))
                walk(inline.directives, at: "INLINE_FRAGMENT")
                walk(
                    inline.selectionSet, parent: inline.typeCondition.map { compositeName($0) } ?? parent,
                    ofInlineFragment: true)
            }
        }
    }

    private mutating func walk(_ list: [Directive], at location: String) {
        for directive in list {
            directives.append(DirectiveVisit(directive: directive, location: location))
            walk(
                directive.arguments, definitions: schema.directives[directive.name]?.arguments,
                owner: .directive(directive.name),
                location: directive.location)
        }
    }

    private mutating func walk(
        _ arguments: [Argument], definitions: [InputValueDefinition]?, owner: ArgumentOwner, location: SourceLocation
    ) {
        argumentLists.append(
            ArgumentsVisit(arguments: arguments, definitions: definitions, owner: owner, location: location))
        for argument in arguments {
            let definition = definitions?.first { $0.name == argument.name }
            walkValue(
                argument.value, expected: definition?.type, hasDefault: definition?.defaultValue != nil,
                at: argument.location)
            collectObjects(argument.value, at: argument.location)
        }
    }

    private mutating func walkValue(
        _ value: Value, expected: TypeReference?, hasDefault: Bool, at location: SourceLocation
    ) {
        switch value {
        case .variable(let name):
            variableUsages[current, default: []].append(
                VariableUsage(name: name, type: expected, hasLocationDefault: hasDefault, location: location))
        case .list(let items):
            let item: TypeReference? = if case .list(let t)? = expected?.nullable { t } else { nil }
            for v in items { walkValue(v, expected: item, hasDefault: false, at: location) }
        case .object(let members):
            let input = expected.flatMap { schema[$0.namedType] }
            for m in members {
                let field = input?.inputFields[m.name]
                walkValue(m.value, expected: field?.type, hasDefault: field?.defaultValue != nil, at: location)
            }
        default:
            break
        }
    }

    private mutating func collectObjects(_ value: Value, at location: SourceLocation) {
        switch value {
        case .list(let items): for v in items { collectObjects(v, at: location) }
        case .object(let members):
            objectValues.append((members, location))
            for m in members { collectObjects(m.value, at: location) }
        default: break
        }
    }

    // MARK: Queries for rules

    /// The index of each definition that is an operation.
    public var operationIndices: [(Int, OperationDefinition)] {
        document.definitions.enumerated().compactMap { if case .operation(let o) = $1 { ($0, o) } else { nil } }
    }

    /// Where the (first) fragment of that name stands among the definitions: looked up, not searched for, so that a
    /// document of many fragments costs linear time in the rules that follow spreads.
    func definitionIndex(ofFragment name: String) -> Int? { fragmentIndices[name] }

    /// The fragments an operation uses, directly or through other fragments.
    public func fragmentsUsed(byDefinition index: Int) -> [Int] {
        var seen = Set<String>()
        var result: [Int] = []
        var queue = (spreads[index] ?? []).map(\.spread.name)
        while let name = queue.popLast() {
            guard !seen.contains(name), let i = definitionIndex(ofFragment: name) else { continue }
            seen.insert(name)
            result.append(i)
            queue.append(contentsOf: (spreads[i] ?? []).map(\.spread.name))
        }
        return result
    }

    /// Every variable usage of an operation, through its fragments too (§5.8.3).
    public func recursiveVariableUsages(ofOperation index: Int) -> [VariableUsage] {
        ([index] + fragmentsUsed(byDefinition: index)).flatMap { variableUsages[$0] ?? [] }
    }
}
