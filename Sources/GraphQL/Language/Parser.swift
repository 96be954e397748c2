/// A recursive-descent parser for GraphQL documents (spec §2 and §3): executable definitions and the type system
/// (SDL) in one grammar, so one parser reads both the documents a client sends and the schema a server serves.
public struct Parser {
    private var lexer: Lexer
    private var token: Token
    /// How deep selection sets, values and types nest right now; beyond `maxDepth` the document is refused, so a
    /// hostile `{a{a{a…` cannot exhaust the stack of whoever parses, validates or executes it.
    private var depth = 0
    public static let maxDepth = 128

    /// Parses a whole document; the first syntax error is thrown with its line and column.
    public static func parse(_ text: String) throws(GraphQLError) -> Document {
        var parser = try Parser(text)
        return try parser.document()
    }

    private init(_ text: String) throws(GraphQLError) {
        lexer = Lexer(text)
        token = try lexer.next()
    }

    // MARK: Tokens

    private mutating func advance() throws(GraphQLError) -> Token {
        let current = token
        token = try lexer.next()
        return current
    }

    private func unexpected(_ expected: String? = nil) -> GraphQLError {
        let found =
            switch token.kind {
            case .endOfFile: "<EOF>"
            case .punctuator: "\"\(token.value)\""
            case .name: "Name \"\(token.value)\""
            case .int: "Int \"\(token.value)\""
            case .float: "Float \"\(token.value)\""
            case .string, .blockString: "String \(GraphQLValue.string(token.value).jsonText)"
            }
        let message = expected.map { "Expected \($0), found \(found)." } ?? "Unexpected \(found)."
        return GraphQLError("Syntax Error: \(message)", locations: [token.location])
    }

    private mutating func expect(_ punctuator: String) throws(GraphQLError) {
        guard token.is(punctuator) else { throw unexpected("\"\(punctuator)\"") }
        _ = try advance()
    }

    /// Consumes the punctuator if it is next.
    private mutating func skip(_ punctuator: String) throws(GraphQLError) -> Bool {
        guard token.is(punctuator) else { return false }
        _ = try advance()
        return true
    }

    private mutating func name() throws(GraphQLError) -> String {
        guard token.kind == .name else { throw unexpected("Name") }
        return try advance().value
    }

    private mutating func keyword(_ word: String) throws(GraphQLError) {
        guard token.kind == .name, token.value == word else { throw unexpected("\"\(word)\"") }
        _ = try advance()
    }

    private func peekKeyword(_ word: String) -> Bool { token.kind == .name && token.value == word }

    /// `open item* close`, at least one item when `nonEmpty`.
    private mutating func many<T>(
        _ open: String, _ close: String, nonEmpty: Bool = true,
        _ item: (inout Parser) throws(GraphQLError) -> T
    ) throws(GraphQLError) -> [T] {
        guard depth < Self.maxDepth else {
            throw GraphQLError(
                "Syntax Error: Document nests deeper than \(Self.maxDepth) levels.", locations: [token.location])
        }
        depth += 1
        defer { depth -= 1 }
        try expect(open)
        var items: [T] = []
        if nonEmpty { items.append(try item(&self)) }
        while !(try skip(close)) { items.append(try item(&self)) }
        return items
    }

    // MARK: Document

    private mutating func document() throws(GraphQLError) -> Document {
        var definitions: [Definition] = []
        repeat {
            definitions.append(try definition())
        } while token.kind != .endOfFile
        return Document(definitions: definitions)
    }

    private mutating func definition() throws(GraphQLError) -> Definition {
        if token.is("{") { return .operation(try operation()) }
        let hasDescription = token.isString
        let keywordToken = hasDescription ? try peekPastDescription() : token
        guard keywordToken.kind == .name else { throw unexpected() }
        // Only type system definitions may have a description.
        switch (keywordToken.value, hasDescription) {
        case ("query", false), ("mutation", false), ("subscription", false): return .operation(try operation())
        case ("fragment", false): return .fragment(try fragmentDefinition())
        case ("schema", _): return .schema(try schemaDefinition())
        case ("scalar", _), ("type", _), ("interface", _), ("union", _), ("enum", _), ("input", _):
            return .type(try typeDefinition())
        case ("directive", _): return .directive(try directiveDefinition())
        case ("extend", false):
            _ = try advance()
            if peekKeyword("schema") { return .schemaExtension(try schemaDefinition(isExtension: true)) }
            return .typeExtension(try typeDefinition(isExtension: true))
        default: throw unexpected()
        }
    }

    /// The token after a description string, to decide what it describes (the lexer is cloned, nothing consumed).
    private func peekPastDescription() throws(GraphQLError) -> Token {
        var copy = lexer
        return try copy.next()
    }

    private mutating func description() throws(GraphQLError) -> String? {
        token.isString ? try advance().value : nil
    }

    // MARK: Operations and selections

    private mutating func operation() throws(GraphQLError) -> OperationDefinition {
        let location = token.location
        if token.is("{") {
            return OperationDefinition(
                operation: .query, name: nil, variables: [], directives: [],
                selectionSet: try selectionSet(), location: location)
        }
        let word = try name()
        guard let type = OperationType(rawValue: word) else {
            throw GraphQLError("Syntax Error: Unexpected Name \"\(word)\".", locations: [location])
        }
        let operationName = token.kind == .name ? try name() : nil
        let variables =
            token.is("(")
            ? try many("(", ")") { (p: inout Parser) throws(GraphQLError) in try p.variableDefinition() } : []
        return OperationDefinition(
            operation: type, name: operationName, variables: variables, directives: try directives(constant: false),
            selectionSet: try selectionSet(), location: location)
    }

    private mutating func variableDefinition() throws(GraphQLError) -> VariableDefinition {
        let location = token.location
        try expect("$")
        let variable = try name()
        try expect(":")
        let type = try typeReference()
        let defaultValue = try skip("=") ? try value(constant: true) : nil
        return VariableDefinition(
            name: variable, type: type, defaultValue: defaultValue, directives: try directives(constant: true),
            location: location)
    }

    private mutating func typeReference() throws(GraphQLError) -> TypeReference {
        guard depth < Self.maxDepth else {
            throw GraphQLError(
                "Syntax Error: Document nests deeper than \(Self.maxDepth) levels.", locations: [token.location])
        }
        depth += 1
        defer { depth -= 1 }
        var type: TypeReference
        if try skip("[") {
            type = .list(try typeReference())
            try expect("]")
        } else {
            type = .named(try name())
        }
        if try skip("!") { type = .nonNull(type) }
        return type
    }

    private mutating func selectionSet() throws(GraphQLError) -> [Selection] {
        try many("{", "}") { (p: inout Parser) throws(GraphQLError) in try p.selection() }
    }

    private mutating func selection() throws(GraphQLError) -> Selection {
        let location = token.location
        if try skip("...") {
            if token.kind == .name, token.value != "on" {
                return .fragmentSpread(
                    FragmentSpread(name: try name(), directives: try directives(constant: false), location: location))
            }
            var typeCondition: String?
            if peekKeyword("on") {
                _ = try advance()
                typeCondition = try name()
            }
            return .inlineFragment(
                InlineFragment(
                    typeCondition: typeCondition, directives: try directives(constant: false),
                    selectionSet: try selectionSet(), location: location))
        }
        var alias: String?
        var fieldName = try name()
        if try skip(":") {
            alias = fieldName
            fieldName = try name()
        }
        let arguments = try self.arguments(constant: false)
        let directives = try self.directives(constant: false)
        let subselection = token.is("{") ? try selectionSet() : nil
        return .field(
            Field(
                alias: alias, name: fieldName, arguments: arguments, directives: directives,
                selectionSet: subselection, location: location))
    }

    private mutating func arguments(constant: Bool) throws(GraphQLError) -> [Argument] {
        guard token.is("(") else { return [] }
        return try many("(", ")") { (p: inout Parser) throws(GraphQLError) in
            let location = p.token.location
            let argumentName = try p.name()
            try p.expect(":")
            return Argument(name: argumentName, value: try p.value(constant: constant), location: location)
        }
    }

    private mutating func directives(constant: Bool) throws(GraphQLError) -> [Directive] {
        var list: [Directive] = []
        while token.is("@") {
            let location = token.location
            _ = try advance()
            list.append(Directive(name: try name(), arguments: try arguments(constant: constant), location: location))
        }
        return list
    }

    private mutating func fragmentDefinition() throws(GraphQLError) -> FragmentDefinition {
        let location = token.location
        try keyword("fragment")
        guard !peekKeyword("on") else { throw unexpected() }
        let fragmentName = try name()
        try keyword("on")
        return FragmentDefinition(
            name: fragmentName, typeCondition: try name(), directives: try directives(constant: false),
            selectionSet: try selectionSet(), location: location)
    }

    // MARK: Values

    /// A value; in a constant context (defaults, SDL) variables are not allowed.
    private mutating func value(constant: Bool) throws(GraphQLError) -> Value {
        switch token.kind {
        case .punctuator:
            if token.is("[") {
                return .list(
                    try many("[", "]", nonEmpty: false) { (p: inout Parser) throws(GraphQLError) in
                        try p.value(constant: constant)
                    })
            }
            if token.is("{") {
                return .object(
                    try many("{", "}", nonEmpty: false) { (p: inout Parser) throws(GraphQLError) in
                        let fieldName = try p.name()
                        try p.expect(":")
                        return Value.ObjectField(name: fieldName, value: try p.value(constant: constant))
                    })
            }
            if token.is("$"), !constant {
                _ = try advance()
                return .variable(try name())
            }
            throw unexpected()
        case .int: return .int(try advance().value)
        case .float: return .float(try advance().value)
        case .string, .blockString: return .string(try advance().value)
        case .name:
            let word = try advance().value
            switch word {
            case "true": return .bool(true)
            case "false": return .bool(false)
            case "null": return .null
            default: return .enumValue(word)
            }
        case .endOfFile:
            throw unexpected()
        }
    }

    // MARK: Type system

    /// `schema` (or `extend schema`) with its directives and root operation types; an extension must add one or the
    /// other.
    private mutating func schemaDefinition(isExtension: Bool = false) throws(GraphQLError) -> SchemaDefinition {
        let location = token.location
        let text = isExtension ? nil : try description()
        try keyword("schema")
        let directives = try directives(constant: true)
        let hasOperationTypes = token.is("{")
        if isExtension && directives.isEmpty && !hasOperationTypes { throw unexpected() }
        let operationTypes =
            !hasOperationTypes && isExtension
            ? []
            : try many("{", "}") { (p: inout Parser) throws(GraphQLError) -> (OperationType, String) in
                let at = p.token.location
                let word = try p.name()
                guard let type = OperationType(rawValue: word) else {
                    throw GraphQLError("Syntax Error: Unexpected Name \"\(word)\".", locations: [at])
                }
                try p.expect(":")
                return (type, try p.name())
            }
        return SchemaDefinition(
            description: text, directives: directives, operationTypes: operationTypes, location: location)
    }

    private mutating func typeDefinition(isExtension: Bool = false) throws(GraphQLError) -> TypeDefinition {
        let location = token.location
        let text = isExtension ? nil : try description()
        let word = try name()
        let typeName = try name()
        let kind: TypeDefinition.Kind
        var directives: [Directive] = []
        switch word {
        case "scalar":
            directives = try self.directives(constant: true)
            kind = .scalar
        case "type", "interface":
            let interfaces = try implementsInterfaces()
            directives = try self.directives(constant: true)
            let fields =
                token.is("{")
                ? try many("{", "}") { (p: inout Parser) throws(GraphQLError) in try p.fieldDefinition() } : []
            kind =
                word == "type"
                ? .object(interfaces: interfaces, fields: fields) : .interface(interfaces: interfaces, fields: fields)
        case "union":
            directives = try self.directives(constant: true)
            var members: [String] = []
            if try skip("=") {
                _ = try skip("|")
                repeat { members.append(try name()) } while try skip("|")
            }
            kind = .union(types: members)
        case "enum":
            directives = try self.directives(constant: true)
            let values =
                token.is("{")
                ? try many("{", "}") { (p: inout Parser) throws(GraphQLError) -> EnumValueDefinition in
                    let at = p.token.location
                    let valueText = try p.description()
                    let valueName = try p.name()
                    if ["true", "false", "null"].contains(valueName) {
                        throw GraphQLError(
                            "Syntax Error: \(valueName) is reserved and cannot be used for an enum value.",
                            locations: [at])
                    }
                    return EnumValueDefinition(
                        name: valueName, description: valueText, directives: try p.directives(constant: true),
                        location: at)
                } : []
            kind = .enumeration(values: values)
        case "input":
            directives = try self.directives(constant: true)
            kind = .inputObject(
                fields: token.is("{")
                    ? try many("{", "}") { (p: inout Parser) throws(GraphQLError) in try p.inputValueDefinition() } : []
            )
        default:
            throw GraphQLError("Syntax Error: Unexpected Name \"\(word)\".", locations: [location])
        }
        // An extension that adds nothing is not one: the grammar wants directives, interfaces, members or fields.
        if isExtension && directives.isEmpty && kind.isEmpty { throw unexpected() }
        return TypeDefinition(name: typeName, description: text, kind: kind, directives: directives, location: location)
    }

    private mutating func implementsInterfaces() throws(GraphQLError) -> [String] {
        guard peekKeyword("implements") else { return [] }
        _ = try advance()
        _ = try skip("&")
        var names = [try name()]
        while try skip("&") { names.append(try name()) }
        return names
    }

    private mutating func fieldDefinition() throws(GraphQLError) -> FieldDefinition {
        let location = token.location
        let text = try description()
        let fieldName = try name()
        let arguments =
            token.is("(")
            ? try many("(", ")") { (p: inout Parser) throws(GraphQLError) in try p.inputValueDefinition() } : []
        try expect(":")
        return FieldDefinition(
            name: fieldName, description: text, arguments: arguments, type: try typeReference(),
            directives: try directives(constant: true), location: location)
    }

    private mutating func inputValueDefinition() throws(GraphQLError) -> InputValueDefinition {
        let location = token.location
        let text = try description()
        let valueName = try name()
        try expect(":")
        let type = try typeReference()
        let defaultValue = try skip("=") ? try value(constant: true) : nil
        return InputValueDefinition(
            name: valueName, description: text, type: type, defaultValue: defaultValue,
            directives: try directives(constant: true), location: location)
    }

    private mutating func directiveDefinition() throws(GraphQLError) -> DirectiveDefinition {
        let location = token.location
        let text = try description()
        try keyword("directive")
        try expect("@")
        let directiveName = try name()
        let arguments =
            token.is("(")
            ? try many("(", ")") { (p: inout Parser) throws(GraphQLError) in try p.inputValueDefinition() } : []
        var repeatable = false
        if peekKeyword("repeatable") {
            _ = try advance()
            repeatable = true
        }
        try keyword("on")
        _ = try skip("|")
        var locations = [try directiveLocation()]
        while try skip("|") { locations.append(try directiveLocation()) }
        return DirectiveDefinition(
            name: directiveName, description: text, arguments: arguments, repeatable: repeatable,
            locations: locations, location: location)
    }

    /// One of the spec's directive locations (`__DirectiveLocation`); any other name is a syntax error.
    private mutating func directiveLocation() throws(GraphQLError) -> String {
        guard token.kind == .name, Self.directiveLocations.contains(token.value) else { throw unexpected() }
        return try advance().value
    }

    static let directiveLocations: Set<String> = [
        "QUERY", "MUTATION", "SUBSCRIPTION", "FIELD", "FRAGMENT_DEFINITION", "FRAGMENT_SPREAD", "INLINE_FRAGMENT",
        "VARIABLE_DEFINITION", "SCHEMA", "SCALAR", "OBJECT", "FIELD_DEFINITION", "ARGUMENT_DEFINITION", "INTERFACE",
        "UNION",
        "ENUM", "ENUM_VALUE", "INPUT_OBJECT", "INPUT_FIELD_DEFINITION",
    ]
}
