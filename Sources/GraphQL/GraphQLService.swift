import Foundation

/// A GraphQL server's core: a schema, its resolvers, and a cache of parsed and validated documents by their text (a
/// client sends the same few documents again and again). `execute` answers a request the way GraphQL servers do:
/// `{"data": …}` with `"errors"` beside it for field errors, or only `"errors"` when the request could not run.
public final class GraphQLService: @unchecked Sendable {
    public let schema: Schema
    private let resolvers: Resolvers
    // @unchecked: `cache` is only touched under `lock` — a pthread lock, not a Mutex: it is taken on every request
    // by as many threads as there are connections, and a contended Mutex sleeps in the kernel.
    private let lock = NSLock()
    private var cache: [String: Result<Prepared, Failure>] = [:]
    private let cacheLimit = 512

    struct Prepared: Sendable {
        var document: Document
        var fragments: [String: FragmentDefinition]
        var plans: FieldPlans?
    }

    struct Failure: Error, Sendable {
        var errors: [GraphQLError]
    }

    public init(schema: Schema, resolvers: Resolvers) {
        self.schema = schema
        self.resolvers = resolvers
    }

    /// What is wrong with `query` against the schema (syntax or validation); empty when it may run.
    public func problems(in query: String) -> [GraphQLError] {
        switch prepared(query) {
        case .success: []
        case .failure(let f): f.errors
        }
    }

    private func prepared(_ query: String) -> Result<Prepared, Failure> {
        if let hit = lock.withLock({ cache[query] }) { return hit }
        let result: Result<Prepared, Failure>
        do {
            let document = try Parser.parse(query)
            let errors = Validator.validate(document, against: schema)
            if errors.isEmpty {
                // `@skip`/`@include` may take a variable, and plans must not depend on a request: such a document
                // (or one merely mentioning either, in a string) collects its fields on every request.
                let conditional = query.contains("@skip") || query.contains("@include")
                result = .success(
                    Prepared(
                        document: document,
                        fragments: Dictionary(
                            document.fragments.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a }),
                        plans: conditional ? nil : FieldPlans()))
            } else {
                result = .failure(Failure(errors: errors))
            }
        } catch {
            result = .failure(Failure(errors: [error]))
        }
        // Bounded: a client inventing documents, or sending huge ones, cannot grow the cache.
        if query.utf8.count <= 16 * 1024 {
            lock.withLock {
                if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
                cache[query] = result
            }
        }
        return result
    }

    /// Runs one request. `variables` is the request's `variables` member as received (null or absent: none).
    public func execute(
        query: String, operationName: String? = nil, variables: GraphQLValue? = nil,
        root: Any? = nil, context: Any? = nil
    ) -> GraphQLValue {
        let prepared: Prepared
        switch self.prepared(query) {
        case .success(let p): prepared = p
        case .failure(let f): return Self.errorResponse(f.errors)
        }
        let operation: OperationDefinition
        switch Self.operation(in: prepared.document, named: operationName) {
        case .success(let o): operation = o
        case .failure(let e): return Self.errorResponse([e])
        }
        let coerced: [String: GraphQLValue]
        switch coerceVariables(operation, variables ?? .null) {
        case .success(let v): coerced = v
        case .failure(let f): return Self.errorResponse(f.errors)
        }
        var executor = Executor(
            schema: schema, resolvers: resolvers, fragments: prepared.fragments, plans: prepared.plans,
            variables: coerced, context: context)
        let data = executor.run(operation, root: root)
        var members: [(String, GraphQLValue)] = []
        if !executor.errors.isEmpty { members.append(("errors", .list(executor.errors.map(\.value)))) }
        members.append(("data", data))
        return .object(members)
    }

    public static func errorResponse(_ errors: [GraphQLError]) -> GraphQLValue {
        .object([("errors", .list(errors.map(\.value)))])
    }

    /// §6.1 GetOperation: the named operation, or the only one.
    static func operation(in document: Document, named name: String?) -> Result<OperationDefinition, GraphQLError> {
        let operations = document.operations
        guard let name else {
            guard operations.count == 1 else {
                return .failure(GraphQLError("Must provide operation name if query contains multiple operations."))
            }
            return .success(operations[0])
        }
        guard let match = operations.first(where: { $0.name == name }) else {
            return .failure(GraphQLError("Unknown operation named \"\(name)\"."))
        }
        return .success(match)
    }

    /// §6.1.2 CoerceVariableValues: each defined variable from the request (or its default), checked against its type.
    func coerceVariables(
        _ operation: OperationDefinition, _ given: GraphQLValue
    ) -> Result<[String: GraphQLValue], Failure> {
        guard given.isNull || given.objectValue != nil else {
            return .failure(
                Failure(errors: [GraphQLError("Variables must be provided as an object, not \(given.kindName).")]))
        }
        var out: [String: GraphQLValue] = [:]
        var errors: [GraphQLError] = []
        for definition in operation.variables {
            let provided = given[definition.name]
            if provided == nil, let d = definition.defaultValue {
                do {
                    out[definition.name] = try InputCoercion.literal(d, to: definition.type, variables: [:], in: schema)
                } catch {
                    errors.append(
                        GraphQLError(
                            "Variable \"$\(definition.name)\" has an invalid default value: \(error.message)",
                            locations: [definition.location]))
                }
                continue
            }
            guard let provided else {
                if definition.type.isNonNull {
                    errors.append(
                        GraphQLError(
                            "Variable \"$\(definition.name)\" of required type \"\(definition.type)\" was not provided.",
                            locations: [definition.location]))
                }
                continue
            }
            do { out[definition.name] = try InputCoercion.coerce(provided, to: definition.type, in: schema) } catch {
                let at = error.path.isEmpty ? "" : " at \"\(definition.name).\(error.path.joined(separator: "."))\""
                errors.append(
                    GraphQLError(
                        "Variable \"$\(definition.name)\" got invalid value \(provided.jsonText)\(at); \(error.message)",
                        locations: [definition.location]))
            }
        }
        return errors.isEmpty ? .success(out) : .failure(Failure(errors: errors))
    }
}
