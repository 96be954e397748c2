import TestSupport

@testable import GraphQL

/// Executable documents made at random over a schema, from a seed (the same seed, the same documents): fields with
/// aliases that collide, arguments right and wrong, variables declared well and badly, inline fragments and named
/// fragments on fitting and unfitting types, directives, introspection, subscriptions with one root field or more.
/// Mostly plausible, with a small chance of each mistake, so that about half of them are valid — for the
/// differential test, where graphql-core says which ones are.
struct DocumentGenerator {
    private var random: SplitMix64
    private let schema: Schema
    private let composites: [String]
    /// How often mistakes are made, relative to the base rates below (a big schema offers more chances for one).
    private let mistakes: Double

    // The document being made.
    private var variables: [(name: String, type: String)] = []
    private var fragments: [String: String] = [:]
    private var fragmentOrder: [String] = []
    private var fragmentTypes: [String: String] = [:]

    init(schema: Schema, seed: UInt64, mistakes: Double = 1) {
        self.schema = schema
        self.mistakes = mistakes
        self.random = SplitMix64(seed: seed)
        composites = schema.typeOrder.filter { !$0.hasPrefix("__") && schema[$0]?.isComposite == true }
    }

    mutating func document() -> String {
        variables = []
        fragments = [:]
        fragmentOrder = []
        fragmentTypes = [:]
        var kind = OperationType.query
        if schema.mutationType != nil, chance(0.15) { kind = .mutation }
        if schema.subscriptionType != nil, chance(0.12) { kind = .subscription }
        let root = schema.rootType(kind)!.name
        var body: String
        if kind == .subscription {
            body =
                "{ " + (0..<(chance(0.3) ? 2 : 1)).map { _ in field(on: root, depth: 0) }.joined(separator: " ") + " }"
        } else {
            body = selectionSet(on: root, depth: 0)
            if kind == .query, chance(0.06) {
                body.insert(contentsOf: introspection() + " ", at: body.index(after: body.startIndex))
            }
        }
        var definitions = variables.map { "$\($0.name): \($0.type)" }
        if oops(0.04) { definitions.append("$unused: Int") }
        if !definitions.isEmpty, oops(0.03) { definitions.removeFirst() }
        let name = chance(0.7) ? " Op\(next(1000))" : ""
        let head =
            definitions.isEmpty
            ? (name.isEmpty && kind == .query && chance(0.5) ? "" : "\(kind.rawValue)\(name)")
            : "\(kind.rawValue)\(name)(\(definitions.joined(separator: ", ")))"
        var text = (head.isEmpty ? "" : head + " ") + body
        for f in fragmentOrder { text += "\n" + fragments[f]! }
        if oops(0.02), let type = pick(composites) { text += "\nfragment Unused on \(type) { __typename }" }
        return text
    }

    // MARK: Selections

    private mutating func selectionSet(on typeName: String, depth: Int) -> String {
        var selections: [String] = []
        let count = depth >= 3 ? 1 : 1 + next(3)
        for _ in 0..<count { selections.append(selection(on: typeName, depth: depth)) }
        // The same response key again: the same field, or a tweaked one (other arguments, another field).
        if chance(0.15), let again = pick(selections) {
            selections.append(oops(0.4) ? field(on: typeName, depth: depth, key: key(of: again)) : again)
        }
        return "{ " + selections.joined(separator: " ") + " }"
    }

    private mutating func selection(on typeName: String, depth: Int) -> String {
        let isUnion = if case .union? = schema[typeName]?.definition.kind { true } else { false }
        let roll = next(100)
        if roll < 15 || (isUnion && roll < 70) { return inlineFragment(on: typeName, depth: depth) }
        if roll < 28, depth < 3 { return spread(on: typeName, depth: depth) }
        return field(on: typeName, depth: depth)
    }

    private mutating func field(on typeName: String, depth: Int, key: String? = nil) -> String {
        let fields = schema[typeName]?.orderedFields ?? []
        guard !fields.isEmpty, !(chance(0.08)) else {
            return oops(0.03) ? "nope" : aliased("__typename", key: key)
        }
        let definition = pick(fields)!
        var text = aliased(definition.name, key: key)
        var arguments: [String] = []
        for argument in definition.arguments
        where argument.type.isNonNull && argument.defaultValue == nil ? !oops(0.03) : chance(0.35) {
            arguments.append("\(argument.name): \(value(argument.type, depth: 0, variable: true))")
        }
        if oops(0.005) { arguments.append("zz: 1") }
        if !arguments.isEmpty { text += "(" + arguments.joined(separator: ", ") + ")" }
        if chance(0.05) { text += directive() }
        let named = definition.type.namedType
        if schema[named]?.isComposite == true {
            if !oops(0.01) { text += " " + (depth >= 3 ? "{ __typename }" : selectionSet(on: named, depth: depth + 1)) }
        } else if oops(0.005) {
            text += " { x }"
        }
        return text
    }

    private mutating func aliased(_ name: String, key: String?) -> String {
        if let key { return key == name ? name : "\(key): \(name)" }
        guard chance(0.2) else { return name }
        return (pick(["a", "b", "id", "name", "label", "size"]) ?? "a") + ": " + name
    }

    private func key(of selection: String) -> String? {
        guard let first = selection.split(whereSeparator: { $0 == " " || $0 == "(" || $0 == "{" || $0 == "@" }).first
        else { return nil }
        let word = String(first)
        if word.hasPrefix("...") { return nil }
        return word.hasSuffix(":") ? String(word.dropLast()) : word
    }

    private mutating func inlineFragment(on typeName: String, depth: Int) -> String {
        let condition = fittingType(for: typeName)
        let head = condition.map { "... on \($0)" } ?? "..."
        let target = condition ?? typeName
        let directives = chance(0.08) ? directive() : ""
        return head + directives + " " + (depth >= 3 ? "{ __typename }" : selectionSet(on: target, depth: depth + 1))
    }

    private mutating func spread(on typeName: String, depth: Int) -> String {
        // An existing fragment again (whatever its type: it may not fit, or make a cycle), or a new one.
        if !fragmentOrder.isEmpty, chance(0.25) {
            let fitting = fragmentOrder.filter { fragmentTypes[$0].map { fits($0, typeName) } ?? false }
            if let name = pick(oops(0.1) ? fragmentOrder : fitting) { return "..." + name }
        }
        let name = "F\(fragmentOrder.count)"
        let condition = fittingType(for: typeName) ?? typeName
        fragmentOrder.append(name)
        fragmentTypes[name] = condition
        fragments[name] = "fragment \(name) on \(condition) { __typename }"
        fragments[name] = "fragment \(name) on \(condition) " + selectionSet(on: condition, depth: depth + 1)
        return "..." + name + (chance(0.05) ? directive() : "")
    }

    /// A type condition for a fragment on `typeName`: nil (none) or the type itself, mostly one it may be, now and
    /// then one it can never be.
    private mutating func fittingType(for typeName: String) -> String? {
        if chance(0.15) { return nil }
        if oops(0.04) { return pick(composites) }
        let related = composites.filter { fits($0, typeName) }
        return pick(related) ?? typeName
    }

    private mutating func directive() -> String {
        let name = chance(0.5) ? "include" : "skip"
        if oops(0.02) { return " @nope" }
        if chance(0.3) {
            let variable = "b\(variables.count)"
            variables.append((variable, oops(0.1) ? "Boolean" : "Boolean!"))
            return " @\(name)(if: $\(variable))"
        }
        return " @\(name)(if: \(chance(0.5) ? "true" : "false"))"
    }

    private mutating func introspection() -> String {
        let options = [
            "__schema { queryType { name } types { name kind } }",
            "__schema { types { name fields { name type { name kind ofType { name } } } } }",
            "__schema { types { fields { type { fields { type { fields { name } } } } } } }",
            "__type(name: \"\(pick(composites) ?? "Query")\") { name kind fields { name args { name defaultValue } } }",
            "__type(name: \"Int\") { ...TypeBits }",
            "t: __typename",
        ]
        let chosen = pick(options)!
        if chosen.contains("...TypeBits") {
            fragmentOrder.append("TypeBits")
            fragments["TypeBits"] = "fragment TypeBits on __Type { name interfaces { name possibleTypes { name } } }"
        }
        return chosen
    }

    // MARK: Values

    private mutating func value(_ type: TypeReference, depth: Int, variable: Bool) -> String {
        if variable, chance(0.12) { return variableFor(type) }
        if oops(0.015) { return pick(["\"str\"", "1", "true", "{a: 1}", "[1]", "ENUMV", "1.5", "null"])! }
        switch type {
        case .nonNull(let inner):
            return oops(0.01) ? "null" : value(inner, depth: depth, variable: false)
        case .list(let inner):
            if chance(0.3) { return value(inner, depth: depth + 1, variable: false) }
            return "["
                + (0..<next(3)).map { _ in value(inner, depth: depth + 1, variable: false) }.joined(separator: ", ")
                + "]"
        case .named(let name):
            if chance(0.05) { return "null" }
            return literal(name, depth: depth)
        }
    }

    private mutating func literal(_ name: String, depth: Int) -> String {
        switch name {
        case "Int": return oops(0.01) ? "2147483648" : "\(next(200) - 20)"
        case "Float": return chance(0.5) ? "1.5" : "\(next(10))"
        case "String": return "\"s\(next(5))\""
        case "Boolean": return chance(0.5) ? "true" : "false"
        case "ID": return chance(0.5) ? "\"id\(next(9))\"" : "\(next(9))"
        default: break
        }
        guard let type = schema[name] else { return "1" }
        switch type.definition.kind {
        case .enumeration(let values):
            if oops(0.02) { return "\"\(values.first?.name ?? "X")\"" }
            if oops(0.01) { return "NOPE" }
            return pick(values)?.name ?? "NOPE"
        case .inputObject(let fields):
            guard depth < 3 else { return "{}" }
            let oneOf = type.definition.directives.contains { $0.name == "oneOf" }
            var members: [String] = []
            if oneOf {
                for field in fields.shuffled(using: &random).prefix(oops(0.1) ? 2 : 1) {
                    members.append("\(field.name): \(value(field.type.nullable, depth: depth + 1, variable: false))")
                }
            } else {
                for field in fields where field.type.isNonNull && field.defaultValue == nil ? !oops(0.03) : chance(0.3)
                {
                    members.append("\(field.name): \(value(field.type, depth: depth + 1, variable: false))")
                }
            }
            if oops(0.01) { members.append("zz: 1") }
            return "{" + members.joined(separator: ", ") + "}"
        default:
            // A custom scalar takes any literal.
            return pick(["\"any\"", "42", "{k: [1, \"two\"]}", "true"])!
        }
    }

    private mutating func variableFor(_ type: TypeReference) -> String {
        let name = "v\(variables.count)"
        var declared = type.description
        let roll = next(100)
        if Double(roll) < 8 * mistakes, type.isNonNull {
            declared = type.nullable.description
        } else if Double(roll) < 14 * mistakes {
            declared = pick(["String", "Int!", "[ID]", "Boolean"])!
        }
        if Double(roll) >= 100 - 4 * mistakes { return "$undeclared\(variables.count)" }
        if chance(0.1), !declared.hasSuffix("!") { declared += " = null" }
        variables.append((name, declared))
        return "$" + name
    }

    // MARK: Randomness

    private mutating func next(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    private mutating func chance(_ p: Double) -> Bool { Double(random.next() % 10_000) < p * 10_000 }
    private mutating func pick<T>(_ items: [T]) -> T? { items.isEmpty ? nil : items[next(items.count)] }
    /// A mistake at its base rate `p`, scaled by `mistakes`.
    private mutating func oops(_ p: Double) -> Bool { chance(p * mistakes) }

    /// Whether a fragment on `condition` may be spread where `parent` is selected (some object may be both).
    private func fits(_ condition: String, _ parent: String) -> Bool {
        !schema.possibleTypes(of: condition).isDisjoint(with: schema.possibleTypes(of: parent))
    }
}
