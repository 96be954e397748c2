/// Where a flow variable's value came from, so that a value a step cannot use is blamed on its source — and exits with
/// that source's code: the command line 64, a file 65, configuration 78, a response 1.
public enum VariableOrigin: Sendable, Equatable {
    /// `--var NAME=VALUE`.
    case commandLine
    /// `--vars-file PATH`.
    case varsFile(String)
    /// A flow file's `vars`, or an include's: where it was written ("my-flow.json: $.steps[0].vars.amount").
    case declared(String)
    /// The variables a `--record`ed run kept, replayed (the HAR file's path).
    case recording(String)
    /// A flow variable whose value is one configuration variable (`"amount": "${env.AMOUNT}"`): its name.
    case configuration(String)
    /// A flow variable whose value is another's (`"total": "${vars.amount}"`): that one's name, blamed in its place.
    case sameAs(String)
    /// Captured from a step's output as the flow ran.
    case captured(step: String)
    /// A cell of `--data FILE`: its row (counted from 1, the header apart) and the row's id.
    case dataRow(file: String, row: Int, id: String)
}

/// A value a step cannot use, said once in the words of where it came from. The one place that blames a value on its
/// source: a header value with a line break, an amount that does not fit its currency.
struct ValueBlame {
    var step: Step
    /// A clause that follows the value: "has 2 decimals, and JPY has none", "holds a line break (LF), which cannot go
    /// into header X-Note".
    var problem: String
    /// What the value was for, beside the step: "argument 'amount' of bahn.createIntent" (nil when `problem` says it).
    var target: String?
    var hint: String
    /// Whether the message shows the value: not when the value itself is the trouble (a line break).
    var showsValue = true
    var stateFile: String?

    /// The diagnostic for `value`, reached through `template` (a whole argument, or one reference of a header value) in
    /// `scope`.
    func diagnostic(_ value: JSON, template: JSON?, scope: TemplateScope) -> Diagnostic {
        let shown = showsValue ? value.shownInMessage : nil
        let segments = template?.stringValue.flatMap { try? Template.parse($0) } ?? []
        let place = "(step '\(step.name)'\(target.map { ", \($0)" } ?? "")); nothing was sent"
        let named = { (subject: String) in shown.map { "\(subject)=\($0)" } ?? subject }
        guard segments.count == 1, case .reference(let ref, _, let source) = segments[0] else {
            let location = FlowRunner.place(of: step, source: scope.flowSource)
            let what = target ?? "the value"
            if segments.allSatisfy({ if case .literal = $0 { true } else { false } }) {
                return .data(
                    "\(location): \(what)\(shown.map { " is \($0), which" } ?? "") \(problem); nothing was sent",
                    hint: hint)
            }
            return .data(
                "\(location): \(what) \(template!.stringValue!) renders\(shown.map { " \($0)," } ?? "") which \(problem); nothing was sent",
                hint: hint)
        }
        switch ref {
        case .env(let name):
            return configuration(name, place: place)
        case .vars(var name, _):
            // Through the variables that only pass another's value on, to the one that was given.
            var seen: Set<String> = [name]
            while case .sameAs(let other)? = scope.origins[name], !seen.contains(other) {
                name = other
                seen.insert(other)
            }
            switch scope.origins[name] {
            case .configuration(let variable)?:
                return configuration(variable, place: place)
            case .commandLine?:
                return .usage("\(named("--var \(name)")) \(problem) \(place)", hint: hint)
            case .varsFile(let path)?:
                return .data("--vars-file \(path): \(named("$.\(name)")) \(problem) \(place)", hint: hint)
            case .declared(let location)?:
                return .data(
                    "\(shown.map { "flow variable \(name)=\($0)" } ?? "flow variable '\(name)'") (\(location)) \(problem) \(place)",
                    hint: hint)
            case .dataRow(let file, let row, let id)?:
                return .data(
                    "--data \(file) row \(row) (id \(id)), column \(named(name)) \(problem) \(place)",
                    hint: "\(hint); fix that cell")
            case .recording(let path)?:
                return .data(
                    "\(shown.map { "recorded variable \(name)=\($0)" } ?? "recorded variable '\(name)'") (\(path)) \(problem) \(place)",
                    hint: "\(hint); or pass --var \(name)=VALUE")
            case .captured(let from)?:
                return .failure(
                    "step '\(step.name)': \(source)\(shown.map { " \($0)" } ?? "") \(problem)\(target.map { " (\($0))" } ?? "") (the value was captured from step '\(from)''s response)",
                    hint: "capture a field that holds what the step takes, or check what the service answered with -v")
            case nil, .sameAs?:
                return .data(
                    "\(shown.map { "flow variable \(name)=\($0)" } ?? "flow variable '\(name)'") \(problem) \(place)",
                    hint: hint)
            }
        case .steps(let name, _):
            return .failure(
                "step '\(step.name)': \(source)\(shown.map { " \($0)" } ?? "") \(problem)\(target.map { " (\($0))" } ?? "") (the value comes from step '\(name)''s response)",
                hint: "use a field that holds what the step takes, or check what the service answered with -v")
        case .state:
            return .data(
                "step '\(step.name)': \(source)\(shown.map { " \($0)" } ?? "") \(problem) (the value comes from the state file \(stateFile ?? "")); nothing was sent",
                hint: "fix that entry of the state file")
        case .uuid, .now:
            return .internalError("\(source) \(problem)")
        }
    }

    /// Not shown: configuration values are secrets unless the driver knows better, and the redactor masks them.
    private func configuration(_ name: String, place: String) -> Diagnostic {
        .configuration(
            "configuration variable \(name) \(problem) \(place)",
            hint: "set \(name) (--set, the environment, .env or the profile): \(hint)")
    }
}

extension JSON {
    /// A value as a message shows it, on one line: a number as written, a string as it is when it reads as one word,
    /// else quoted (with JSON's escapes, when it holds a control character).
    var shownInMessage: String {
        switch self {
        case .number(let n): return n.literal
        case .string(let s):
            if s.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return serialized() }
            let plain =
                !s.isEmpty && s.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-+:/@".contains($0)) }
            return plain ? s : "'\(s)'"
        default: return serialized()
        }
    }
}
