/// The flows the whole-checkout commands run (`centra express`, `braintree apple-pay`, `cashapp pay`), built from
/// typed steps: each option is set on the arguments of the operation that reads it (`Step.Action.operation`), and a
/// value known only as the flow runs — a total an earlier step returned, the token a step made — is bound to its
/// property by key path (`LaterArgument`). Nothing is looked up by a step's name and no option goes through a
/// variable. They are the built-in flows `flow show` prints: `CommandFlowTests` checks that each command's flow with
/// its defaults is step for step the built-in file's with its variables' defaults, so the file a user copies runs what
/// the command runs. The options' values are checked by the operations' argument declarations before the first request,
/// as a flow file's are (`FlowRunner.preflight`).
public enum CommandFlows {
    /// The variable the made token's file is captured into, as the built-in flows name it.
    static let madeTokenFile = "token_file"

    /// The step that makes an Apple Pay token with the emulator's test keys, its file captured into `madeTokenFile`.
    static func madeToken(
        _ arguments: ApplePayOperations.MakeToken, later: [LaterArgument<ApplePayOperations.MakeToken>] = []
    ) -> Step {
        Step(
            name: "make-token", action: .operation(named: ApplePayOperations.makeTokenName, arguments, later: later),
            capture: [madeTokenFile: JSONPath(components: [.key("path")])])
    }

    /// A whole checkout, which runs in a scope of the state file of its own, as a built-in flow does
    /// (`Flow.ownsState`).
    static func checkout(_ name: String, _ steps: [Step], finally: [Step] = [], deadline: Double? = nil) -> Flow {
        var flow = Flow(name: name, steps: steps, finally: finally, deadline: deadline)
        flow.ownsState = true
        return flow
    }

    /// An expectation that the value at `path` (keys) equals `value`.
    static func expecting(equals path: [String], _ value: JSON) -> Expectation {
        Expectation(conditions: [Condition(path: JSONPath(components: path.map { .key($0) }), test: .equals(value))])
    }

    /// An expectation that there is a value at each path (keys).
    static func expecting(exist paths: [String]...) -> Expectation {
        Expectation(
            conditions: paths.map { Condition(path: JSONPath(components: $0.map { .key($0) }), test: .exists(true)) })
    }
}
