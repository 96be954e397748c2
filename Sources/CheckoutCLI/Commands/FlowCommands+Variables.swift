import CheckoutKit
import Foundation

/// The flow variables a command takes: `--var`, `--vars-file` and `--data`'s rows, each value with where it came from.
extension FlowCommands {
    /// `--var` and `--vars-file`, as `flow run`, `replay` and `validate` take them.
    struct VariableOptions: Sendable {
        /// `--var NAME=VALUE`: a number or true/false keeps its type (`Invocation.variables`).
        var values: JSON.Object = [:]
        /// `--vars-file FILE`: a JSON object of names to values, read by `variables(_:for:subject:)`.
        var file: String?
    }

    /// A command's input that takes the flow variable options.
    protocol FlowVariablesInput: CommandInput {
        var variables: VariableOptions { get set }
    }

    /// The flow variable options, declared once for each command that takes them.
    static func variableInputs<Root: FlowVariablesInput>() -> [Input<Root>] {
        [
            .variables(
                "var", \.variables.values, value: "KEY=VALUE",
                help: "Set a flow variable (a number or true/false keeps its type)."),
            .value(
                "vars-file", \.variables.file, value: "FILE",
                help: "Set flow variables from a JSON object; --var wins over it."),
        ]
    }

    /// Values for a flow's variables and where each came from (`VariableOrigin`), so that a bad one is blamed on it.
    struct Given {
        var values: JSON.Object
        var origins: [String: VariableOrigin]

        /// A value as given: the JSON it was read as (a number with the text it was written with), and its source.
        mutating func set(_ name: String, _ value: JSON, from origin: VariableOrigin) {
            values[name] = value
            origins[name] = origin
        }
    }

    /// `--vars-file` then `--var`; a name the flow neither declares nor uses is a mistake (a misspelt `--var
    /// amout=5100` would otherwise run a test with the default amount), refused with the closest name — or, for a
    /// variable the flow once had, with what took its place.
    static func variables(
        _ options: VariableOptions, for flow: Flow, subject: String? = nil
    ) throws(Diagnostic) -> Given {
        let used = flow.variableNames
        let missing = { (name: String) in
            flow.retiredVariables[name].map {
                "\(subject ?? "flow \(flow.name) has no variable") '\(name)' any more: \($0)"
            }
                ?? "\(subject ?? "flow \(flow.name) has no variable") '\(name)'\(suggestion(name, used))"
        }
        var vars = Given(values: [:], origins: [:])
        if let path = options.file {
            let data: Data
            switch FileIO.read(path) {
            case .success(let bytes): data = bytes
            case .failure(let error):
                throw .data("cannot read --vars-file \(path): \(error.reason)", hint: "check the path")
            }
            let parsed: JSON
            do { parsed = try JSON.parse(data) } catch {
                throw .data(
                    "--vars-file \(path): not valid JSON: \(error)",
                    hint: "one JSON object of names to values, e.g. {\"amount\": 5100}")
            }
            guard case .object(let object) = parsed else {
                throw .data(
                    "--vars-file \(path): expected a JSON object of variables, found \(parsed.kindName)",
                    hint: "one JSON object: names to values, e.g. {\"amount\": 5100}")
            }
            for (name, value) in object.sorted(by: { $0.key < $1.key }) {
                guard used.contains(name) else {
                    throw .data(
                        "--vars-file \(path): $.\(name): \(missing(name))",
                        hint: "its variables: \(used.sorted().joined(separator: ", "))")
                }
                vars.set(name, value, from: .varsFile(path))
            }
        }
        for (name, value) in options.values.sorted(by: { $0.key < $1.key }) {
            guard used.contains(name) else {
                throw .usage(
                    "--var \(name): \(missing(name))",
                    hint: used.isEmpty
                        ? "the flow takes no variables" : "its variables: \(used.sorted().joined(separator: ", "))")
            }
            vars.set(name, value, from: .commandLine)
        }
        return vars
    }

    /// For a suite, each flow gets the variables it uses; a name that no flow of the suite uses is still a mistake.
    static func suiteVariables(_ options: VariableOptions, for flows: [Flow]) throws(Diagnostic) -> [(Flow, Given)] {
        let names = flows.reduce(into: Set<String>()) { $0.formUnion($1.variableNames) }
        var all = Flow(name: "suite", vars: JSON.Object(names.map { ($0, JSON.null) }), steps: [])
        for flow in flows { all.retiredVariables.merge(flow.retiredVariables) { first, _ in first } }
        let given = try variables(options, for: all, subject: "no flow of the suite has a variable")
        return flows.map { flow in
            let own = given.values.filter { flow.variableNames.contains($0.key) }
            return (flow, Given(values: own, origins: given.origins.filter { own[$0.key] != nil }))
        }
    }

    private static func suggestion(_ name: String, _ names: Set<String>) -> String {
        Suggest.closest(to: name, in: names.sorted()).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// A run of `member` per row of `--data FILE`: the row's values over the flow's defaults, `--var`'s over the row's.
    static func dataMembers(_ path: String, for member: FlowSuite.Member) throws(Diagnostic) -> [FlowSuite.Member] {
        try FlowSuite.dataRows(path, for: member.flow).map { row in
            var run = member
            run.row = row
            run.preflight = PreflightRecord()  // its own variables: a record of its own, shared by its repeats only
            for (name, value) in row.values where member.origins[name] != .commandLine {
                run.vars[name] = value
                run.origins[name] = .dataRow(file: path, row: row.number, id: row.id)
            }
            return run
        }
    }
}
