/// Renders help from a command's declaration, so help can never drift from what the parser accepts.
enum Help {
    /// Every command's help, depth first, as one Markdown page (`docs/commands.md`, which a test holds to this): the
    /// global options once at the top rather than under each command.
    static func reference(_ root: CommandSpec, globalOptions: [OptionSpec]) -> String {
        var out = """
            # Command reference

            Generated from the command declarations: what `checkout-driver help COMMAND` prints, for every command. A test
            fails when this page and the declarations differ (`CommandReferenceTests`, which writes the page as it should
            be to `.build/commands.md`). How the commands fit together: [cli.md](cli.md).

            ## Global options

            Every command takes these.

            ```text
            \(table(globalOptions + standardOptions))```

            """
        func walk(_ command: CommandSpec, _ path: [String]) {
            out += "\n## \(path.joined(separator: " "))\n\n```text\n"
            out += render(command, path: path, globalOptions: nil)
            out += "```\n"
            for sub in command.subcommands { walk(sub, path + [sub.name]) }
        }
        walk(root, [root.name])
        return out
    }

    /// `--help` and `--version`, which every command takes.
    static let standardOptions = [
        OptionSpec("help", short: "h", help: "Show help for this command."),
        OptionSpec("version", help: "Print the version."),
    ]

    /// A command's help; `globalOptions` nil leaves their section out (the reference lists them once).
    static func render(_ command: CommandSpec, path: [String], globalOptions: [OptionSpec]?) -> String {
        var out = "\(path.joined(separator: " ")) — \(command.abstract)\n\n"
        out += "USAGE: " + usage(command, path: path, globalOptions: globalOptions) + "\n"
        if !command.discussion.isEmpty { out += "\n" + command.discussion + "\n" }
        if !command.subcommands.isEmpty {
            out += "\nCOMMANDS:\n"
            let width = command.subcommands.map(\.name.count).max() ?? 0
            for sub in command.subcommands {
                out += "  " + sub.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + sub.abstract + "\n"
            }
        }
        if !command.arguments.isEmpty {
            out += "\nARGUMENTS:\n"
            let width = command.arguments.map(\.name.count).max() ?? 0
            for a in command.arguments {
                out += "  " + a.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + a.help + "\n"
            }
        }
        if !command.options.isEmpty { out += "\nOPTIONS:\n" + table(command.options) }
        if let globalOptions { out += "\nGLOBAL OPTIONS:\n" + table(globalOptions + standardOptions) }
        if !command.subcommands.isEmpty {
            out += "\nRun '\(path.joined(separator: " ")) <command> --help' for a command's options.\n"
        }
        return out
    }

    /// The command line a command takes: `flow run [FLOW...] [options]`.
    static func usage(_ command: CommandSpec, path: [String], globalOptions: [OptionSpec]?) -> String {
        var usage = path.joined(separator: " ")
        if !command.subcommands.isEmpty { usage += " <command>" }
        for a in command.arguments { usage += " " + a.usage }
        // (No global options given: they are listed elsewhere, and still taken.)
        if !command.options.isEmpty || globalOptions.map({ !$0.isEmpty }) ?? true { usage += " [options]" }
        return usage
    }

    /// What an option does, with its choices, default and whether it repeats.
    static func optionHelp(_ o: OptionSpec) -> String {
        var help = o.help
        if let choices = o.choices { help += " (\(choices.joined(separator: "|")))" }
        if let d = o.defaultValue { help += " [default: \(d)]" }
        if o.repeatable { help += " (repeatable)" }
        return help
    }

    private static func table(_ options: [OptionSpec]) -> String {
        let rows = options.map { o -> (String, String) in
            var left = o.short.map { "-\($0), " } ?? "    "
            left += "--\(o.long)"
            if let v = o.valueName { left += " \(v)" }
            return (left, optionHelp(o))
        }
        let width = min(rows.map(\.0.count).max() ?? 0, 32)
        return rows.map { left, right in
            left.count > width
                ? "  \(left)\n  \(String(repeating: " ", count: width + 2))\(right)\n"
                : "  \(left.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(right)\n"
        }.joined()
    }
}
