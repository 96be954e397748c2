import Foundation
import GraphQL
import WireTypes

/// A GraphQL-over-HTTP POST body as Centra's and Braintree's endpoints take it: `{"query", "operationName"?,
/// "variables"?}`. Nil when the body is not a JSON object with a string `query`.
struct GraphQLRequest {
    var query: String
    var operationName: String?
    var variables: GraphQLValue

    init?(_ request: EmulatorRequest) {
        guard let body = request.jsonObject, let query = body.string("query") else { return nil }
        self.query = query
        operationName = body.string("operationName")
        variables = GraphQLValue(body["variables"] ?? .null)
    }
}

extension GraphQLValue {
    /// A JSON value as GraphQL input. JSON has one kind of number: a whole one small enough to be exact is an Int
    /// (as graphql-js, whose numbers are JavaScript's, takes `1.0` for an Int), any other a Float.
    init(_ json: JSON) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = json.intValue.map(GraphQLValue.int) ?? .float(n.double)
        case .string(let s): self = .string(s)
        case .array(let items): self = .list(items.map(GraphQLValue.init))
        case .object(let members): self = .object(members.keys.sorted().map { ($0, GraphQLValue(members[$0]!)) })
        }
    }
}
