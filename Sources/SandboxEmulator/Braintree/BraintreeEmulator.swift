import Crypto
import Foundation
import GraphQL
import LoopbackHTTP

/// Braintree's Apple Pay path as docs/protocols/braintree.md describes it: the client API (configuration, tokenization
/// into single-use nonces) and the GraphQL API a merchant server calls (Basic auth, `Braintree-Version`), served by the
/// GraphQL engine from Braintree's published schema: every document is parsed, validated against the real SDL and
/// answered with exactly the selected fields, always HTTP 200 with failures in `errors[]` (bad API keys included).
/// Choices the documents leave open are in `BraintreeRules`.
public final class BraintreeEmulator: EmulatedProvider {
    public static let name = "braintree"

    let store = BraintreeStore()
    private let ledger: Ledger
    private let verifier: ApplePayTokenVerifier

    init(ledger: Ledger, verifier: ApplePayTokenVerifier = .emulator) {
        self.ledger = ledger
        self.verifier = verifier
    }

    /// Creates the emulator and registers its routes under `/braintree` and `/_sandbox/braintree`.
    public static func install(_ context: EmulatorContext) -> BraintreeEmulator {
        let (router, ledger, baseURL) = (context.router, context.ledger, context.baseURL)
        let braintree = BraintreeEmulator(ledger: ledger)
        router.register(
            [Route("POST", BraintreeRules.graphQLPath) { braintree.handleGraphQL($0, baseURL: baseURL()) }]
                + BraintreeClientAPI(store: braintree.store, verifier: braintree.verifier, baseURL: baseURL).routes()
                + BraintreeSandbox(store: braintree.store).routes())
        return braintree
    }

    /// The schema and its resolvers, loaded on the first Braintree GraphQL request (never by `--version` or another
    /// provider's run: the SDL is 400 kB).
    static let service: Result<GraphQLService, GraphQLError> = {
        guard let sdl = PublishedSchema.braintree.sdl else {
            return .failure(GraphQLError("the emulator's copy of Braintree's schema is missing from its resources"))
        }
        do throws(GraphQLError) {
            let schema = try Schema(sdl: sdl)
            return .success(GraphQLService(schema: schema, resolvers: BraintreeResolvers.make(schema: schema)))
        } catch { return .failure(error) }
    }()

    /// The fake nonces, the magic-amount scenarios and the sandbox control, for `sandbox serve --help`.
    public static let scenariosHelp = BraintreeRules.scenariosHelp

    // MARK: GraphQL

    func handleGraphQL(_ request: EmulatorRequest, baseURL: String) -> HTTPReply {
        // Wrong or missing API keys too are HTTP 200, the failure in `errors[]` (errorClass AUTHENTICATION), as every
        // answer of Braintree's GraphQL API is (docs/protocols/braintree.md, "Errors").
        guard Self.authenticated(request.headers["Authorization"]) else {
            return Self.reply(
                GraphQLService.errorResponse([
                    BraintreeFailure("Authentication failed", errorClass: "AUTHENTICATION").graphQLError
                ]))
        }
        guard let version = request.headers["Braintree-Version"] else {
            return Self.reply(GraphQLService.errorResponse([GraphQLError("Braintree-Version header required")]))
        }
        guard Self.isDate(version) else {
            return Self.reply(
                GraphQLService.errorResponse([GraphQLError("Braintree-Version header must be a date (YYYY-MM-DD)")]))
        }
        let service: GraphQLService
        switch Self.service {
        case .success(let s): service = s
        case .failure(let e):
            return Self.reply(
                GraphQLService.errorResponse([BraintreeFailure("\(e)", errorClass: "INTERNAL").graphQLError]))
        }
        guard let body = GraphQLRequest(request) else {
            return Self.reply(GraphQLService.errorResponse([GraphQLError("Must provide query string.")]))
        }
        let call = BraintreeCall(store: store, ledger: ledger, baseURL: baseURL)
        return Self.reply(
            service.execute(
                query: body.query, operationName: body.operationName, variables: body.variables, context: call))
    }

    /// `Basic base64(publicKey:privateKey)` with the emulator's API keys.
    static func authenticated(_ header: String?) -> Bool {
        guard let header, header.count > 6, header.prefix(6).lowercased() == "basic ",
            let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces))
        else { return false }
        return data == Data("\(TestCredentials.braintreePublicKey):\(TestCredentials.braintreePrivateKey)".utf8)
    }

    /// YYYY-MM-DD with a real month and day number.
    static func isDate(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } }),
            let month = Int(parts[1]), let day = Int(parts[2])
        else { return false }
        return (1...12).contains(month) && (1...31).contains(day)
    }

    /// Braintree's envelope around the engine's answer: HTTP 200, `data` always there (null when the request could
    /// not run), every error with an `errorClass`, and `extensions.requestId`.
    static func reply(_ result: GraphQLValue) -> HTTPReply {
        var members = result.objectValue ?? []
        let executed = members.contains { $0.0 == "data" }
        // A request error (syntax, validation, variables) is the client's: VALIDATION. One raised while executing
        // that names no class is the emulator's own: INTERNAL.
        members = members.map { key, value in
            key == "errors"
                ? (key, .list((value.listValue ?? []).map { classified($0, as: executed ? "INTERNAL" : "VALIDATION") }))
                : (key, value)
        }
        // DECISION: `data` is null, not absent, when nothing ran: the contract's envelope always has it.
        if !executed { members.append(("data", .null)) }
        members.append(("extensions", .object([("requestId", .string(SecureRandom.uuid()))])))
        return .respond(.json(200, GraphQLValue.object(members).jsonData))
    }

    private static func classified(_ error: GraphQLValue, as errorClass: String) -> GraphQLValue {
        guard var members = error.objectValue else { return error }
        if let index = members.firstIndex(where: { $0.0 == "extensions" }) {
            var extensions = members[index].1.objectValue ?? []
            if !extensions.contains(where: { $0.0 == "errorClass" }) {
                extensions.insert(("errorClass", .string(errorClass)), at: 0)
            }
            members[index].1 = .object(extensions)
        } else {
            members.append(("extensions", .object([("errorClass", .string(errorClass))])))
        }
        return .object(members)
    }
}
