import Foundation
import SandboxEmulator
import Synchronization
import TestSupport
import Testing

@testable import CheckoutKit

/// A fifth provider, Tally, sketched in this folder alone (`TallyEmulator`, `Tally`): it joins each list the providers
/// are read from with one line — here `Providers.all + [Tally.provider]` and `Emulator.providers +
/// [TallyEmulator.self]` stand for the line a real one adds — and its money call, read-back, emulator routes and
/// built-in flow then work as the other four's do, under the faults of the providers' fault matrix (`MoneyFaults`).
@Suite struct FifthProviderTests {
    /// The lists as a fifth provider would make them: one line each.
    static let providers = Providers.all + [Tally.provider]
    static let emulated: [any EmulatedProvider.Type] = Emulator.providers + [TallyEmulator.self]
    /// The operation registry the command line builds, from the same list.
    static let registry = OperationRegistry(providers.flatMap(\.operations))

    /// One test's world: an emulator with the five providers installed, a state file, the driver configured as
    /// `--env local` configures it.
    final class Rig: Sendable {
        let emulator: Emulator
        let directory: String
        let state: StateStore

        init(faults: String = "") throws {
            emulator = try Emulator(faults: try FaultSpec(parsing: faults), providers: FifthProviderTests.emulated)
            emulator.start()
            directory = try temporaryDirectory()
            state = StateStore(path: directory + "/state.json")
        }

        deinit {
            let emulator = self.emulator
            Thread.detachNewThread { emulator.shutdown() }
            try? FileManager.default.removeItem(atPath: directory)
        }

        var configuration: Configuration {
            let values = FifthProviderTests.emulated.reduce(into: ["EMULATOR_URL": emulator.baseURL]) { all, provider in
                all.merge(provider.localConfiguration(baseURL: emulator.baseURL)) { $1 }
            }
            return Configuration(environment: "local", kind: .sandbox, values: values)
        }

        /// Runs the built-in flow `tally-charge` in a run scope of the state file of its own, and finishes the run.
        func charge(
            _ amount: String = "10.00", key: String, run: String, requestTimeout: Double = 5
        ) async throws -> FlowResult {
            let flow = try BuiltinFlows.load(Tally.provider.flows[0], registry: FifthProviderTests.registry)
            let scope = state.ownRun(run)
            let runner = FlowRunner(
                client: CurlTransport(options: .direct), registry: FifthProviderTests.registry,
                settings: RunSettings(
                    environment: "local", requestTimeout: requestTimeout,
                    retry: RetryPolicy(attempts: 3, interval: 0.05, backoff: 1, jitter: 0)),
                configuration: configuration, state: scope, redactor: Redactor(secrets: [TallyEmulator.apiKey]),
                events: { _ in })
            let result = await runner.run(flow, vars: ["amount": .string(amount), "key": .string(key)])
            try scope.finishRun()
            return result
        }

        /// The charges the emulator's ledger holds.
        var charges: Int { emulator.ledger.entries().filter { $0.provider == TallyEmulator.name }.count }

        var openOutcomes: [OpenOutcome] { (try? OpenOutcomes.read(state)) ?? [] }
    }

    @Test func itJoinsEachListWithOneLine() throws {
        // The Kit's list and the emulator's name the same providers, once each (as `ProviderListTests` checks of the
        // four).
        #expect(Self.providers.map(\.name) == Self.emulated.map { $0.name })
        #expect(Set(Self.providers.map(\.name)).count == Self.providers.count)
        // Its operation is registered, its flow reads against the registry, its variables are declared.
        #expect(Self.registry["tally.charge"] != nil)
        let flow = try BuiltinFlows.load(Tally.provider.flows[0], registry: Self.registry)
        #expect(flow.name == "tally-charge" && flow.steps.map(\.name) == ["charge"])
        #expect(Tally.provider.variables.map(\.name) == ["TALLY_API_URL", "TALLY_API_KEY"])
        // The emulator installs it, and `--env local` points the driver at it.
        let rig = try Rig()
        #expect(rig.configuration.value("TALLY_API_URL") == rig.emulator.baseURL + "/tally")
        #expect(rig.configuration.value("BAHN_API_URL") != nil, "the four others are still there")
    }

    @Test func itsFlowChargesOnceUnderAKey() async throws {
        let rig = try Rig()
        let result = try await rig.charge(key: "k-1", run: "run-1")
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(rig.charges == 1)
        // The same key again is a replay: Tally answers with the first charge and moves nothing.
        let again = try await rig.charge(key: "k-1", run: "run-2")
        #expect(again.passed && rig.charges == 1, "\(String(describing: again.failure))")
        // A decline is a clear refusal: a failure, nothing charged, nothing left open.
        let declined = try await rig.charge("0.13", key: "k-2", run: "run-3")
        #expect(declined.failure?.code == .failure && rig.charges == 1, "\(String(describing: declined.failure))")
        #expect(rig.openOutcomes.isEmpty)
    }

    /// The providers' fault matrix, for the fifth: whatever the fault, the outcome reported agrees with the ledger, an
    /// unknown one is left open in the state file, and settling it as the message says never charges twice.
    @Test(arguments: MoneyFaults.faults, MoneyFaults.Mode.allCases)
    func everyFaultOnItsChargeIsToldTruthfully(fault: String, mode: MoneyFaults.Mode) async throws {
        var rules = ["POST /tally/charges => \(fault) \(mode == .first ? "@1" : "@1-200")"]
        if mode == .everyReadDown { rules.append("GET /tally/charges/* => status=503 @*") }
        let rig = try Rig(faults: rules.joined(separator: "; "))
        let label = "\(fault) × \(mode.rawValue)"
        let result = try await rig.charge(
            key: "k-\(mode.rawValue)", run: "run", requestTimeout: fault.hasPrefix("latency") ? 1 : 5)
        if fault == "drop" {
            // A charge made and its answer lost: the retry under the same key gets the first answer; with every
            // answer and every read lost, nothing can tell, so it is left open.
            #expect(
                result.failure?.code == (mode == .everyReadDown ? .outcomeUnknown : nil),
                "\(label): \(String(describing: result.failure))")
        }
        switch result.failure?.code {
        case nil:
            #expect(rig.charges == 1, "\(label): passed, and the ledger holds \(rig.charges)")
            #expect(rig.openOutcomes.isEmpty, "\(label)")
        case .outcomeUnknown?:
            #expect(rig.charges <= 1, "\(label)")
            let open = rig.openOutcomes
            #expect(open.map(\.provider) == ["tally"], "\(label): left open in the state file: \(open)")
            #expect(
                result.failure?.hint?.contains("\"key\": \"k-\(mode.rawValue)\"") == true,
                "\(label): the settle way names the key")
            // Settled as the message says, on the same server (its faults still there, as the command matrix's
            // settle commands meet them): the same key replays, and never charges twice.
            let settled = try await rig.charge(key: "k-\(mode.rawValue)", run: "settle")
            #expect(rig.charges <= 1, "\(label): the settle left \(rig.charges) charges")
            if settled.passed { #expect(rig.charges == 1, "\(label): settled, and the ledger holds none") }
        default:
            #expect(rig.charges == 0, "\(label): \(String(describing: result.failure)) with a charge in the ledger")
            #expect(rig.openOutcomes.isEmpty, "\(label)")
        }
    }
}
