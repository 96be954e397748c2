/// A position in a document, 1-based, as GraphQL errors report it (`locations: [{line, column}]`).
public struct SourceLocation: Sendable, Hashable {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }
}

/// A lexical token (GraphQL spec §2.1). Punctuators carry their text in `value`, as names and literals do.
struct Token: Sendable {
    enum Kind: Sendable, Equatable {
        case endOfFile
        case punctuator  // ! $ & ( ) ... : = @ [ ] { | }
        case name
        case int
        case float
        case string
        case blockString
    }

    var kind: Kind
    var value: String
    var location: SourceLocation
    /// The description a string token may be, when it stands before a definition.
    var isString: Bool { kind == .string || kind == .blockString }

    func `is`(_ punctuator: String) -> Bool { kind == .punctuator && value == punctuator }
}
