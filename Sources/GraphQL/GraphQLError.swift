/// An error as GraphQL servers report it (spec §7.1.2): a message, where in the document, and for an execution
/// error the response path of the field that failed.
public struct GraphQLError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum PathComponent: Sendable, Equatable {
        case key(String)
        case index(Int)
    }

    public var message: String
    public var locations: [SourceLocation]
    public var path: [PathComponent]
    /// Extra members under `extensions` (a server's error code, for instance).
    public var extensions: [(String, GraphQLValue)]

    public init(
        _ message: String, locations: [SourceLocation] = [], path: [PathComponent] = [],
        extensions: [(String, GraphQLValue)] = []
    ) {
        self.message = message
        self.locations = locations
        self.path = path
        self.extensions = extensions
    }

    public static func == (a: GraphQLError, b: GraphQLError) -> Bool {
        a.message == b.message && a.locations == b.locations && a.path == b.path
            && a.extensions.elementsEqual(b.extensions) { $0.0 == $1.0 && $0.1 == $1.1 }
    }

    public var description: String {
        let at = locations.first.map { " (\($0.line):\($0.column))" } ?? ""
        return message + at
    }

    /// `{"message", "locations": [{"line", "column"}], "path": [...]}`, members left out when empty.
    public var value: GraphQLValue {
        var members: [(String, GraphQLValue)] = [("message", .string(message))]
        if !locations.isEmpty {
            members.append(
                ("locations", .list(locations.map { .object([("line", .int($0.line)), ("column", .int($0.column))]) })))
        }
        if !path.isEmpty {
            members.append(
                (
                    "path",
                    .list(
                        path.map {
                            switch $0 {
                            case .key(let k): .string(k)
                            case .index(let i): .int(i)
                            }
                        })
                ))
        }
        if !extensions.isEmpty { members.append(("extensions", .object(extensions))) }
        return .object(members)
    }
}
