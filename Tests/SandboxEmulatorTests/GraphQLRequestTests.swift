import Foundation
import GraphQL
import LoopbackHTTP
import Testing

@testable import SandboxEmulator

/// A GraphQL-over-HTTP body as the emulator's GraphQL endpoints read it: JSON's one kind of number becomes an Int when
/// it is whole (as graphql-js takes it) and a Float otherwise.
@Suite struct GraphQLRequestTests {
    static func request(_ body: String) -> EmulatorRequest {
        EmulatorRequest(http: HTTPRequest(method: "POST", target: "/graphql", body: Data(body.utf8)))
    }

    @Test func variablesKeepTheirKinds() throws {
        let body = try #require(
            GraphQLRequest(
                Self.request(
                    #"""
                    {"query":"{ ping }","operationName":"P","variables":{"i":2,"whole":2.0,"f":2.5,"b":false,"s":"2","n":null,"l":[1,"x"],"o":{"z":1,"a":true}}}
                    """#)))
        #expect(body.query == "{ ping }")
        #expect(body.operationName == "P")
        #expect(body.variables["i"] == .int(2))
        #expect(body.variables["whole"] == .int(2))
        #expect(body.variables["f"] == .float(2.5))
        #expect(body.variables["b"] == .bool(false))
        #expect(body.variables["s"] == .string("2"))
        #expect(body.variables["n"] == .null)
        #expect(body.variables["l"] == .list([.int(1), .string("x")]))
        #expect(body.variables["o"] == .object([("a", .bool(true)), ("z", .int(1))]))
    }

    @Test func aBodyWithoutAStringQueryIsRefused() {
        #expect(GraphQLRequest(Self.request(#"{"query":5}"#)) == nil)
        #expect(GraphQLRequest(Self.request(#"["query"]"#)) == nil)
        #expect(GraphQLRequest(Self.request("query { ping }")) == nil)
        #expect(GraphQLRequest(Self.request(#"{"query":"{ ping }"}"#))?.variables == .null)
    }
}
