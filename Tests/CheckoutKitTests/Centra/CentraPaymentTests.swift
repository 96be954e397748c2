import Foundation
import LoopbackHTTP
import Testing

@testable import CheckoutKit

/// The final payment's outcome when Centra's answer does not settle it, against a scripted GraphQL server: a field
/// error in the executed mutation is not a failure (the resolver may have placed the order), so the latest order is
/// read back; a document Centra refused before executing it (no `data`) is a plain failure.
@Suite struct CentraPaymentOutcomeTests {
    /// Answers each request by its operationName and how many times that operation was asked for (1-based).
    static func server(_ answer: @escaping @Sendable (_ operation: String, _ attempt: Int) -> JSON) throws -> TestServer
    {
        let counts = Box<[String: Int]>([:])
        return try TestServer { request, _ in
            let operation = (try? JSON.parse(request.body))?["operationName"]?.stringValue ?? "?"
            let attempt = counts.withLock { c -> Int in
                c[operation, default: 0] += 1
                return c[operation]!
            }
            return .json(200, answer(operation, attempt))
        }
    }

    static let order: JSON = [
        "id": "ord_9", "number": 9, "status": "PENDING", "lines": [], "totals": [],
        "shippingMethod": ["id": 1, "name": "Standard"], "paymentMethod": ["name": "Adyen"],
    ]

    func pay(_ server: TestServer) async throws -> (FlowResult, EventLog, StateStore) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("centra-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let state = StateStore(path: directory + "/state.json")
        let configuration = Configuration(
            environment: "sandbox", kind: .sandbox,
            values: ["CENTRA_API_URL": server.url("/graphql"), "CENTRA_TOKEN": "plugin-token-for-tests"])
        let registry = OperationRegistry(CentraOperations.all)
        let events = EventLog()
        let runner = FlowRunner(
            client: CurlTransport(options: .direct), registry: registry,
            settings: RunSettings(
                environment: "sandbox", requestTimeout: 5,
                retry: RetryPolicy(attempts: 3, interval: 0.05, backoff: 1, jitter: 0)),
            configuration: configuration, state: state, redactor: Redactor(secrets: configuration.secretValues),
            services: .init(), events: events.sink)
        let flow = try FlowFile.decode(
            Data(
                #"""
                {"name": "pay", "steps": [{"name": "pay", "use": "centra.paymentInstructions",
                  "with": {"shippingAddress": {"country": "SE"}, "paymentFields": {"paymentMethod": {"type": "applepay", "applePayToken": "dG9rZW4tYnl0ZXMtZm9yLXRlc3Rz"}}}}]}
                """#.utf8), source: "test", registry: registry)
        return (await runner.run(flow), events, state)
    }

    @Test func aFieldErrorInTheExecutedMutationIsReadBackFromTheLatestOrder() async throws {
        let server = try Self.server { operation, attempt in
            switch (operation, attempt) {
            case ("CentraBeforePayment", 1): ["data": ["order": nil], "extensions": ["token": "session-1"]]
            case ("CentraPaymentInstructions", _):
                [
                    "errors": [["message": "Internal server error", "path": ["paymentInstructions", "selection"]]],
                    "data": nil,
                    "extensions": ["token": "session-2"],
                ]
            default: ["data": ["order": Self.order], "extensions": ["token": "session-3"]]
            }
        }
        let (result, events, state) = try await pay(server)
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.steps.first?.output?["order"]?["id"] == "ord_9")
        let notes = events.all.compactMap { if case .note(_, let m) = $0 { m } else { nil } }
        #expect(notes.contains { $0.contains("order ord_9 was placed: the payment went through") }, "\(notes)")
        #expect(
            server.count("/graphql") == 3, "the order before, the payment once, the read-back: never a second payment")
        #expect(try state.read()["centra"]?["paymentStarted"] == nil, "the outcome is known")
    }

    @Test func whenTheReadBackShowsNoNewOrderTheOutcomeIsUnknown() async throws {
        let server = try Self.server { operation, _ in
            operation == "CentraPaymentInstructions"
                ? ["errors": [["message": "Internal server error", "path": ["paymentInstructions"]]], "data": nil]
                : ["data": ["order": nil]]
        }
        let (result, _, state) = try await pay(server)
        #expect(result.failure?.code == .outcomeUnknown, "\(String(describing: result.failure))")
        #expect(result.failure?.message.contains("the payment may have gone through") == true)
        #expect(
            try state.read()["centra"]?["paymentStarted"] == true, "the cart stays for the payment that may complete")
    }

    /// A 5xx is no answer whatever its body: even a GraphQL error document without `data` is read back, not taken as
    /// "the operation did not run" (a gateway may have failed after the store placed the order).
    @Test(arguments: [500, 502, 503])
    func aServerErrorWithAGraphQLBodyIsReadBack(status: Int) async throws {
        let reads = Box<Int>(0)
        let server = try TestServer { request, _ in
            if (try? JSON.parse(request.body))?["operationName"]?.stringValue == "CentraPaymentInstructions" {
                return .json(status, ["errors": [["message": "upstream unavailable"]]])
            }
            let n = reads.withLock { n -> Int in
                n += 1
                return n
            }
            return .json(200, n == 1 ? ["data": ["order": nil]] : ["data": ["order": Self.order]])
        }
        let (result, events, _) = try await pay(server)
        #expect(result.passed, "\(String(describing: result.failure))")
        let notes = events.all.compactMap { if case .note(_, let m) = $0 { m } else { nil } }
        #expect(notes.contains { $0.contains("got no answer that settles it (HTTP \(status))") }, "\(notes)")
        #expect(server.count("/graphql") == 3, "the order before, the payment once, the read-back")
    }

    @Test func aDocumentRefusedBeforeExecutionIsAPlainFailure() async throws {
        let server = try Self.server { operation, _ in
            operation == "CentraPaymentInstructions"
                ? ["errors": [["message": "Field \"x\" is not defined by type \"PaymentInstructionsInput\"."]]]
                : ["data": ["order": nil]]
        }
        let (result, _, state) = try await pay(server)
        #expect(result.failure?.code == .failure, "\(String(describing: result.failure))")
        #expect(server.count("/graphql") == 2, "no read-back: nothing ran")
        #expect(try state.read()["centra"]?["paymentStarted"] == nil)
    }
}

/// The rule that decides whether Centra placed an order for a payment whose answer was lost: the session's latest
/// order is this payment's only when it is not the order that was already the latest before.
@Suite struct CentraOrderReadBackRuleTests {
    @Test func onlyANewLatestOrderIsThisPayments() {
        #expect(CentraPayment.newOrder(["id": "o-2"], prior: "o-1") == "o-2")
        #expect(
            CentraPayment.newOrder(["id": "o-1"], prior: "o-1") == nil, "the order before the payment is not its order")
        #expect(CentraPayment.newOrder(["id": "o-1"], prior: nil) == "o-1", "a session's first order")
        #expect(CentraPayment.newOrder(.null, prior: nil) == nil)
        #expect(CentraPayment.newOrder(["number": 7], prior: nil) == nil, "an order without an id tells nothing")
    }
}
