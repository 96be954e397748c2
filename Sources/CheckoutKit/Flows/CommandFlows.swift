/// The built-in flows the whole-checkout commands run (`centra express`, `braintree apple-pay`, `cashapp pay`), built
/// from typed options. Each step a command adjusts is named once, in `BuiltinStep`, and adjusting a step the flow does
/// not have is an internal error — so a step renamed in a template and not here fails `CommandFlowTests` (and the
/// command, loudly) instead of turning an option into a silent no-op. The options' values are checked by the
/// operations' parameter declarations before the first request, as a flow file's are (`FlowRunner.preflight`).
public enum CommandFlows {}

/// The steps of the built-in flows that commands adjust, by the names the templates give them.
public enum BuiltinStep: String, CaseIterable, Sendable {
    case makeToken = "make-token"
    case shippingMethod = "shipping-method"
    case payment
    case config
    case tokenize
    case charge
    case authorize
    case capture
    case confirm
}

extension Flow {
    /// Changes the arguments of one of its operation steps; a step the flow does not have is an internal error.
    mutating func setArguments(of step: BuiltinStep, _ change: (inout JSON.Object) -> Void) throws(Diagnostic) {
        guard let index = steps.firstIndex(where: { $0.name == step.rawValue }),
            case .operation(let operation, let arguments) = steps[index].action
        else {
            throw .internalError("built-in flow \(name) has no operation step '\(step.rawValue)' to adjust")
        }
        var adjusted = arguments.objectValue ?? [:]
        change(&adjusted)
        steps[index].action = .operation(name: operation, arguments: .object(adjusted))
    }

    /// Leaves out steps it has; a step it does not have is an internal error.
    mutating func remove(_ names: BuiltinStep...) throws(Diagnostic) {
        for step in names {
            guard steps.contains(where: { $0.name == step.rawValue }) else {
                throw .internalError("built-in flow \(name) has no step '\(step.rawValue)' to leave out")
            }
            steps.removeAll { $0.name == step.rawValue }
        }
    }
}
