@testable import CheckoutKit

extension ReadBack.Finding {
    /// "took: …", "refused: …" or "not seen: …", with what the read showed, for tests of the rules that decide it.
    var described: String {
        switch self {
        case .tookEffect(_, let shows): "took: \(shows)"
        case .refused(let diagnostic): "refused: \(diagnostic.message)"
        case .notSeen(let shows): "not seen: \(shows)"
        }
    }

    var output: StepOutput? { if case .tookEffect(let output, _) = self { output } else { nil } }
}
