import Foundation

/// What a replay checks once every request matched: each step ended as it did in the recording (the same steps,
/// passed, failed or skipped alike), so a change in how the driver reads an answer shows too.
public enum ReplayVerdict {
    public static func stepDivergence(_ result: FlowResult, recording: Recording) -> Divergence? {
        let recorded = recording.steps
        for (index, step) in result.steps.enumerated() {
            guard index < recorded.count else {
                return Divergence(
                    kind: .step, request: nil, step: step.name,
                    headline:
                        "step '\(step.name)' ran, and the recording has no step after '\(recorded.last?.name ?? "")'",
                    lines: [])
            }
            let then = recorded[index]
            if then.name != step.name {
                return Divergence(
                    kind: .step, request: nil, step: step.name,
                    headline: "step '\(step.name)' ran where the recording has step '\(then.name)'", lines: [])
            }
            if then.outcome != step.outcome {
                return Divergence(
                    kind: .step, request: nil, step: step.name,
                    headline:
                        "step '\(step.name)' \(step.outcome.rawValue), and it \(then.outcome.rawValue) in the recording",
                    lines: step.message.map { ["this run: \($0)"] } ?? [])
            }
        }
        if result.steps.count < recorded.count {
            let missing = recorded[result.steps.count]
            return Divergence(
                kind: .step, request: nil, step: missing.name,
                headline: "the recording has step '\(missing.name)', which this run did not reach", lines: [])
        }
        return nil
    }
}
