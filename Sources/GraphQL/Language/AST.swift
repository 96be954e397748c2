/// The syntax tree of a GraphQL document (spec §2): executable definitions (operations, fragments) and type system
/// definitions (SDL), as the parser reads them. Every node that an error may point at keeps its location.
public struct Document: Sendable {
    public var definitions: [Definition]

    public var operations: [OperationDefinition] {
        definitions.compactMap { if case .operation(let o) = $0 { o } else { nil } }
    }

    public var fragments: [FragmentDefinition] {
        definitions.compactMap { if case .fragment(let f) = $0 { f } else { nil } }
    }
}

public enum Definition: Sendable {
    case operation(OperationDefinition)
    case fragment(FragmentDefinition)
    case schema(SchemaDefinition)
    /// `extend schema`: directives and root operation types added to the schema's (no description).
    case schemaExtension(SchemaDefinition)
    case type(TypeDefinition)
    case typeExtension(TypeDefinition)
    case directive(DirectiveDefinition)

    var location: SourceLocation {
        switch self {
        case .operation(let o): o.location
        case .fragment(let f): f.location
        case .schema(let s), .schemaExtension(let s): s.location
        case .type(let t), .typeExtension(let t): t.location
        case .directive(let d): d.location
        }
    }
}

// MARK: Executable definitions

public enum OperationType: String, Sendable {
    case query, mutation, subscription
}

public struct OperationDefinition: Sendable {
    public var operation: OperationType
    public var name: String?
    public var variables: [VariableDefinition]
    public var directives: [Directive]
    public var selectionSet: [Selection]
    public var location: SourceLocation
}

public struct VariableDefinition: Sendable {
    public var name: String
    public var type: TypeReference
    public var defaultValue: Value?
    public var directives: [Directive]
    public var location: SourceLocation
}

/// `Name`, `[T]`, `T!`.
public indirect enum TypeReference: Sendable, Equatable, CustomStringConvertible {
    case named(String)
    case list(TypeReference)
    case nonNull(TypeReference)

    public var namedType: String {
        switch self {
        case .named(let n): n
        case .list(let t), .nonNull(let t): t.namedType
        }
    }

    public var isNonNull: Bool { if case .nonNull = self { true } else { false } }

    /// The type without its outer `!`.
    public var nullable: TypeReference { if case .nonNull(let t) = self { t } else { self } }

    public var description: String {
        switch self {
        case .named(let n): n
        case .list(let t): "[\(t)]"
        case .nonNull(let t): "\(t)!"
        }
    }
}

public enum Selection: Sendable {
    case field(Field)
    case fragmentSpread(FragmentSpread)
    case inlineFragment(InlineFragment)

    var directives: [Directive] {
        switch self {
        case .field(let f): f.directives
        case .fragmentSpread(let s): s.directives
        case .inlineFragment(let i): i.directives
        }
    }

    var location: SourceLocation {
        switch self {
        case .field(let f): f.location
        case .fragmentSpread(let s): s.location
        case .inlineFragment(let i): i.location
        }
    }
}

public struct Field: Sendable {
    public var alias: String?
    public var name: String
    public var arguments: [Argument]
    public var directives: [Directive]
    /// nil for a leaf field; a composite field's sub-selection otherwise.
    public var selectionSet: [Selection]?
    public var location: SourceLocation

    /// The key the field's value has in the response: its alias, else its name.
    public var responseKey: String { alias ?? name }
}

public struct Argument: Sendable {
    public var name: String
    public var value: Value
    public var location: SourceLocation
}

public struct FragmentSpread: Sendable {
    public var name: String
    public var directives: [Directive]
    public var location: SourceLocation
}

public struct InlineFragment: Sendable {
    public var typeCondition: String?
    public var directives: [Directive]
    public var selectionSet: [Selection]
    public var location: SourceLocation
}

public struct FragmentDefinition: Sendable {
    public var name: String
    public var typeCondition: String
    public var directives: [Directive]
    public var selectionSet: [Selection]
    public var location: SourceLocation
}

public struct Directive: Sendable {
    public var name: String
    public var arguments: [Argument]
    public var location: SourceLocation
}

/// A value literal as written (§2.9). Numbers keep their text: an Int literal too large for `Int` is an error of
/// coercion, not of syntax.
public indirect enum Value: Sendable, Equatable {
    case variable(String)
    case int(String)
    case float(String)
    case string(String)
    case bool(Bool)
    case null
    case enumValue(String)
    case list([Value])
    case object([ObjectField])

    public struct ObjectField: Sendable, Equatable {
        public var name: String
        public var value: Value
    }

    /// As written in GraphQL syntax, for messages: `{amount: 1, items: [$x]}`.
    public var text: String {
        switch self {
        case .variable(let n): "$" + n
        case .int(let t), .float(let t): t
        case .string(let s): GraphQLValue.string(s).jsonText
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .enumValue(let e): e
        case .list(let items): "[" + items.map(\.text).joined(separator: ", ") + "]"
        case .object(let fields): "{" + fields.map { "\($0.name): \($0.value.text)" }.joined(separator: ", ") + "}"
        }
    }
}

// MARK: Type system definitions (SDL)

public struct SchemaDefinition: Sendable {
    public var description: String?
    public var directives: [Directive]
    public var operationTypes: [(OperationType, String)]
    public var location: SourceLocation
}

public struct TypeDefinition: Sendable {
    public enum Kind: Sendable {
        case scalar
        case object(interfaces: [String], fields: [FieldDefinition])
        case interface(interfaces: [String], fields: [FieldDefinition])
        case union(types: [String])
        case enumeration(values: [EnumValueDefinition])
        case inputObject(fields: [InputValueDefinition])

        /// Nothing declared inside: no interfaces, fields, members or values.
        var isEmpty: Bool {
            switch self {
            case .scalar: true
            case .object(let interfaces, let fields), .interface(let interfaces, let fields):
                interfaces.isEmpty && fields.isEmpty
            case .union(let types): types.isEmpty
            case .enumeration(let values): values.isEmpty
            case .inputObject(let fields): fields.isEmpty
            }
        }
    }

    public var name: String
    public var description: String?
    public var kind: Kind
    public var directives: [Directive]
    public var location: SourceLocation
}

public struct FieldDefinition: Sendable {
    public var name: String
    public var description: String?
    public var arguments: [InputValueDefinition]
    public var type: TypeReference
    public var directives: [Directive]
    public var location: SourceLocation
}

public struct InputValueDefinition: Sendable {
    public var name: String
    public var description: String?
    public var type: TypeReference
    public var defaultValue: Value?
    public var directives: [Directive]
    public var location: SourceLocation
}

public struct EnumValueDefinition: Sendable {
    public var name: String
    public var description: String?
    public var directives: [Directive]
    public var location: SourceLocation
}

public struct DirectiveDefinition: Sendable {
    public var name: String
    public var description: String?
    public var arguments: [InputValueDefinition]
    public var repeatable: Bool
    public var locations: [String]
    public var location: SourceLocation
}
