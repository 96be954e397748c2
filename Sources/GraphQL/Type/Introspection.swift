/// Introspection (spec §4): the built-in scalars and directives, with the descriptions the spec and the reference
/// implementation give them, the `__Schema`/`__Type`/… types as SDL, and the values that answer `__schema` and `__type`
/// from a `Schema`, so GraphQL tools can read the emulator's schema.
enum Introspection {
    static let sdl = #"""
        """The `Int` scalar type represents non-fractional signed whole numeric values. Int can represent values between -(2^31) and 2^31 - 1."""
        scalar Int
        """The `Float` scalar type represents signed double-precision fractional values as specified by [IEEE 754](https://en.wikipedia.org/wiki/IEEE_floating_point)."""
        scalar Float
        """The `String` scalar type represents textual data, represented as UTF-8 character sequences. The String type is most often used by GraphQL to represent free-form human-readable text."""
        scalar String
        """The `Boolean` scalar type represents `true` or `false`."""
        scalar Boolean
        """The `ID` scalar type represents a unique identifier, often used to refetch an object or as key for a cache. The ID type appears in a JSON response as a String; however, it is not intended to be human-readable. When expected as an input type, any string (such as `"4"`) or integer (such as `4`) input value will be accepted as an ID."""
        scalar ID

        """Directs the executor to skip this field or fragment when the `if` argument is true."""
        directive @skip("""Skipped when true.""" if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
        """Directs the executor to include this field or fragment only when the `if` argument is true."""
        directive @include("""Included when true.""" if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
        """Marks an element of a GraphQL schema as no longer supported."""
        directive @deprecated(
          """Explains why this element was deprecated, usually also including a suggestion for how to access supported similar data. Formatted using the Markdown syntax, as specified by [CommonMark](https://commonmark.org/)."""
          reason: String = "No longer supported"
        ) on FIELD_DEFINITION | ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION | ENUM_VALUE
        """Exposes a URL that specifies the behavior of this scalar."""
        directive @specifiedBy("""The URL that specifies the behavior of this scalar.""" url: String!) on SCALAR
        """Indicates exactly one field must be supplied and this field must not be `null`."""
        directive @oneOf on INPUT_OBJECT

        type __Schema {
          description: String
          types: [__Type!]!
          queryType: __Type!
          mutationType: __Type
          subscriptionType: __Type
          directives: [__Directive!]!
        }

        type __Type {
          kind: __TypeKind!
          name: String
          description: String
          specifiedByURL: String
          fields(includeDeprecated: Boolean = false): [__Field!]
          interfaces: [__Type!]
          possibleTypes: [__Type!]
          enumValues(includeDeprecated: Boolean = false): [__EnumValue!]
          inputFields(includeDeprecated: Boolean = false): [__InputValue!]
          ofType: __Type
          isOneOf: Boolean
        }

        enum __TypeKind { SCALAR OBJECT INTERFACE UNION ENUM INPUT_OBJECT LIST NON_NULL }

        type __Field {
          name: String!
          description: String
          args(includeDeprecated: Boolean = false): [__InputValue!]!
          type: __Type!
          isDeprecated: Boolean!
          deprecationReason: String
        }

        type __InputValue {
          name: String!
          description: String
          type: __Type!
          defaultValue: String
          isDeprecated: Boolean!
          deprecationReason: String
        }

        type __EnumValue {
          name: String!
          description: String
          isDeprecated: Boolean!
          deprecationReason: String
        }

        type __Directive {
          name: String!
          description: String
          locations: [__DirectiveLocation!]!
          args(includeDeprecated: Boolean = false): [__InputValue!]!
          isRepeatable: Boolean!
        }

        enum __DirectiveLocation {
          QUERY MUTATION SUBSCRIPTION FIELD FRAGMENT_DEFINITION FRAGMENT_SPREAD INLINE_FRAGMENT VARIABLE_DEFINITION
          SCHEMA SCALAR OBJECT FIELD_DEFINITION ARGUMENT_DEFINITION INTERFACE UNION ENUM ENUM_VALUE INPUT_OBJECT INPUT_FIELD_DEFINITION
        }
        """#

    /// `@deprecated(reason:)` on a definition: nil when not deprecated.
    static func deprecation(_ directives: [Directive]) -> String?? {
        guard let d = directives.first(where: { $0.name == "deprecated" }) else { return nil }
        if case .string(let reason)? = d.arguments.first(where: { $0.name == "reason" })?.value { return .some(reason) }
        return .some("No longer supported")
    }

    static func includeDeprecated(_ info: ResolveInfo) -> Bool {
        info.arguments["includeDeprecated"]?.boolValue ?? false
    }

    struct SchemaValue: ObjectValue {
        let schema: Schema
        var typeName: String { "__Schema" }

        func field(_ info: ResolveInfo) throws -> Any? {
            switch info.fieldName {
            case "description": return nil
            case "types": return schema.typeOrder.map { TypeValue(schema: schema, reference: .named($0)) }
            case "queryType": return TypeValue(schema: schema, reference: .named(schema.queryType))
            case "mutationType": return schema.mutationType.map { TypeValue(schema: schema, reference: .named($0)) }
            case "subscriptionType":
                return schema.subscriptionType.map { TypeValue(schema: schema, reference: .named($0)) }
            case "directives":
                return schema.directives.keys.sorted().compactMap { schema.directives[$0] }.map {
                    DirectiveValue(schema: schema, definition: $0)
                }
            default: return nil
            }
        }
    }

    struct TypeValue: ObjectValue {
        let schema: Schema
        let reference: TypeReference
        var typeName: String { "__Type" }

        func field(_ info: ResolveInfo) throws -> Any? {
            switch reference {
            case .nonNull(let inner):
                switch info.fieldName {
                case "kind": return "NON_NULL"
                case "ofType": return TypeValue(schema: schema, reference: inner)
                default: return nil
                }
            case .list(let inner):
                switch info.fieldName {
                case "kind": return "LIST"
                case "ofType": return TypeValue(schema: schema, reference: inner)
                default: return nil
                }
            case .named(let name):
                guard let type = schema[name] else { return nil }
                return named(type, info)
            }
        }

        private func named(_ type: Schema.NamedType, _ info: ResolveInfo) -> Any? {
            let d = type.definition
            switch info.fieldName {
            case "kind":
                return switch d.kind {
                case .scalar: "SCALAR"
                case .object: "OBJECT"
                case .interface: "INTERFACE"
                case .union: "UNION"
                case .enumeration: "ENUM"
                case .inputObject: "INPUT_OBJECT"
                }
            case "name": return d.name
            case "description": return d.description
            case "specifiedByURL":
                if case .string(let url)? = d.directives.first(where: { $0.name == "specifiedBy" })?.arguments.first?
                    .value
                {
                    return url
                }
                return nil
            case "fields":
                switch d.kind {
                case .object, .interface: return fields(type, info)
                default: return nil
                }
            case "interfaces":
                switch d.kind {
                case .object, .interface:
                    return type.interfaces.map { TypeValue(schema: schema, reference: .named($0)) }
                default: return nil
                }
            case "possibleTypes":
                guard type.isAbstract else { return nil }
                return schema.possibleTypes(of: type.name).sorted().map {
                    TypeValue(schema: schema, reference: .named($0))
                }
            case "enumValues":
                guard case .enumeration(let values) = d.kind else { return nil }
                return values.filter {
                    Introspection.includeDeprecated(info) || Introspection.deprecation($0.directives) == nil
                }
                .map { value -> [String: Any] in
                    let reason = Introspection.deprecation(value.directives)
                    return [
                        "name": value.name, "description": value.description as Any, "isDeprecated": reason != nil,
                        "deprecationReason": (reason ?? nil) as Any,
                    ]
                }
            case "inputFields":
                guard case .inputObject(let fields) = d.kind else { return nil }
                return fields.filter {
                    Introspection.includeDeprecated(info) || Introspection.deprecation($0.directives) == nil
                }
                .map { InputValue(schema: schema, definition: $0) }
            case "ofType": return nil
            case "isOneOf":
                guard case .inputObject = d.kind else { return nil }
                return d.directives.contains { $0.name == "oneOf" }
            default: return nil
            }
        }

        private func fields(_ type: Schema.NamedType, _ info: ResolveInfo) -> [Any] {
            type.orderedFields.filter { field in
                Introspection.includeDeprecated(info) || Introspection.deprecation(field.directives) == nil
            }
            .map { field -> [String: Any] in
                let reason = Introspection.deprecation(field.directives)
                let args = field.arguments.map { InputValue(schema: schema, definition: $0) }
                return [
                    "name": field.name, "description": field.description as Any, "args": args,
                    "type": TypeValue(schema: schema, reference: field.type), "isDeprecated": reason != nil,
                    "deprecationReason": (reason ?? nil) as Any,
                ]
            }
        }
    }

    struct InputValue: ObjectValue {
        let schema: Schema
        let definition: InputValueDefinition
        var typeName: String { "__InputValue" }

        func field(_ info: ResolveInfo) throws -> Any? {
            switch info.fieldName {
            case "name": return definition.name
            case "description": return definition.description
            case "type": return TypeValue(schema: schema, reference: definition.type)
            case "defaultValue": return definition.defaultValue?.text
            case "isDeprecated": return Introspection.deprecation(definition.directives) != nil
            case "deprecationReason": return Introspection.deprecation(definition.directives) ?? nil
            default: return nil
            }
        }
    }

    struct DirectiveValue: ObjectValue {
        let schema: Schema
        let definition: DirectiveDefinition
        var typeName: String { "__Directive" }

        func field(_ info: ResolveInfo) throws -> Any? {
            switch info.fieldName {
            case "name": return definition.name
            case "description": return definition.description
            case "locations": return definition.locations
            case "args": return definition.arguments.map { InputValue(schema: schema, definition: $0) }
            case "isRepeatable": return definition.repeatable
            default: return nil
            }
        }
    }
}
