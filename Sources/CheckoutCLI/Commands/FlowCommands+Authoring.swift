import CheckoutKit
import Foundation

/// `checkout-driver flow show | describe | ops | schema`: what a person needs to write a flow without reading the
/// source — the built-in flows as files to start from, what a flow takes and gives, and every operation a step can
/// `use`.
extension FlowCommands {
    static let show = CommandSpec(
        name: "show", abstract: "Print a built-in flow as a flow file, to copy and edit.",
        discussion: """
            Prints the flow file exactly as it ships; 'flow run' takes it unchanged:
              checkout-driver flow show centra-express > my-flow.json && checkout-driver flow run my-flow.json
            """,
        input: ShowInput.self
    ) { input, _ throws(Diagnostic) in
        let name = input.name!
        if name.contains("/") || name.hasSuffix(".json") || FileManager.default.fileExists(atPath: name) {
            throw .usage(
                "flow show prints a built-in flow, and \(name) is a flow file's path",
                hint:
                    "a flow file is shown as it is (cat \(ShellWords.join([name]))); `checkout-driver flow describe \(ShellWords.join([name]))` lists its variables and steps"
            )
        }
        let entry = try builtin(name, files: false)
        Console.shared.out(entry.source.hasSuffix("\n") ? String(entry.source.dropLast()) : entry.source)
        return .ok
    }

    /// `flow show`: the built-in flow to print.
    struct ShowInput: CommandInput {
        /// The `NAME` argument, which the parser requires.
        var name: String?

        static let inputs: [Input<ShowInput>] = [
            .argument("NAME", \.name, help: "A built-in flow (see 'flow list').")
        ]
    }

    static let describe = CommandSpec(
        name: "describe", abstract: "List a flow's variables, steps and what each step outputs.",
        discussion: """
            For each variable its default and meaning; for each step the operation or request it runs, what it
            captures, and the paths of its output that capture, expect and until (and later steps, as
            ${steps.<name>.<path>}) can read.
            """,
        input: DescribeInput.self
    ) { input, invocation throws(Diagnostic) in
        let settings = try GlobalSettings(invocation)
        let registry = Operations.registry
        let flow = try resolve(input.flow!, registry: registry)
        let document = FlowCatalog.describe(flow, registry: registry)
        guard settings.output.format == .text else {
            Console.shared.out(document.serialized(pretty: settings.output.format == .json))
            return .ok
        }
        var lines = ["\(flow.name)" + (flow.description.isEmpty ? "" : ": \(flow.description)")]
        if let deadline = flow.deadline { lines.append("deadline: \(JSON(deadline).serialized())s") }
        let vars = document["vars"]?.arrayValue ?? []
        if !vars.isEmpty {
            lines.append("")
            lines.append("variables (--var NAME=VALUE):")
            lines += table(
                vars.map { v in
                    // A long default (an address) is cut: `flow show` and --format json give it whole.
                    let value = v["default"]!.serialized()
                    return [
                        v["name"]!.interpolationText, value.count > 40 ? value.prefix(39) + "…" : value,
                        v["description"]?.stringValue ?? "",
                    ]
                })
        }
        for (title, steps) in [("steps:", flow.steps), ("finally:", flow.finally)] where !steps.isEmpty {
            lines.append("")
            lines.append(title)
            for (index, step) in steps.enumerated() {
                let action: String
                switch step.action {
                case .request(let r): action = "\(r.method) \(r.url)"
                case .operation(let name, _): action = "use \(name)" + (registry[name].map { ": \($0.summary)" } ?? "")
                }
                lines.append("  \(index + 1). \(step.name)\(step.optional ? " (optional)" : "")  \(action)")
                if let description = step.description { lines.append("       \(description)") }
                for (name, path) in step.capture.sorted(by: { $0.key < $1.key }) {
                    lines.append("       captures ${vars.\(name)} from \(path)")
                }
                switch step.action {
                case .request: lines.append("       outputs: \(FlowCatalog.requestOutput)")
                case .operation(let name, _):
                    let outputs = registry[name]?.outputs ?? []
                    if !outputs.isEmpty {
                        lines.append("       outputs: " + outputs.map(\.path).joined(separator: ", "))
                    }
                }
            }
        }
        Console.shared.out(lines.joined(separator: "\n"))
        return .ok
    }

    /// `flow describe`: the flow to describe.
    struct DescribeInput: CommandInput {
        /// The `NAME|FILE` argument, which the parser requires.
        var flow: String?

        static let inputs: [Input<DescribeInput>] = [
            .argument("NAME|FILE", \.flow, help: "A built-in flow or the path of a flow file.")
        ]
    }

    static let ops = CommandSpec(
        name: "ops", abstract: "List the operations a step can 'use': arguments and outputs.",
        discussion: """
            Each operation with its arguments (type, whether required, default, meaning) and the paths of what its step
            outputs. NAME picks one operation, or a provider's (bahn, centra, cashapp, braintree, applepay).
            """,
        input: OpsInput.self
    ) { input, invocation throws(Diagnostic) in
        let settings = try GlobalSettings(invocation)
        let registry = Operations.registry
        var operations = registry.all
        if let name = input.name {
            operations = operations.filter { $0.name == name || $0.name.hasPrefix(name + ".") }
            if operations.isEmpty {
                let names = registry.names
                let providers = Set(names.compactMap { $0.split(separator: ".").first.map(String.init) }).sorted()
                let suggestion =
                    Suggest.closest(to: name, in: names + providers).map { "; did you mean '\($0)'?" } ?? ""
                throw .usage(
                    "no operation or provider named '\(name)'\(suggestion)",
                    hint:
                        "providers: \(providers.joined(separator: ", ")); `checkout-driver flow ops` lists every operation"
                )
            }
        }
        guard settings.output.format == .text else {
            let items = operations.map(FlowCatalog.operation)
            Console.shared.out(
                settings.output.format == .json
                    ? JSON.object(["operations": .array(items)]).serialized(pretty: true)
                    : items.map { $0.serialized() }.joined(separator: "\n"))
            return .ok
        }
        var lines: [String] = []
        for op in operations {
            if !lines.isEmpty { lines.append("") }
            lines.append("\(op.name): \(op.summary)")
            if !op.requiredConfiguration.isEmpty {
                lines.append("  needs: \(op.requiredConfiguration.joined(separator: ", "))")
            }
            lines.append(op.parameters.isEmpty ? "  arguments: none" : "  arguments (with):")
            for names in op.alternatives { lines.append("  exactly one of: \(names.joined(separator: ", "))") }
            lines += table(
                op.parameters.map { p in
                    var facts = [p.kind.rawValue, p.required ? "required" : "optional"]
                    if let range = p.range { facts.append("\(range.lowerBound)…\(range.upperBound)") }
                    if p.input != nil { facts.append("a file") }
                    if let choices = p.choices { facts.append(choices.joined(separator: "|")) }
                    if let rule = p.amount {
                        facts.append(
                            rule.currencyArgument.map { "currency from '\($0)'" } ?? "in the currency it learns")
                    }
                    let meaning = [p.help, p.defaultValue.map { "[default: \($0)]" } ?? ""].filter { !$0.isEmpty }
                        .joined(separator: " ")
                    return [p.name, facts.joined(separator: ", "), meaning]
                }, indent: 4)
            if !op.outputs.isEmpty {
                lines.append("  outputs:")
                lines += table(
                    op.outputs.map { [$0.path, $0.help + ($0.when.map { " (when \($0))" } ?? "")] }, indent: 4)
            }
        }
        Console.shared.out(lines.joined(separator: "\n"))
        return .ok
    }

    /// `flow ops`: the operation or provider to list, or every operation.
    struct OpsInput: CommandInput {
        var name: String?

        static let inputs: [Input<OpsInput>] = [
            .argument("NAME", \.name, help: "An operation (bahn.confirm) or a provider (bahn).", optional: true)
        ]
    }

    static let schema = CommandSpec(
        name: "schema", abstract: "Print the JSON Schema (2020-12) of flow files, for editors.",
        discussion: """
            Built from the same declarations that validate a flow, with each operation's 'with' arguments. Save it and
            point your editor at it (docs/flow-files.md):
              checkout-driver flow schema > flow.schema.json
            """
    ) { _ throws(Diagnostic) in
        Console.shared.out(FlowSchema.document(registry: Operations.registry).serialized(pretty: true))
        return .ok
    }

    /// - Parameter files: whether the command takes a flow file's path too (the hint offers one only then).
    static func builtin(_ name: String, files: Bool = true) throws(Diagnostic) -> BuiltinFlows.Entry {
        guard let entry = BuiltinFlows.named(name) else {
            let names = BuiltinFlows.all.map(\.name)
            let suggestion = Suggest.closest(to: name, in: names).map { "; did you mean '\($0)'?" } ?? ""
            throw .usage(
                "no built-in flow named '\(name)'\(suggestion)",
                hint:
                    "built-in flows: \(names.joined(separator: ", "))\(files ? "; or give the path of a flow file" : "")"
            )
        }
        return entry
    }

    /// Columns padded to the widest cell; the last column is not padded.
    static func table(_ rows: [[String]], indent: Int = 2) -> [String] {
        guard let columns = rows.map(\.count).max() else { return [] }
        let widths = (0..<columns).map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
        return rows.map { row in
            let cells = row.enumerated().map { c, cell in
                c == row.count - 1 ? cell : cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
            }
            let line = String(repeating: " ", count: indent) + cells.joined(separator: "  ")
            return String(line.reversed().drop { $0 == " " }.reversed())
        }
    }
}
