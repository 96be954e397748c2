/// A schema built from SDL (spec §3): its named types with their fields looked up by name, the root operation types,
/// the directives, and for each abstract type the object types it may be. The built-in scalars, directives and the
/// introspection types (§4) are part of every schema.
public struct Schema: Sendable {
    public struct NamedType: Sendable {
        public var definition: TypeDefinition
        public var fields: [String: FieldDefinition] = [:]
        public var inputFields: [String: InputValueDefinition] = [:]
        public var enumValues: Set<String> = []

        public var name: String { definition.name }

        init(_ definition: TypeDefinition) {
            self.definition = definition
            switch definition.kind {
            case .object(_, let fs), .interface(_, let fs): for f in fs { fields[f.name] = f }
            case .inputObject(let fs): for f in fs { inputFields[f.name] = f }
            case .enumeration(let vs): enumValues = Set(vs.map(\.name))
            case .scalar, .union: break
            }
        }

        public var isLeaf: Bool {
            switch definition.kind {
            case .scalar, .enumeration: true
            default: false
            }
        }

        /// Object, interface or union: a type a selection set selects from.
        public var isComposite: Bool {
            switch definition.kind {
            case .object, .interface, .union: true
            default: false
            }
        }

        public var isAbstract: Bool {
            switch definition.kind {
            case .interface, .union: true
            default: false
            }
        }

        public var isInput: Bool {
            switch definition.kind {
            case .scalar, .enumeration, .inputObject: true
            default: false
            }
        }

        public var isObject: Bool { if case .object = definition.kind { true } else { false } }

        public var isInterface: Bool { if case .interface = definition.kind { true } else { false } }

        /// An input object marked `@oneOf`: exactly one of its fields is given, and not null.
        public var isOneOf: Bool { definition.directives.contains { $0.name == "oneOf" } }

        public var interfaces: [String] {
            switch definition.kind {
            case .object(let i, _), .interface(let i, _): i
            default: []
            }
        }

        /// Fields in their declared order.
        public var orderedFields: [FieldDefinition] {
            switch definition.kind {
            case .object(_, let fs), .interface(_, let fs): fs
            default: []
            }
        }

        public var orderedInputFields: [InputValueDefinition] {
            if case .inputObject(let fs) = definition.kind { fs } else { [] }
        }
    }

    public private(set) var types: [String: NamedType] = [:]
    public private(set) var directives: [String: DirectiveDefinition] = [:]
    public private(set) var queryType = "Query"
    public private(set) var mutationType: String?
    public private(set) var subscriptionType: String?
    /// For each interface and union, the object types that may stand for it.
    private var possible: [String: Set<String>] = [:]
    /// Type names in the order the SDL declared them (built-ins last), for introspection.
    public private(set) var typeOrder: [String] = []

    public init(sdl: String) throws(GraphQLError) {
        try self.init(document: Parser.parse(sdl))
    }

    public init(document: Document) throws(GraphQLError) {
        var extensions: [TypeDefinition] = []
        var schemaDefinition: SchemaDefinition?
        var schemaExtensions: [SchemaDefinition] = []
        for definition in document.definitions {
            switch definition {
            case .type(let t):
                guard types[t.name] == nil else {
                    throw GraphQLError("There can be only one type named \"\(t.name)\".", locations: [t.location])
                }
                types[t.name] = NamedType(t)
                typeOrder.append(t.name)
            case .typeExtension(let t): extensions.append(t)
            case .directive(let d): directives[d.name] = d
            case .schema(let s):
                guard schemaDefinition == nil else {
                    throw GraphQLError("Must provide only one schema definition.", locations: [s.location])
                }
                schemaDefinition = s
            case .schemaExtension(let s): schemaExtensions.append(s)
            case .operation(let o):
                throw GraphQLError("A schema cannot hold an operation.", locations: [o.location])
            case .fragment(let f):
                throw GraphQLError("A schema cannot hold a fragment.", locations: [f.location])
            }
        }
        for builtIn in Self.builtIns.definitions {
            switch builtIn {
            case .type(let t) where types[t.name] == nil:
                types[t.name] = NamedType(t)
                typeOrder.append(t.name)
            case .directive(let d) where directives[d.name] == nil: directives[d.name] = d
            default: break
            }
        }
        for e in extensions { try extend(with: e) }
        // Without a schema definition the root types go by their conventional names; the root types a definition
        // names, and those its extensions add, are each given once.
        if schemaDefinition == nil {
            if types["Mutation"] != nil { mutationType = "Mutation" }
            if types["Subscription"] != nil { subscriptionType = "Subscription" }
        }
        var named: Set<OperationType> = []
        for definition in (schemaDefinition.map { [$0] } ?? []) + schemaExtensions {
            for (operation, name) in definition.operationTypes {
                guard named.insert(operation).inserted else {
                    throw GraphQLError(
                        "There can be only one \(operation.rawValue) type in schema.", locations: [definition.location])
                }
                switch operation {
                case .query: queryType = name
                case .mutation: mutationType = name
                case .subscription: subscriptionType = name
                }
            }
        }
        guard types[queryType]?.isObject == true else {
            throw GraphQLError("The schema has no query type \"\(queryType)\".")
        }
        for (name, type) in types {
            switch type.definition.kind {
            case .object(let interfaces, _):
                for i in interfaces { possible[i, default: []].insert(name) }
            case .union(let members):
                possible[name, default: []].formUnion(members)
            default: break
            }
        }
        try checkReferences()
    }

    private mutating func extend(with e: TypeDefinition) throws(GraphQLError) {
        guard var type = types[e.name] else {
            throw GraphQLError("Cannot extend type \"\(e.name)\" because it is not defined.", locations: [e.location])
        }
        var d = type.definition
        switch (d.kind, e.kind) {
        case (.object(let i, let f), .object(let ei, let ef)): d.kind = .object(interfaces: i + ei, fields: f + ef)
        case (.interface(let i, let f), .interface(let ei, let ef)):
            d.kind = .interface(interfaces: i + ei, fields: f + ef)
        case (.union(let t), .union(let et)): d.kind = .union(types: t + et)
        case (.enumeration(let v), .enumeration(let ev)): d.kind = .enumeration(values: v + ev)
        case (.inputObject(let f), .inputObject(let ef)): d.kind = .inputObject(fields: f + ef)
        case (.scalar, .scalar): break
        default:
            throw GraphQLError(
                "Cannot extend \"\(e.name)\" with a definition of another kind.", locations: [e.location])
        }
        d.directives += e.directives
        type = NamedType(d)
        types[e.name] = type
    }

    /// Every type a definition names exists, and has the right kind for where it is used.
    private func checkReferences() throws(GraphQLError) {
        func check(_ reference: TypeReference, at location: SourceLocation, input: Bool) throws(GraphQLError) {
            guard let type = types[reference.namedType] else {
                throw GraphQLError("Unknown type \"\(reference.namedType)\".", locations: [location])
            }
            if input && !type.isInput {
                throw GraphQLError(
                    "The type of an argument or input field must be an input type, not \"\(type.name)\".",
                    locations: [location])
            }
            if !input, case .inputObject = type.definition.kind {
                throw GraphQLError(
                    "The type of a field must be an output type, not \"\(type.name)\".", locations: [location])
            }
        }
        for type in types.values {
            for field in type.orderedFields {
                try check(field.type, at: field.location, input: false)
                for argument in field.arguments { try check(argument.type, at: argument.location, input: true) }
            }
            for field in type.orderedInputFields { try check(field.type, at: field.location, input: true) }
            for name in type.interfaces
            where types[name].map({ if case .interface = $0.definition.kind { true } else { false } }) != true {
                throw GraphQLError(
                    "Type \"\(type.name)\" can only implement an interface; \"\(name)\" is not one.",
                    locations: [type.definition.location])
            }
            if case .union(let members) = type.definition.kind {
                for m in members where types[m]?.isObject != true {
                    throw GraphQLError(
                        "Union \"\(type.name)\" can only include object types; \"\(m)\" is not one.",
                        locations: [type.definition.location])
                }
            }
        }
    }

    public subscript(name: String) -> NamedType? { types[name] }

    public func rootType(_ operation: OperationType) -> NamedType? {
        switch operation {
        case .query: types[queryType]
        case .mutation: mutationType.flatMap { types[$0] }
        case .subscription: subscriptionType.flatMap { types[$0] }
        }
    }

    /// The object types an abstract type may be (an object type is only itself).
    public func possibleTypes(of name: String) -> Set<String> {
        if types[name]?.isObject == true { return [name] }
        return possible[name] ?? []
    }

    /// Whether a value of object type `object` may stand where `abstract` is expected.
    public func isPossible(_ object: String, of abstract: String) -> Bool {
        object == abstract || possibleTypes(of: abstract).contains(object)
    }

    /// A field of a composite type, including the meta-fields every type has (`__typename`) and the query root's
    /// (`__schema`, `__type`).
    public func field(_ name: String, on typeName: String) -> FieldDefinition? {
        if name == "__typename" { return Self.typenameField }
        if typeName == queryType, let meta = Self.rootMetaFields[name] { return meta }
        return types[typeName]?.fields[name]
    }

    /// Whether a value of type `given` may be used where `expected` is (§5.8.5 AreTypesCompatible, on references).
    public static func isSubtype(_ given: TypeReference, of expected: TypeReference, in schema: Schema) -> Bool {
        switch (given, expected) {
        case (.nonNull(let g), .nonNull(let e)): return isSubtype(g, of: e, in: schema)
        case (.nonNull(let g), _): return isSubtype(g, of: expected, in: schema)
        case (_, .nonNull): return false
        case (.list(let g), .list(let e)): return isSubtype(g, of: e, in: schema)
        case (.list, _), (_, .list): return false
        case (.named(let g), .named(let e)): return g == e || schema.isPossible(g, of: e)
        }
    }

    // MARK: Built-ins

    static let typenameField = FieldDefinition(
        name: "__typename", description: "The name of the current Object type at runtime.",
        arguments: [], type: .nonNull(.named("String")), directives: [],
        location: SourceLocation(line: 0, column: 0))

    static let rootMetaFields: [String: FieldDefinition] = {
        let at = SourceLocation(line: 0, column: 0)
        return [
            "__schema": FieldDefinition(
                name: "__schema", description: "Access the current type schema of this server.", arguments: [],
                type: .nonNull(.named("__Schema")), directives: [], location: at),
            "__type": FieldDefinition(
                name: "__type", description: "Request the type information of a single type.",
                arguments: [
                    InputValueDefinition(
                        name: "name", description: nil, type: .nonNull(.named("String")),
                        defaultValue: nil, directives: [], location: at)
                ],
                type: .named("__Type"), directives: [], location: at),
        ]
    }()

    /// The built-in scalars and directives and the introspection types, from their SDL (a constant of this module,
    /// read back by the tests: it cannot fail to parse at run time).
    static let builtIns: Document = {
        do { return try Parser.parse(Introspection.sdl) } catch {
            fatalError("the built-in SDL does not parse: \(error)")
        }
    }()
}
