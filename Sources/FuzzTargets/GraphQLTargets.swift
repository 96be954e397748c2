import GraphQL
import SandboxEmulator

/// The GraphQL engine: documents checked and run against the two published schemas the emulator serves, and schema
/// definitions (SDL) built.
enum GraphQLTargets {
    /// Each published schema with no resolvers: what runs is the engine's own work (validation, variable coercion,
    /// execution with default resolution, introspection), not the emulator's business rules.
    static let services: [GraphQLService] = PublishedSchema.allCases.map { published in
        guard let sdl = published.sdl else { preconditionFailure("the bundled \(published) schema is missing") }
        do throws(GraphQLError) { return GraphQLService(schema: try Schema(sdl: sdl), resolvers: Resolvers()) } catch {
            preconditionFailure("the bundled \(published) schema does not build: \(error)")
        }
    }

    static func document(_ bytes: [UInt8]) {
        let query = String(decoding: bytes, as: UTF8.self)
        for service in services {
            let problems = service.problems(in: query)
            for problem in problems { precondition(!problem.message.isEmpty, "a GraphQL error with no message") }
            // A document that validates runs: an answer, never a crash (a missing operation name or a variable
            // without a value is an error in the answer).
            if problems.isEmpty { _ = service.execute(query: query) }
        }
    }

    static func schema(_ bytes: [UInt8]) {
        do throws(GraphQLError) {
            _ = try Schema(sdl: String(decoding: bytes, as: UTF8.self))
        } catch {
            precondition(!error.message.isEmpty, "an SDL error with no message")
        }
    }
}
