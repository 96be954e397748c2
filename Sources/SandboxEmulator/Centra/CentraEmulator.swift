import Foundation
import GraphQL
import LoopbackHTTP

/// Centra's Storefront API for the express checkout (docs/protocols/centra.md), with the Adyen side behind it, served
/// by the GraphQL engine from Centra's published schema: every document is parsed, validated against the real SDL and
/// answered with exactly the selected fields. Sessions follow the plugin: the first call with the plugin token, the
/// token from every response's `extensions.token` after that, `Unauthorized` for a bad or expired one.
public final class CentraEmulator: EmulatedProvider {
    public static let name = "centra"

    let store = CentraStore()
    private let ledger: Ledger
    private let verifier: ApplePayTokenVerifier

    init(ledger: Ledger, verifier: ApplePayTokenVerifier = .emulator) {
        self.ledger = ledger
        self.verifier = verifier
    }

    public static func install(_ context: EmulatorContext) -> CentraEmulator {
        let (router, ledger, baseURL) = (context.router, context.ledger, context.baseURL)
        let centra = CentraEmulator(ledger: ledger)
        router.register(
            [Route("POST", CentraRules.endpointPath) { centra.handle($0, baseURL: baseURL()) }]
                + CentraChallenge.routes(store: centra.store))
        return centra
    }

    /// The schema and its resolvers, loaded on the first Centra request (never by `--version` or a Bahn run).
    static let service: Result<GraphQLService, GraphQLError> = {
        guard let sdl = PublishedSchema.centra.sdl else {
            return .failure(GraphQLError("the emulator's copy of Centra's schema is missing from its resources"))
        }
        do throws(GraphQLError) {
            return .success(GraphQLService(schema: try Schema(sdl: sdl), resolvers: CentraResolvers.make()))
        } catch { return .failure(error) }
    }()

    public static let scenariosHelp: String = {
        func describe(_ scenario: CentraRules.PaymentScenario) -> String {
            switch scenario {
            case .success: "paid at once (SuccessPaymentAction)"
            case .redirect: "3DS redirect (RedirectPaymentAction to a challenge page that returns to paymentReturnPage)"
            case .native3DS: "native 3DS2 (JavascriptPaymentAction; POST the acsURL in its token for the result)"
            case .form: "3DS form (FormPaymentAction: an HTML form posting MD and PaRes to paymentReturnPage)"
            case .declined: "refused (a userError, no order)"
            }
        }
        var lines = [
            "Centra Storefront API at POST \(CentraRules.endpointPath) (test plugin token and shared secret), items by id:"
        ]
        for p in CentraRules.products {
            lines.append(
                "  \(p.item)  \(p.name), \(p.price / 100).\(String(format: "%02d", p.price % 100)) \(CentraRules.currency.code): \(describe(p.scenario))"
            )
        }
        lines.append(
            "A new session's selection holds one \(CentraRules.startingItem); a selection with a 3DS or declined item takes that path."
        )
        lines.append(
            "PUT /_sandbox/centra/store {\"ingrid\": true} turns the Ingrid flag on; POST /_sandbox/centra/expire-sessions ends every session."
        )
        return lines.joined(separator: "\n")
    }()

    func handle(_ request: EmulatorRequest, baseURL: String) -> HTTPReply {
        let service: GraphQLService
        switch Self.service {
        case .success(let s): service = s
        case .failure(let e): return Self.reply(GraphQLService.errorResponse([e]), status: 500)
        }
        guard let body = GraphQLRequest(request) else {
            return Self.reply(GraphQLService.errorResponse([GraphQLError("Must provide query string.")]), status: 400)
        }
        let bearer = request.headers["Authorization"].flatMap { header -> String? in
            header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : nil
        }
        guard case .session(let sessionID) = store.authorize(bearer) else {
            return Self.reply(
                .object([("errors", .list([GraphQLError("Unauthorized").value])), ("data", .null)]), status: 200)
        }
        let call = CentraCall(
            store: store, sessionID: sessionID,
            sharedSecretValid: request.headers[CentraRules.sharedSecretHeader] == CentraRules.sharedSecret,
            baseURL: baseURL, ledger: ledger, verifier: verifier)
        let result = service.execute(
            query: body.query, operationName: body.operationName, variables: body.variables, context: call)
        var members = result.objectValue ?? []
        // A resolver that found the session gone answers like an expired token.
        if let errors = result["errors"]?.listValue,
            errors.contains(where: { $0["message"]?.stringValue == "Unauthorized" })
        {
            return Self.reply(
                .object([("errors", .list([GraphQLError("Unauthorized").value])), ("data", .null)]), status: 200)
        }
        let token = store.rotateToken(sessionID) ?? ""
        members.append(
            ("extensions", .object([("token", .string(token)), ("traceId", .string(CentraRules.newID("trace_")))])))
        return Self.reply(.object(members), status: 200)
    }

    static func reply(_ value: GraphQLValue, status: Int) -> HTTPReply {
        .respond(.json(status, value.jsonData))
    }
}
