import Foundation

/// What `flow ops` and `flow describe` tell, read off the declarations that also validate a flow (`FlowOperation`'s
/// parameters and outputs, the flow's own `vars`, `varDescriptions` and steps), so that what a person reads is what the
/// decoder accepts. The CLI prints these documents with `--format json` and renders them as text otherwise.
public enum FlowCatalog {
    public static func operation(_ op: FlowOperation) -> JSON {
        var o: JSON.Object = [
            "name": .string(op.name), "summary": .string(op.summary),
            "arguments": .array(op.parameters.map(argument)), "outputs": .array(op.outputs.map(output)),
        ]
        if !op.requiredConfiguration.isEmpty { o["configuration"] = .array(op.requiredConfiguration.map(JSON.string)) }
        if !op.alternatives.isEmpty { o["exactlyOneOf"] = .array(op.alternatives.map { .array($0.map(JSON.string)) }) }
        return .object(o)
    }

    static func argument(_ p: FlowOperation.Parameter) -> JSON {
        var o: JSON.Object = ["name": .string(p.name), "type": .string(p.kind.rawValue), "required": .bool(p.required)]
        if let value = p.defaultValue { o["default"] = .string(value) }
        if !p.help.isEmpty { o["help"] = .string(p.help) }
        if let range = p.range {
            o["minimum"] = JSON(range.lowerBound)
            o["maximum"] = JSON(range.upperBound)
        }
        if p.input != nil { o["file"] = true }
        if let choices = p.choices { o["choices"] = .array(choices.map(JSON.string)) }
        if let rule = p.amount {
            o["notation"] = .string(rule.notation.rawValue)
            o["currency"] = .string(
                rule.currencyArgument.map {
                    "argument '\($0)'\(rule.defaultCurrency.map { " [default: \($0)]" } ?? "")"
                } ?? "learnt as the operation runs")
        }
        return .object(o)
    }

    static func output(_ output: FlowOperation.Output) -> JSON {
        var o: JSON.Object = ["path": .string(output.path), "help": .string(output.help)]
        if let when = output.when { o["when"] = .string(when) }
        return .object(o)
    }

    /// A flow's variables (in the order their defaults are worked out), its steps — what each runs, captures and
    /// outputs — and its `finally` steps.
    public static func describe(_ flow: Flow, registry: OperationRegistry) -> JSON {
        let order = (try? FlowDecoder.variableOrder(flow.vars)) ?? flow.vars.keys.sorted()
        var o: JSON.Object = [
            "name": .string(flow.name), "description": .string(flow.description),
            "vars": .array(
                order.map { name in
                    var v: JSON.Object = ["name": .string(name), "default": flow.vars[name] ?? .null]
                    if let text = flow.varDescriptions[name] { v["description"] = .string(text) }
                    return .object(v)
                }),
            "steps": .array(flow.steps.map { step($0, registry: registry) }),
            "finally": .array(flow.finally.map { step($0, registry: registry) }),
        ]
        if let deadline = flow.deadline { o["deadline"] = JSON(deadline) }
        return .object(o)
    }

    /// A raw request outputs its answer's body: parsed when it is JSON, else as text.
    public static let requestOutput = "the answer's body (JSON when it parses, else its text)"

    static func step(_ step: Step, registry: OperationRegistry) -> JSON {
        var o: JSON.Object = ["name": .string(step.name)]
        if let description = step.description { o["description"] = .string(description) }
        switch step.action {
        case .request(let r):
            o["request"] = .string("\(r.method) \(r.url)")
            o["outputs"] = [["path": "$", "help": .string(requestOutput)]]
        case .operation(let name, let arguments):
            o["use"] = .string(name)
            if arguments != .object([:]) { o["with"] = arguments }
            if let op = registry[name] {
                o["summary"] = .string(op.summary)
                o["outputs"] = .array(op.outputs.map(output))
            }
        }
        if !step.capture.isEmpty {
            o["capture"] = .object(JSON.Object(step.capture.mapValues { .string($0.description) }))
        }
        if step.optional { o["optional"] = true }
        return .object(o)
    }
}
