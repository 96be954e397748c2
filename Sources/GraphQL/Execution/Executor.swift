/// What a resolver is told about the field it resolves.
public struct ResolveInfo {
    public let fieldName: String
    public let parentType: String
    /// The field's arguments, coerced to their types, defaults filled in.
    public let arguments: [String: GraphQLValue]
    /// Where the field lies in the response, from the root.
    public var path: [GraphQLError.PathComponent] { ResponsePath.components(responsePath) }
    let responsePath: ResponsePath?
    /// Whatever the caller passed to `execute` (the emulator's request: its session, its headers).
    public let context: Any?
}

/// A field's resolver: from the parent value to the field's value. The value may be a Swift value (String, Int, Double,
/// Bool, `[Any?]`, `[String: Any]`, a `GraphQLValue`), or an object for the sub-selection: a dictionary whose values
/// are values or `FieldFunction`s, or an `ObjectValue`.
public typealias FieldResolver = @Sendable (_ parent: Any?, _ info: ResolveInfo) throws -> Any?

/// A field computed on demand, for a dictionary's value: `["total": { info in … } as FieldFunction]`.
public typealias FieldFunction = (_ info: ResolveInfo) throws -> Any?

/// An object that resolves its own fields (and names its type, for interfaces and unions).
public protocol ObjectValue {
    var typeName: String { get }
    func field(_ info: ResolveInfo) throws -> Any?
}

/// Resolvers by type and field name; a field without one reads its parent's member of the same name.
public struct Resolvers: Sendable {
    var fields: [String: [String: FieldResolver]] = [:]

    public init() {}

    public subscript(type: String, field: String) -> FieldResolver? {
        get { fields[type]?[field] }
        set { fields[type, default: [:]][field] = newValue }
    }
}

/// Runs a validated operation (spec §6): collects fields with their directives and fragments, resolves each, and
/// completes the values to exactly the selection, aliases and `__typename` included. A field error nulls the field and
/// is reported with its path; a null in a non-null field nulls the nearest nullable parent (§6.4.4).
struct Executor {
    /// Thrown up to the nearest nullable field: the error itself is already recorded.
    struct NullPropagation: Error {}

    let schema: Schema
    let resolvers: Resolvers
    let fragments: [String: FragmentDefinition]
    /// The document's plans, kept with it; nil when `@skip`/`@include` may make them differ by request.
    let plans: FieldPlans?
    let variables: [String: GraphQLValue]
    let context: Any?
    var errors: [GraphQLError] = []

    mutating func run(_ operation: OperationDefinition, root: Any?) -> GraphQLValue {
        guard let rootType = schema.rootType(operation.operation) else {
            errors.append(
                GraphQLError(
                    "Schema is not configured for \(operation.operation.rawValue)s.", locations: [operation.location]))
            return .null
        }
        // Mutations' top-level fields run one after another (§6.2.2); this executor runs every field in order anyway.
        do {
            return try selectionSet([operation.selectionSet], on: rootType.name, value: Resolved(root), path: nil)
        } catch { return .null }
    }

    // MARK: Fields

    /// The merged selection sets of one response key, on the value's object type.
    private mutating func selectionSet(
        _ selectionSets: [[Selection]], on typeName: String, value: Resolved,
        path: ResponsePath?
    ) throws(NullPropagation) -> GraphQLValue {
        let planned = plan(selectionSets, on: typeName)
        var members: [(String, GraphQLValue)] = []
        members.reserveCapacity(planned.count)
        for field in planned {
            members.append(
                (
                    field.key,
                    try self.field(field, on: typeName, parent: value, path: ResponsePath(.key(field.key), under: path))
                ))
        }
        return .object(members)
    }

    /// The fields to execute, from the document's plans when it has them.
    private func plan(_ selectionSets: [[Selection]], on typeName: String) -> [PlannedField] {
        guard let plans else { return Self.plan(selectionSets, on: typeName, executor: self) }
        return plans.plan(selectionSets, on: typeName) { Self.plan(selectionSets, on: typeName, executor: self) }
    }

    private static func plan(_ selectionSets: [[Selection]], on typeName: String, executor: Executor) -> [PlannedField]
    {
        var visited = Set<String>()
        return executor.collect(Array(selectionSets.joined()), on: typeName, visited: &visited).map { key, fields in
            let name = fields[0].name
            return PlannedField(
                key: key, fields: fields,
                definition: name == "__typename" ? nil : executor.schema.field(name, on: typeName))
        }
    }

    private mutating func field(
        _ planned: PlannedField, on typeName: String, parent: Resolved,
        path: ResponsePath
    ) throws(NullPropagation) -> GraphQLValue {
        let fields = planned.fields
        let first = fields[0]
        if first.name == "__typename" { return .string(typeName) }
        guard let definition = planned.definition else { return .null }  // validation rules this out
        do {
            let arguments = try InputCoercion.arguments(
                first.arguments, definitions: definition.arguments, variables: variables, in: schema)
            let info = ResolveInfo(
                fieldName: first.name, parentType: typeName, arguments: arguments, responsePath: path, context: context)
            let resolved = try resolve(first.name, on: typeName, parent: parent, info: info)
            return try complete(resolved, as: definition.type, fields: fields, parentType: typeName, path: path)
        } catch let propagation as NullPropagation {
            if definition.type.isNonNull { throw propagation }
            return .null
        } catch {
            errors.append(Self.fieldError(error, at: first.location, path: path))
            if definition.type.isNonNull { throw NullPropagation() }
            return .null
        }
    }

    private func resolve(_ name: String, on typeName: String, parent: Resolved, info: ResolveInfo) throws -> Resolved {
        if typeName == schema.queryType, name == "__schema" { return .swift(Introspection.SchemaValue(schema: schema)) }
        if typeName == schema.queryType, name == "__type" {
            return Resolved(
                info.arguments["name"]?.stringValue.flatMap { schema[$0] }
                    .map { Introspection.TypeValue(schema: schema, reference: .named($0.name)) })
        }
        if let resolver = resolvers[typeName, name] { return Resolved(try resolver(parent.boxed, info)) }
        switch parent {
        case .plain(let value): return .plain(value[info.fieldName] ?? .null)  // no cast: a GraphQLValue's member
        case .swift(let value): return Resolved(try Self.defaultResolve(value, info))
        }
    }

    /// A value on its way to completion: a `GraphQLValue` (what a `GraphQLValue` parent's members and most resolvers
    /// give) kept as one, so that completing it and resolving its members casts nothing — a cast from `Any?` costs a
    /// few hundred instructions, and keeping the value saved 2% of the emulator's work on a Centra checkout — or any
    /// other Swift value a resolver gave, optionals unwrapped.
    enum Resolved {
        case plain(GraphQLValue)
        case swift(Any)

        /// One cast, which also looks through optionals.
        init(_ value: Any?) {
            if let plain = value as? GraphQLValue {
                self = .plain(plain)
            } else if let value = Executor.unwrap(value) {
                self = .swift(value)
            } else {
                self = .plain(.null)
            }
        }

        var isNull: Bool { if case .plain(.null) = self { true } else { false } }

        /// As a resolver is given its parent.
        var boxed: Any? {
            switch self {
            case .plain(let value): value
            case .swift(let value): value
            }
        }
    }

    /// A dictionary's member (called when it is a `FieldFunction`), an `ObjectValue`'s field, a `GraphQLValue`'s
    /// member.
    static func defaultResolve(_ parent: Any?, _ info: ResolveInfo) throws -> Any? {
        // The concrete type first: a resolver's object is most often a GraphQLValue, and each failed cast to a
        // protocol or a dictionary type is a runtime lookup.
        switch parent {
        case let value as GraphQLValue: return value[info.fieldName]
        case let object as ObjectValue: return try object.field(info)
        case let dictionary as [String: Any]:
            let member = dictionary[info.fieldName]
            if let function = member as? FieldFunction { return try function(info) }
            return member
        default: return nil
        }
    }

    static func fieldError(_ error: any Error, at location: SourceLocation, path: ResponsePath?) -> GraphQLError {
        if var e = error as? GraphQLError {
            if e.locations.isEmpty { e.locations = [location] }
            if e.path.isEmpty { e.path = ResponsePath.components(path) }
            return e
        }
        return GraphQLError("\(error)", locations: [location], path: ResponsePath.components(path))
    }

    // MARK: Completion

    private mutating func complete(
        _ value: Resolved, as type: TypeReference, fields: [Field], parentType: String,
        path: ResponsePath
    ) throws -> GraphQLValue {
        switch type {
        case .nonNull(let inner):
            let completed = try complete(value, as: inner, fields: fields, parentType: parentType, path: path)
            if completed.isNull {
                throw GraphQLError(
                    "Cannot return null for non-nullable field \(parentType).\(fields[0].name).",
                    locations: [fields[0].location], path: ResponsePath.components(path))
            }
            return completed
        case .list(let item):
            if value.isNull { return .null }
            let items: [Resolved]
            switch value {
            case .plain(.list(let list)): items = list.map(Resolved.plain)
            case .swift(let array as [Any?]): items = array.map(Resolved.init)
            case .swift(let array as [Any]): items = array.map(Resolved.init)
            case .plain: throw GraphQLError("Expected a list for field \"\(parentType).\(fields[0].name)\".")
            case .swift(let other):
                throw GraphQLError(
                    "Expected a list for field \"\(parentType).\(fields[0].name)\", got \(Swift.type(of: other)).")
            }
            var out: [GraphQLValue] = []
            out.reserveCapacity(items.count)
            for (i, element) in items.enumerated() {
                let itemPath = ResponsePath(.index(i), under: path)
                do {
                    out.append(try complete(element, as: item, fields: fields, parentType: parentType, path: itemPath))
                } catch let propagation as NullPropagation {
                    if item.isNonNull { throw propagation }
                    out.append(.null)
                } catch {
                    errors.append(Self.fieldError(error, at: fields[0].location, path: itemPath))
                    if item.isNonNull { throw NullPropagation() }
                    out.append(.null)
                }
            }
            return .list(out)
        case .named(let name):
            if value.isNull { return .null }
            guard let named = schema[name] else { return .null }
            switch named.definition.kind {
            case .scalar:
                switch value {
                case .plain(let plain): return try Self.serializeScalar(plain: plain, name)
                case .swift(let swift): return try Self.serializeScalar(swift, name)
                }
            case .enumeration:
                let text: String?
                switch value {
                case .plain(let plain): text = plain.stringValue
                case .swift(let swift): text = swift as? String
                }
                guard let text, named.enumValues.contains(text) else {
                    throw GraphQLError("Enum \"\(name)\" cannot represent value: \(String(describing: value.boxed!))")
                }
                return .enumValue(text)
            case .object:
                return try subselection(value, objectType: name, fields: fields, path: path)
            case .interface, .union:
                let concrete: String?
                switch value {
                case .plain(let plain): concrete = plain["__typename"]?.stringValue
                case .swift(let swift): concrete = Self.typeName(of: swift)
                }
                guard let concrete, schema.isPossible(concrete, of: name), schema[concrete]?.isObject == true else {
                    throw GraphQLError(
                        "Abstract type \"\(name)\" must resolve to an object type at runtime for field \"\(parentType).\(fields[0].name)\"."
                    )
                }
                return try subselection(value, objectType: concrete, fields: fields, path: path)
            case .inputObject:
                throw GraphQLError("\"\(name)\" is an input type and cannot be an output.")
            }
        }
    }

    private mutating func subselection(
        _ value: Resolved, objectType: String, fields: [Field], path: ResponsePath
    ) throws(NullPropagation) -> GraphQLValue {
        try selectionSet(fields.compactMap(\.selectionSet), on: objectType, value: value, path: path)
    }

    /// An optional inside `Any` unwrapped: nil for `Optional.none`, and for `NSNull`-like absence.
    static func unwrap(_ value: Any?) -> Any? {
        guard let value else { return nil }
        switch value {
        // the common cases, cheaply
        case is GraphQLValue, is String, is Int, is Bool, is Double, is ObjectValue: return value
        default: break
        }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let child = mirror.children.first else { return nil }
            return unwrap(child.value)
        }
        return value
    }

    /// The runtime object type of a value for an interface or a union: an `ObjectValue`'s, a dictionary's `__typename`.
    static func typeName(of value: Any) -> String? {
        switch value {
        case let v as GraphQLValue: v["__typename"]?.stringValue
        case let object as ObjectValue: object.typeName
        case let dictionary as [String: Any]: dictionary["__typename"] as? String
        default: nil
        }
    }

    /// Result coercion of the built-in scalars (§3.5); a custom scalar's value is passed on as plain JSON.
    static func serializeScalar(_ value: Any, _ name: String) throws -> GraphQLValue {
        try serializeScalar(plain: plainValue(value), name)
    }

    static func serializeScalar(plain: GraphQLValue, _ name: String) throws -> GraphQLValue {
        switch (name, plain) {
        case ("Int", .int): return plain
        case ("Int", .float(let d)) where d.rounded() == d && abs(d) <= Double(InputCoercion.maxInt):
            return .int(Int(d))
        case ("Int", _): throw GraphQLError("Int cannot represent non-integer value: \(plain.jsonText)")
        case ("Float", .float): return plain
        case ("Float", .int(let i)): return .float(Double(i))
        case ("Float", _): throw GraphQLError("Float cannot represent non numeric value: \(plain.jsonText)")
        case ("String", .string), ("Boolean", .bool), ("ID", .string): return plain
        case ("ID", .int(let i)): return .string(String(i))
        case ("String", .enumValue(let s)): return .string(s)
        case ("String", _): throw GraphQLError("String cannot represent value: \(plain.jsonText)")
        case ("Boolean", _): throw GraphQLError("Boolean cannot represent a non boolean value: \(plain.jsonText)")
        case ("ID", _): throw GraphQLError("ID cannot represent value: \(plain.jsonText)")
        default: return plain
        }
    }

    /// A Swift value as a plain GraphQL value (for scalars, which carry no selection).
    static func plainValue(_ value: Any?) throws -> GraphQLValue {
        guard let value = unwrap(value) else { return .null }
        switch value {
        case let v as GraphQLValue: return v
        case let s as String: return .string(s)
        case let b as Bool: return .bool(b)
        case let i as Int: return .int(i)
        case let d as Double: return .float(d)
        case let a as [Any?]: return .list(try a.map(plainValue))
        case let a as [Any]: return .list(try a.map(plainValue))
        case let o as [String: Any]: return .object(try o.keys.sorted().map { ($0, try plainValue(o[$0])) })
        default: throw GraphQLError("Cannot serialize a value of type \(type(of: value)).")
        }
    }

    // MARK: Collecting fields (§6.3.2)

    /// The fields a selection set selects on an object type, grouped by response key in order: `@skip`/`@include`
    /// applied, fragment spreads and inline fragments whose type condition applies merged in, each fragment once.
    func collect(_ selections: [Selection], on typeName: String, visited: inout Set<String>) -> [(String, [Field])] {
        var order: [String] = []
        var groups: [String: [Field]] = [:]
        func add(_ key: String, _ fields: [Field]) {
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(contentsOf: fields)
        }
        for selection in selections where included(selection.directives) {
            switch selection {
            case .field(let f):
                add(f.responseKey, [f])
            case .fragmentSpread(let spread):
                guard !visited.contains(spread.name), let fragment = fragments[spread.name] else { continue }
                visited.insert(spread.name)
                guard applies(fragment.typeCondition, to: typeName) else { continue }
                for (key, fields) in collect(fragment.selectionSet, on: typeName, visited: &visited) {
                    add(key, fields)
                }
            case .inlineFragment(let inline):
                if let condition = inline.typeCondition, !applies(condition, to: typeName) { continue }
                for (key, fields) in collect(inline.selectionSet, on: typeName, visited: &visited) { add(key, fields) }
            }
        }
        return order.map { ($0, groups[$0]!) }
    }

    private func applies(_ condition: String, to objectType: String) -> Bool {
        schema.isPossible(objectType, of: condition)
    }

    /// `@skip(if:)` and `@include(if:)`, with variables.
    private func included(_ directives: [Directive]) -> Bool {
        for d in directives where d.name == "skip" || d.name == "include" {
            guard let argument = d.arguments.first(where: { $0.name == "if" }) else { continue }
            let condition: Bool =
                switch argument.value {
                case .bool(let b): b
                case .variable(let v): variables[v]?.boolValue ?? false
                default: false
                }
            if d.name == "skip" && condition { return false }
            if d.name == "include" && !condition { return false }
        }
        return true
    }
}

/// Where a value lies in the response, as a chain of links from it to the root: a field or a list item adds one link
/// to its parent's, where an array of the whole path was copied for every field (a twelfth of the emulator's work
/// for a Centra checkout). Spelled out only for an error or a resolver that asks.
final class ResponsePath: Sendable {
    let component: GraphQLError.PathComponent
    let parent: ResponsePath?

    init(_ component: GraphQLError.PathComponent, under parent: ResponsePath?) {
        self.component = component
        self.parent = parent
    }

    /// From the root to `path` (none for the root itself).
    static func components(_ path: ResponsePath?) -> [GraphQLError.PathComponent] {
        var reversed: [GraphQLError.PathComponent] = []
        var link = path
        while let here = link {
            reversed.append(here.component)
            link = here.parent
        }
        return reversed.reversed()
    }
}
