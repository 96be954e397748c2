import Foundation

/// Afterpay + Cash App Pay as docs/protocols/cashapp-afterpay.md describes them, both flows: the server checkout (v2
/// checkout → sign-payment → a Cash App customer request approved by the sandbox customer → validate-payment → capture
/// or auth) and the v3 Afterpay Button (button → sign → customer request → confirm → a one-time virtual card). Choices
/// the documents leave open are in `CashAppRules`.
public final class CashAppEmulator: EmulatedProvider {
    public static let name = "cashapp"

    let store = CashAppStore()

    /// Creates the emulator and registers its routes under `/afterpay`, `/afterpay-plus`, `/cashapp` and
    /// `/_sandbox/cashapp`.
    public static func install(_ context: EmulatorContext) -> CashAppEmulator {
        let (router, ledger, baseURL) = (context.router, context.ledger, context.baseURL)
        let emulator = CashAppEmulator()
        let store = emulator.store
        router.register(
            AfterpayEmulator(store: store, ledger: ledger, baseURL: baseURL).routes()
                + AfterpayPlus(store: store, baseURL: baseURL).routes()
                + CashAppRequests(store: store, baseURL: baseURL).routes()
                + CashAppSandbox(store: store, baseURL: baseURL).routes())
        return emulator
    }

    /// How PENDING customer requests get decided from now on (`sandbox serve --cashapp-approval manual` leaves it
    /// to `cashapp approve|decline` in another terminal).
    public func setApproval(_ approval: CashAppRules.Approval) { store.withLock { $0.settings.approval = approval } }

    /// The magic-amount scenarios and the sandbox controls, for `sandbox serve --help`.
    public static let scenariosHelp = CashAppRules.scenariosHelp
}
