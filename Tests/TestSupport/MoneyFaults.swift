/// The faults every money call is tried under, as `sandbox serve --faults` injects them on the call's route: the
/// fault matrix of the providers' commands (`FaultMatrixTests`) and of the fifth provider's sketch
/// (`FifthProviderTests`) run the same ones.
public enum MoneyFaults {
    public static let faults = [
        "status=503", "html=500", "reset", "drop", "truncate=10", "malformed", "latency=2500ms",
        "status=429:Retry-After=0",
    ]

    /// Which of the call's attempts a fault hits.
    public enum Mode: String, CaseIterable, Sendable {
        case first, every
        /// Every attempt, and every read of the resource back answers 503.
        case everyReadDown = "every+read-down"
    }
}
