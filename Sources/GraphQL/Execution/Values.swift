/// Input coercion (spec §5.6, §6.1.2, §6.4.1): variable values from the request's JSON and argument literals from the
/// document, each checked against its input type, defaults filled in. One set of rules serves both validation
/// (literals, statically) and execution.
enum InputCoercion {
    /// Why a value does not fit a type, for messages: `Int cannot represent non-integer value: "5"`.
    struct Problem: Error {
        var message: String
        /// The input path inside the value (`input.shippingAddress.country`), empty at the top.
        var path: [String] = []

        func prefixed(_ key: String) -> Problem { Problem(message: message, path: [key] + path) }
    }

    static let maxInt = Int(Int32.max), minInt = Int(Int32.min)

    // MARK: Runtime values (variables)

    /// A variable's JSON value coerced to its type.
    static func coerce(_ value: GraphQLValue, to type: TypeReference, in schema: Schema) throws(Problem) -> GraphQLValue
    {
        switch type {
        case .nonNull(let inner):
            if value.isNull { throw Problem(message: "Expected non-nullable type \"\(type)\" not to be null.") }
            return try coerce(value, to: inner, in: schema)
        case .list(let item):
            if value.isNull { return .null }
            // A single value where a list is expected is a list of one (§3.11 input coercion).
            guard case .list(let items) = value else { return .list([try coerce(value, to: item, in: schema)]) }
            var out: [GraphQLValue] = []
            for (i, v) in items.enumerated() {
                do { out.append(try coerce(v, to: item, in: schema)) } catch { throw error.prefixed(String(i)) }
            }
            return .list(out)
        case .named(let name):
            if value.isNull { return .null }
            guard let named = schema[name] else { throw Problem(message: "Unknown type \"\(name)\".") }
            switch named.definition.kind {
            case .scalar: return try coerceScalar(value, name)
            case .enumeration:
                guard case .string(let s) = value, named.enumValues.contains(s) else {
                    throw Problem(message: "Value \(value.jsonText) does not exist in \"\(name)\" enum.")
                }
                return .enumValue(s)
            case .inputObject(let fields):
                guard case .object(let members) = value else {
                    throw Problem(message: "Expected type \"\(name)\" to be an object.")
                }
                for (key, _) in members where named.inputFields[key] == nil {
                    throw Problem(message: "Field \"\(key)\" is not defined by type \"\(name)\".")
                }
                // A OneOf input object given as a variable's value: exactly one field, and not null, as for a literal.
                if named.isOneOf {
                    guard members.count == 1 else {
                        throw Problem(message: "OneOf Input Object \"\(name)\" must specify exactly one key.")
                    }
                    if members[0].1.isNull {
                        throw Problem(message: "Field \"\(name).\(members[0].0)\" must be non-null.")
                    }
                }
                var out: [(String, GraphQLValue)] = []
                for field in fields {
                    if let given = members.first(where: { $0.0 == field.name })?.1 {
                        do { out.append((field.name, try coerce(given, to: field.type, in: schema))) } catch {
                            throw error.prefixed(field.name)
                        }
                    } else if let d = field.defaultValue {
                        out.append((field.name, try literal(d, to: field.type, variables: [:], in: schema)))
                    } else if field.type.isNonNull {
                        throw Problem(
                            message: "Field \"\(field.name)\" of required type \"\(field.type)\" was not provided.")
                    }
                }
                return .object(out)
            case .object, .interface, .union:
                throw Problem(message: "\"\(name)\" is not an input type.")
            }
        }
    }

    /// The built-in scalars' input coercion; a custom scalar (`Map`, `DateTime`) takes any value as it is.
    static func coerceScalar(_ value: GraphQLValue, _ name: String) throws(Problem) -> GraphQLValue {
        switch name {
        case "Int":
            guard case .int(let i) = value else {
                if case .float(let d) = value, d.rounded() == d, abs(d) <= Double(maxInt) { return .int(Int(d)) }
                throw Problem(message: "Int cannot represent non-integer value: \(value.jsonText)")
            }
            guard i >= minInt && i <= maxInt else {
                throw Problem(message: "Int cannot represent non 32-bit signed integer value: \(i)")
            }
            return value
        case "Float":
            switch value {
            case .int(let i): return .float(Double(i))
            case .float: return value
            default: throw Problem(message: "Float cannot represent non numeric value: \(value.jsonText)")
            }
        case "String":
            guard case .string = value else {
                throw Problem(message: "String cannot represent a non string value: \(value.jsonText)")
            }
            return value
        case "Boolean":
            guard case .bool = value else {
                throw Problem(message: "Boolean cannot represent a non boolean value: \(value.jsonText)")
            }
            return value
        case "ID":
            switch value {
            case .string: return value
            case .int(let i): return .string(String(i))
            default: throw Problem(message: "ID cannot represent value: \(value.jsonText)")
            }
        default:
            return value
        }
    }

    // MARK: Literals (arguments, defaults)

    /// A literal from the document coerced to its type, variables substituted from `variables` (already coerced).
    /// A variable that has no value is absent: the caller then uses the default, as §6.4.1 says. With `variables` nil
    /// (validation, before any values exist) a variable is taken as present and fitting: its own rule checks it.
    static func literal(
        _ value: Value, to type: TypeReference, variables: [String: GraphQLValue]?,
        in schema: Schema
    ) throws(Problem) -> GraphQLValue {
        if case .variable(let name) = value {
            guard let variables else { return .null }
            guard let v = variables[name] else { return .null }
            if type.isNonNull && v.isNull {
                throw Problem(message: "Expected non-nullable type \"\(type)\" not to be null.")
            }
            return v
        }
        switch type {
        case .nonNull(let inner):
            if value == .null { throw Problem(message: "Expected value of type \"\(type)\", found null.") }
            return try literal(value, to: inner, variables: variables, in: schema)
        case .list(let item):
            if value == .null { return .null }
            guard case .list(let items) = value else {
                return .list([try literal(value, to: item, variables: variables, in: schema)])
            }
            var out: [GraphQLValue] = []
            for (i, v) in items.enumerated() {
                do { out.append(try literal(v, to: item, variables: variables, in: schema)) } catch {
                    throw error.prefixed(String(i))
                }
            }
            return .list(out)
        case .named(let name):
            if value == .null { return .null }
            guard let named = schema[name] else { throw Problem(message: "Unknown type \"\(name)\".") }
            switch named.definition.kind {
            case .scalar: return try literalScalar(value, name, variables: variables)
            case .enumeration:
                guard case .enumValue(let e) = value, named.enumValues.contains(e) else {
                    let hint =
                        if case .string(let s) = value, named.enumValues.contains(s) {
                            " Did you mean the enum value \"\(s)\"?"
                        } else { "" }
                    throw Problem(message: "Value \"\(value.text)\" does not exist in \"\(name)\" enum.\(hint)")
                }
                return .enumValue(e)
            case .inputObject(let fields):
                guard case .object(let given) = value else {
                    throw Problem(message: "Expected value of type \"\(name)\", found \(value.text).")
                }
                for f in given where named.inputFields[f.name] == nil {
                    throw Problem(message: "Field \"\(f.name)\" is not defined by type \"\(name)\".")
                }
                if named.isOneOf {
                    // Exactly one field, and not null — a variable's value included, once there are values.
                    let present = given.filter { !isUnsetVariable($0.value, variables) }
                    guard present.count == 1, given.count == 1 else {
                        throw Problem(message: "OneOf Input Object \"\(name)\" must specify exactly one key.")
                    }
                    let only = present[0]
                    let isNull =
                        if case .variable(let v) = only.value { variables?[v]?.isNull ?? false } else {
                            only.value == .null
                        }
                    if isNull { throw Problem(message: "Field \"\(name).\(only.name)\" must be non-null.") }
                }
                var out: [(String, GraphQLValue)] = []
                for field in fields {
                    let provided = given.first { $0.name == field.name }?.value
                    // A variable with no value counts as absent (the default applies).
                    if let provided, !(isUnsetVariable(provided, variables)) {
                        do {
                            out.append(
                                (field.name, try literal(provided, to: field.type, variables: variables, in: schema)))
                        } catch { throw error.prefixed(field.name) }
                    } else if let d = field.defaultValue {
                        out.append((field.name, try literal(d, to: field.type, variables: [:], in: schema)))
                    } else if field.type.isNonNull {
                        throw Problem(
                            message:
                                "Field \"\(name).\(field.name)\" of required type \"\(field.type)\" was not provided.")
                    }
                }
                return .object(out)
            case .object, .interface, .union:
                throw Problem(message: "\"\(name)\" is not an input type.")
            }
        }
    }

    static func isUnsetVariable(_ value: Value, _ variables: [String: GraphQLValue]?) -> Bool {
        if case .variable(let n) = value, let variables { return variables[n] == nil }
        return false
    }

    static func literalScalar(
        _ value: Value, _ name: String, variables: [String: GraphQLValue]?
    ) throws(Problem) -> GraphQLValue {
        switch (name, value) {
        case ("Int", .int(let text)):
            guard let i = Int(text), i >= minInt && i <= maxInt else {
                throw Problem(message: "Int cannot represent non 32-bit signed integer value: \(text)")
            }
            return .int(i)
        case ("Int", _): throw Problem(message: "Int cannot represent non-integer value: \(value.text)")
        case ("Float", .int(let text)), ("Float", .float(let text)):
            guard let d = Double(text) else {
                throw Problem(message: "Float cannot represent non numeric value: \(text)")
            }
            return .float(d)
        case ("Float", _): throw Problem(message: "Float cannot represent non numeric value: \(value.text)")
        case ("String", .string(let s)): return .string(s)
        case ("String", _): throw Problem(message: "String cannot represent a non string value: \(value.text)")
        case ("Boolean", .bool(let b)): return .bool(b)
        case ("Boolean", _): throw Problem(message: "Boolean cannot represent a non boolean value: \(value.text)")
        case ("ID", .string(let s)), ("ID", .int(let s)): return .string(s)
        case ("ID", _): throw Problem(message: "ID cannot represent a non-string and non-integer value: \(value.text)")
        default:
            // A custom scalar takes the literal as a plain value (objects, lists, enum names as strings).
            return plain(value, variables: variables)
        }
    }

    /// A literal as a plain value, with no type to guide it.
    static func plain(_ value: Value, variables: [String: GraphQLValue]?) -> GraphQLValue {
        switch value {
        case .variable(let n): variables?[n] ?? .null
        case .int(let t): Int(t).map(GraphQLValue.int) ?? .float(Double(t) ?? 0)
        case .float(let t): .float(Double(t) ?? 0)
        case .string(let s): .string(s)
        case .bool(let b): .bool(b)
        case .null: .null
        case .enumValue(let e): .string(e)
        case .list(let items): .list(items.map { plain($0, variables: variables) })
        case .object(let fields): .object(fields.map { ($0.name, plain($0.value, variables: variables)) })
        }
    }

    // MARK: Arguments

    /// A field's or directive's arguments (§6.4.1 CoerceArgumentValues): given ones coerced, defaults filled in, a
    /// missing required one an error.
    static func arguments(
        _ given: [Argument], definitions: [InputValueDefinition], variables: [String: GraphQLValue],
        in schema: Schema
    ) throws(GraphQLError) -> [String: GraphQLValue] {
        var out: [String: GraphQLValue] = [:]
        for definition in definitions {
            let argument = given.first { $0.name == definition.name }
            if let argument, !isUnsetVariable(argument.value, variables) {
                do {
                    out[definition.name] = try literal(
                        argument.value, to: definition.type, variables: variables, in: schema)
                } catch {
                    let at = error.path.isEmpty ? "" : " at \"\(error.path.joined(separator: "."))\""
                    throw GraphQLError(
                        "Argument \"\(definition.name)\" has invalid value\(at): \(error.message)",
                        locations: [argument.location])
                }
            } else if let d = definition.defaultValue {
                do { out[definition.name] = try literal(d, to: definition.type, variables: [:], in: schema) } catch {
                    throw GraphQLError("Argument \"\(definition.name)\" has an invalid default: \(error.message)")
                }
            } else if definition.type.isNonNull {
                throw GraphQLError(
                    "Argument \"\(definition.name)\" of required type \"\(definition.type)\" was not provided.",
                    locations: argument.map { [$0.location] } ?? [])
            }
        }
        return out
    }
}
