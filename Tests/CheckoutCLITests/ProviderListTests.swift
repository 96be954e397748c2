import CheckoutKit
import Foundation
import SandboxEmulator
import Testing

@testable import CheckoutCLI

/// One list of providers on each side, and the same providers in both: a provider the Kit knows and the emulator does
/// not (or the other way round) fails here, as does one whose `--env local` leaves a variable it needs unset.
@Suite struct ProviderListTests {
    @Test func theEmulatorEmulatesEveryProviderTheKitKnows() {
        #expect(Emulator.providers.map { $0.name } == Providers.all.map(\.name))
    }

    /// Every provider has its command group on the command line, in the same order.
    @Test func everyProviderHasItsCommands() {
        #expect(CheckoutDriver.providerCommands.map(\.provider.name) == Providers.all.map(\.name))
        let names = CheckoutDriver.root.subcommands.map(\.name)
        for group in CheckoutDriver.providerCommands { #expect(names.contains(group.commands.name)) }
    }

    /// `--env local` sets every variable the provider's operations need, and its local configuration names only the
    /// Kit's variables of that provider.
    @Test func eachEmulatedProviderConfiguresWhatItsProviderNeeds() {
        for (emulated, provider) in zip(Emulator.providers, Providers.all) {
            let local = emulated.localConfiguration(baseURL: "http://127.0.0.1:1")
            let names = Set(provider.variables.map(\.name))
            let needed = Set(provider.operations.flatMap(\.requiredConfiguration))
            #expect(!needed.isEmpty, "\(provider.name)")
            let everything = Emulator.localConfiguration(baseURL: "http://127.0.0.1:1")  // EMULATOR_URL too
            for variable in needed.sorted() {
                #expect(everything[variable] != nil, "\(provider.name): --env local leaves \(variable) unset")
            }
            #expect(Set(local.keys).isSubset(of: names), "\(provider.name): \(Set(local.keys).subtracting(names))")
        }
        #expect(Emulator.localConfiguration(baseURL: "http://x")["EMULATOR_URL"] == "http://x")
    }

    /// Each provider's magic values are in `sandbox serve --help`, in the list's order.
    @Test func serveHelpListsEveryProvidersScenarios() {
        let help = Emulator.scenariosHelp
        let places = Emulator.providers.map { help.range(of: $0.scenariosHelp)?.lowerBound }
        #expect(!places.contains(nil))
        #expect(places.compactMap { $0 } == places.compactMap { $0 }.sorted())
    }
}
