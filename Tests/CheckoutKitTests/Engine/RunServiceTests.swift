import Foundation
import Synchronization
import Testing

@testable import CheckoutKit

/// Providers' run services: started only for a flow that uses one of their operations, found by type, stopped in
/// order (the target removed before the listener closes), and on a failure the ones already started are stopped.
@Suite struct RunServiceTests {
    /// A host that records what was registered and removed; `refuse` makes registering fail.
    final class Host: RunServiceHost {
        let configuration: Configuration
        let refuse: Bool
        let log = Mutex<[String]>([])

        init(values: [String: String], refuse: Bool = false) {
            configuration = Configuration(environment: "local", kind: .local, values: values)
            self.refuse = refuse
        }

        func registerWebhookTarget(
            url: String, provider: String, emulatorBase: String
        ) async throws(Diagnostic)
            -> (@Sendable () async -> Void)?
        {
            if refuse { throw .unavailable("no emulator", hint: "start one") }
            log.withLock { $0.append("register \(provider) \(emulatorBase)") }
            return { [self] in log.withLock { $0.append("remove \(provider)") } }
        }
    }

    final class Probe: RunService {
        let log = Mutex<[String]>([])
        func stop() async { log.withLock { $0.append("stopped") } }
    }

    static func flow(_ operations: [String]) -> Flow {
        Flow(
            name: "f",
            steps: operations.enumerated().map {
                Step(name: "s\($0.offset)", action: .operation(name: $0.element, arguments: [:]))
            })
    }

    static let secret = ["BAHN_WEBHOOK_SECRET": "whsec_test"]

    @Test func onlyAFlowThatAwaitsWebhooksGetsBahnsListener() async throws {
        let host = Host(values: Self.secret)
        let none = try await RunServiceRecipe.startAll(
            for: Self.flow(["bahn.createIntent", "bahn.confirm"]), host: host)
        #expect(none.isEmpty)
        #expect(host.log.withLock { $0 }.isEmpty)

        let started = try await RunServiceRecipe.startAll(
            for: Self.flow(["bahn.createIntent", "bahn.awaitWebhook"]), host: host)
        let services = RunServices(started: started)
        let listener = try #require(services.service(BahnWebhookService.self))
        #expect(listener.url?.hasPrefix("http://127.0.0.1:") == true)
        #expect(host.log.withLock { $0 } == ["register bahn BAHN_API_URL"])
        await services.stop()
        #expect(host.log.withLock { $0 } == ["register bahn BAHN_API_URL", "remove bahn"])
    }

    /// The runs of one invocation share one inbox and one webhook target (the emulator gives every target every event):
    /// opened once however many start at once, removed when the last ends; another invocation's runs have their own.
    @Test func theRunsOfOneHostShareOneListener() async throws {
        let host = Host(values: Self.secret)
        let other = Host(values: Self.secret)
        let flow = Self.flow(["bahn.awaitWebhook"])
        async let a = RunServiceRecipe.startAll(for: flow, host: host)
        async let b = RunServiceRecipe.startAll(for: flow, host: host)
        let first = RunServices(started: try await a)
        let second = RunServices(started: try await b)
        let elsewhere = RunServices(started: try await RunServiceRecipe.startAll(for: flow, host: other))
        let url = try #require(first.service(BahnWebhookService.self)?.url)
        #expect(second.service(BahnWebhookService.self)?.url == url)
        #expect(elsewhere.service(BahnWebhookService.self)?.url != url)
        #expect(host.log.withLock { $0 } == ["register bahn BAHN_API_URL"], "registered once for both runs")
        await first.stop()
        #expect(host.log.withLock { $0 } == ["register bahn BAHN_API_URL"], "the other run still listens")
        #expect(try await post(to: url) == 400, "still answering (an unsigned delivery is refused)")
        await second.stop()
        #expect(host.log.withLock { $0 } == ["register bahn BAHN_API_URL", "remove bahn"])
        let afterLast = try? await post(to: url)
        #expect(afterLast == nil, "closed with the last run")
        await elsewhere.stop()
        #expect(other.log.withLock { $0 } == ["register bahn BAHN_API_URL", "remove bahn"])
    }

    /// The status an unsigned delivery to `url` is answered with.
    private func post(to url: String) async throws -> Int {
        try await CurlTransport(options: .direct).send(
            HTTPClientRequest(method: "POST", url: url, headers: [:], body: Data("{}".utf8), timeout: 2)
        ).status
    }

    @Test func withoutASecretThereIsNoListener() async throws {
        let started = try await RunServiceRecipe.startAll(
            for: Self.flow(["bahn.awaitWebhook"]), host: Host(values: [:]))
        #expect(started.isEmpty)
    }

    @Test func aListenerThatCannotRegisterIsClosedAndTheRunStops() async throws {
        // A free port, given to the listener: once it is closed again, the port can be bound once more.
        let free = try BahnWebhookInbox(secret: "x")
        let port = free.port
        free.shutdown()
        let host = Host(values: Self.secret.merging(["BAHN_WEBHOOK_PORT": String(port)]) { $1 }, refuse: true)
        await #expect(throws: Diagnostic.self) {
            _ = try await RunServiceRecipe.startAll(for: Self.flow(["bahn.awaitWebhook"]), host: host)
        }
        let again = try BahnWebhookInbox(secret: "x", port: port)
        again.shutdown()
    }

    @Test func aBadPortIsAConfigurationError() async throws {
        let host = Host(values: Self.secret.merging(["BAHN_WEBHOOK_PORT": "http"]) { $1 })
        do {
            _ = try await RunServiceRecipe.startAll(for: Self.flow(["bahn.awaitWebhook"]), host: host)
            Issue.record("a port that is not a number was taken")
        } catch {
            #expect(error.message.contains("BAHN_WEBHOOK_PORT is 'http', not a port number"))
        }
    }

    @Test func servicesAreFoundByTheirType() {
        let probe = Probe()
        let services = RunServices(started: [probe])
        #expect(services.service(Probe.self) === probe)
        #expect(services.service(BahnWebhookService.self) == nil)
    }

    @Test func aFailedStartStopsTheServicesAlreadyStarted() async throws {
        let first = Probe()
        let provider = Provider(
            name: "test", variables: [], operations: [], flows: [],
            services: [
                RunServiceRecipe(operations: ["test.a"], replaying: { _ in nil }) { _ in first },
                RunServiceRecipe(operations: ["test.a"], replaying: { _ in nil }) {
                    (_: any RunServiceHost) async throws(Diagnostic) -> (any RunService)? in
                    throw .unavailable("cannot start", hint: "none")
                },
            ])
        await #expect(throws: Diagnostic.self) {
            _ = try await RunServiceRecipe.startAll(
                for: Self.flow(["test.a"]), providers: [provider], host: Host(values: [:]))
        }
        #expect(first.log.withLock { $0 } == ["stopped"])
    }
}
