import Foundation

/// An operation's arguments to and from a step's `with` object: written as a flow file gives them, read back the same
/// way, and the steps a command builds from them (`Step.Action.operation`), with the values known only as the flow runs
/// bound to their properties.
extension OperationArguments {
    /// The value as a step's `with` object gives it — each argument that is required or not as `init()` leaves it —
    /// which reading gives back: what a command hands the engine for the step it builds.
    public var stepArguments: JSON.Object {
        let defaults = Self()
        // A required argument is always written: its initial value is a placeholder, not a default.
        let given = Self.arguments.filter { $0.parameter.required || !$0.isDefault(self, defaults) }
        var plain = JSON.Object()
        for argument in given where argument.readWith == nil {
            if let value = argument.write(self, [:]) { plain[argument.parameter.name] = value }
        }
        // An amount written in the currency the others give it.
        var written = plain
        for argument in given where argument.readWith != nil {
            if let value = argument.write(self, plain) { written[argument.parameter.name] = value }
        }
        return written
    }

    /// `arguments` read into a value, or the first the operation would refuse. An argument read with another whose
    /// value is still a template in `templates` (not known before the run) is left to the run.
    static func read(
        _ arguments: JSON.Object, templates: JSON.Object? = nil
    ) -> Result<Self, FlowOperation.ArgumentProblem> {
        var root = Self()
        for argument in Self.arguments {
            guard let value = arguments[argument.parameter.name] else { continue }
            if let other = argument.readWith, arguments[other] == nil, templates?[other] != nil { continue }
            if let problem = argument.read(value, arguments, &root) { return .failure(problem) }
        }
        return .success(root)
    }
}

extension Step.Action {
    /// A step of `operation` given `arguments`, as a flow file gives them (`OperationArguments.stepArguments`), and the
    /// arguments known only as the flow runs (`later`): a command builds its steps so, each value typed from the option
    /// it came from to the operation that reads it.
    public static func operation<Arguments: OperationArguments>(
        _ operation: FlowOperation, _ arguments: Arguments, later: [LaterArgument<Arguments>] = []
    ) -> Self {
        precondition(
            operation.argumentsType == ObjectIdentifier(Arguments.self),
            "\(operation.name) takes other arguments than \(Arguments.self)")
        return .operation(named: operation.name, arguments, later: later)
    }

    /// A step of the operation registered as `name`, which takes `Arguments`: for one made where it is registered
    /// (Apple Pay's token maker, which holds the keys it signs with).
    static func operation<Arguments: OperationArguments>(
        named name: String, _ arguments: Arguments, later: [LaterArgument<Arguments>] = []
    ) -> Self {
        var with = arguments.stepArguments
        for bound in later {
            guard let argument = Arguments.arguments.first(where: { $0.property == bound.property }) else {
                preconditionFailure("\(name) reads no argument into \(bound.property)")
            }
            with[argument.parameter.name] = .string(bound.value.template)
        }
        return .operation(name: name, arguments: .object(with))
    }
}

/// A value a step's argument takes only as the flow runs.
public enum RunValue: Sendable {
    /// A path into what an earlier step output: the selection's total the token is made for.
    case output(step: String, path: String)
    /// A variable an earlier step captured (`Step.capture`): the made token's file.
    case captured(String)

    /// As a flow file writes it.
    var template: String {
        switch self {
        case .output(let step, let path): "${steps.\(step).\(path)}"
        case .captured(let name): "${vars.\(name)}"
        }
    }
}

/// An argument of `Root` known only as the flow runs, bound to the property the operation reads it into — by key path,
/// so that a property the arguments do not have is a compile error, not a misspelt key.
public struct LaterArgument<Root: OperationArguments>: Sendable {
    let property: AnyKeyPath & Sendable
    let value: RunValue

    public static func bind<Value>(_ property: WritableKeyPath<Root, Value> & Sendable, to value: RunValue) -> Self {
        LaterArgument(property: property, value: value)
    }
}
