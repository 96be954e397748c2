import Foundation

/// A GraphQL request as it goes on the wire (`{"query", "variables", "operationName"}`) and the parts of an answer a
/// client acts on: `data`, the top-level `errors` (the operation itself failed), `extensions`. Shared by every GraphQL
/// provider; each adds its own headers and session handling around it.
public struct GraphQLRequest: Sendable {
    /// The document: one operation, with the fragments it uses.
    public var document: String
    public var operationName: String
    public var variables: JSON.Object
    /// A query only reads (safe to repeat); a mutation may change things and is repeated only when the server said
    /// it did not take it (429).
    public var isMutation: Bool

    public init(document: String, operationName: String, isMutation: Bool, variables: JSON.Object = [:]) {
        self.document = document
        self.operationName = operationName
        self.isMutation = isMutation
        self.variables = variables
    }

    public var body: Data {
        JSON.object([
            "query": .string(document), "operationName": .string(operationName), "variables": .object(variables),
        ]).data
    }
}

/// A named document of one operation (with the fragments it uses), as a provider's client keeps it.
public struct GraphQLDocument: Sendable {
    public var name: String
    public var isMutation: Bool
    public var text: String

    public init(name: String, isMutation: Bool, text: String) {
        self.name = name
        self.isMutation = isMutation
        self.text = text
    }

    public func request(_ variables: JSON.Object = [:]) -> GraphQLRequest {
        GraphQLRequest(document: text, operationName: name, isMutation: isMutation, variables: variables)
    }
}

public struct GraphQLResponse: Sendable {
    public struct Error: Sendable, Equatable {
        public var message: String
        /// `path` joined with dots (`paymentInstructions.action`), empty when the error has none.
        public var path: String
        /// The error's `extensions` (Braintree's `legacyCode`, `errorClass`, `inputPath`), null when it has none.
        public var extensions: JSON = .null

        public var text: String { path.isEmpty ? message : "\(path): \(message)" }
    }

    public let status: Int
    /// The exchange's answer does not settle what the request did (see `HTTPClientResponse.outcomeOpen`).
    public let outcomeOpen: Bool
    public let data: JSON
    /// The answer has a `data` member (null included): the operation was executed, so a top-level error in it came
    /// from a field — after a mutation's resolver may have acted. No `data` at all means the request never ran
    /// (a syntax or validation error).
    public let executed: Bool
    public let errors: [Error]
    public let extensions: JSON
    /// The whole document, for `--format json` and the step's output.
    public let document: JSON

    /// Reads an answer. A body that is not a GraphQL response object says nothing of what the request did: after a
    /// mutation — or when the exchange itself left it open — the outcome is open (a money call reads back); a query's
    /// is a service problem. `hint` is the caller's (see `OperationContext.garbledHint`).
    public init(_ response: HTTPClientResponse, service: String, mutation: Bool, hint: String) throws(Diagnostic) {
        status = response.status
        outcomeOpen = response.outcomeOpen
        let open = mutation || response.outcomeOpen || response.status >= 500
        func garbled(_ what: String) -> Diagnostic {
            let message = "\(service) answered \(response.status) with \(what)"
            return open ? .uncertain(message, hint: hint) : .unavailable(message, hint: hint)
        }
        let parsed: JSON
        do { parsed = try response.parsedBody().get() } catch { throw garbled("a body that is not JSON: \(error)") }
        guard case .object(let object) = parsed, object["data"] != nil || object["errors"] != nil else {
            throw garbled("JSON that is not a GraphQL response (no data, no errors)")
        }
        document = parsed
        data = object["data"] ?? .null
        executed = object["data"] != nil
        extensions = object["extensions"] ?? .null
        errors = (object["errors"]?.arrayValue ?? []).map(Self.error)
    }

    static func error(_ json: JSON) -> Error {
        let path = (json["path"]?.arrayValue ?? []).map(\.interpolationText).joined(separator: ".")
        return Error(
            message: json["message"]?.stringValue ?? json.serialized(), path: path,
            extensions: json["extensions"] ?? .null)
    }

    /// `userErrors` under a payload (`[{message, path}]`), as errors with their paths.
    public static func userErrors(in payload: JSON?) -> [Error] {
        (payload?["userErrors"]?.arrayValue ?? []).map(error)
    }

    /// The answer does not settle what a mutation did, whatever it says: the exchange left it open, or the service
    /// failed (any 5xx, whatever its body). A money call reads back.
    public var settlesNothing: Bool { outcomeOpen || RetryPolicy.indeterminateStatuses.contains(status) }
}
