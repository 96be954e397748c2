/// Introspection (spec §4): the built-in scalars and directives, the `__Schema`/`__Type`/… types as SDL, and the
/// values that answer `__schema` and `__type` from a `Schema`, so GraphQL tools can read the emulator's schema.
enum Introspection {
    static let sdl = #"""
    scalar Int
    scalar Float
    scalar String
    scalar Boolean
    scalar ID

    directive @skip(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
    directive @include(if: Boolean!) on FIELD | FRAGMENT_SPREAD | INLINE_FRAGMENT
    directive @deprecated(reason: String = "No longer supported") on FIELD_DEFINITION | ARGUMENT_DEFINITION | INPUT_FIELD_DEFINITION | ENUM_VALUE
    directive @specifiedBy(url: String!) on SCALAR
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

    static func includeDeprecated(_ info: ResolveInfo) -> Bool { info.arguments["includeDeprecated"]?.boolValue ?? false }

    struct SchemaValue: ObjectValue {
        let schema: Schema
        var typeName: String { "__Schema" }

        func field(_ info: ResolveInfo) throws -> Any? {
            switch info.fieldName {
            case "description": return nil
            case "types": return schema.typeOrder.map { TypeValue(schema: schema, reference: .named($0)) }
            case "queryType": return TypeValue(schema: schema, reference: .named(schema.queryType))
            case "mutationType": return schema.mutationType.map { TypeValue(schema: schema, reference: .named($0)) }
            case "subscriptionType": return schema.subscriptionType.map { TypeValue(schema: schema, reference: .named($0)) }
            case "directives":
                return schema.directives.keys.sorted().compactMap { schema.directives[$0] }.map { DirectiveValue(schema: schema, definition: $0) }
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
                if case .string(let url)? = d.directives.first(where: { $0.name == "specifiedBy" })?.arguments.first?.value { return url }
                return nil
            case "fields":
                switch d.kind {
                case .object, .interface: return fields(type, info)
                default: return nil
                }
            case "interfaces":
                switch d.kind {
                case .object, .interface: return type.interfaces.map { TypeValue(schema: schema, reference: .named($0)) }
                default: return nil
                }
            case "possibleTypes":
                guard type.isAbstract else { return nil }
                return schema.possibleTypes(of: type.name).sorted().map { TypeValue(schema: schema, reference: .named($0)) }
            case "enumValues":
                guard case .enumeration(let values) = d.kind else { return nil }
                return values.filter { Introspection.includeDeprecated(info) || Introspection.deprecation($0.directives) == nil }
                    .map { value -> [String: Any] in
                        let reason = Introspection.deprecation(value.directives)
                        return ["name": value.name, "description": value.description as Any, "isDeprecated": reason != nil,
                                "deprecationReason": (reason ?? nil) as Any]
                    }
            case "inputFields":
                guard case .inputObject(let fields) = d.kind else { return nil }
                return fields.filter { Introspection.includeDeprecated(info) || Introspection.deprecation($0.directives) == nil }
                    .map { InputValue(schema: schema, definition: $0) }
            case "ofType": return nil
            case "isOneOf":
                guard case .inputObject = d.kind else { return nil }
                return d.directives.contains { $0.name == "oneOf" }
            default: return nil
            }
        }

        private func fields(_ type: Schema.NamedType, _ info: ResolveInfo) -> [Any] {
            type.orderedFields.filter { Introspection.includeDeprecated(info) || Introspection.deprecation($0.directives) == nil }
                .map { field -> [String: Any] in
                    let reason = Introspection.deprecation(field.directives)
                    let args = field.arguments.map { InputValue(schema: schema, definition: $0) }
                    return ["name": field.name, "description": field.description as Any, "args": args,
                            "type": TypeValue(schema: schema, reference: field.type), "isDeprecated": reason != nil,
                            "deprecationReason": (reason ?? nil) as Any]
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
