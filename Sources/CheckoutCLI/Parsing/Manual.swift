import CheckoutKit

/// The manual page, `checkout-driver(1)`, in man(7) roff, generated from the command declarations as help is: every
/// command with its arguments and options, the global options once, and every exit code (`ExitCode.meaning`). The
/// packages install it (`Scripts/package`); `checkout-driver manual | man -l -` reads it without installing.
enum Manual {
    static func page(_ root: CommandSpec, globalOptions: [OptionSpec], version: String) -> String {
        var out = """
            .TH CHECKOUT\\-DRIVER 1 "" "checkout\\-driver \(text(version))" "User Commands"
            .nh
            .ad l
            .SH NAME
            checkout\\-driver \\- \(text(root.abstract))
            .SH SYNOPSIS
            .B checkout\\-driver
            .I command
            .RI [ options ]

            """
        out += ".SH DESCRIPTION\n" + paragraphs(root.discussion)
        out += ".PP\n\(text("`checkout-driver help COMMAND` (or COMMAND --help) prints a command's help."))\n"
        out += ".SH GLOBAL OPTIONS\n\(text("Every command takes these, anywhere on its command line."))\n"
        out += options(globalOptions + Help.standardOptions)
        out += ".SH COMMANDS\n"
        func walk(_ command: CommandSpec, _ path: [String]) {
            if path.count > 1 {
                out += ".SS \"\(text(path.joined(separator: " ")))\"\n\(text(command.abstract))\n"
                out += ".PP\n.B \(text(Help.usage(command, path: path, globalOptions: nil)))\n"
                if !command.discussion.isEmpty { out += paragraphs(command.discussion) }
                if !command.arguments.isEmpty {
                    out += ".PP\nArguments:\n"
                    for a in command.arguments { out += ".TP\n.I \(text(a.usage))\n\(text(a.help))\n" }
                }
                if !command.options.isEmpty { out += ".PP\nOptions:\n" + options(command.options) }
            }
            for sub in command.subcommands { walk(sub, path + [sub.name]) }
        }
        walk(root, [root.name])
        out += ".SH EXIT STATUS\n"
        for code in ExitCode.allCases.sorted(by: { $0.rawValue < $1.rawValue }) {
            out += ".TP\n.B \(code.rawValue)\n\(text(code.meaning))\n"
        }
        out += """
            .SH FILES
            .TP
            .I ~/.config/checkout\\-driver/config.json
            \(text("Profiles (--config names another; $XDG_CONFIG_HOME moves it)."))
            .TP
            .I ~/.local/state/checkout\\-driver/
            \(text("State files (one per environment; --session names another), mode 0600, and a running emulator's announcement."))
            .SH SEE ALSO
            \(text("The README and docs/ of the source repository; `checkout-driver completion SHELL` for shell completion."))

            """
        return out
    }

    /// Options as tagged paragraphs: the spelling in bold, its value in italics, then what it does.
    private static func options(_ options: [OptionSpec]) -> String {
        options.map { o in
            var tag = o.short.map { "\\fB\\-\($0)\\fR, " } ?? ""
            tag += "\\fB\\-\\-\(text(o.long))\\fR"
            if let v = o.valueName { tag += " \\fI\(text(v))\\fR" }
            return ".TP\n\(tag)\n\(text(Help.optionHelp(o)))\n"
        }.joined()
    }

    /// Declared text as roff paragraphs: a blank line starts a paragraph, lines within one are filled, and an indented
    /// line (an example, a table) is kept as written.
    private static func paragraphs(_ discussion: String) -> String {
        var out = ""
        var filling = false
        for line in discussion.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                filling = false
                continue
            }
            if line.first?.isWhitespace == true {
                out += ".nf\n\(text(String(line)))\n.fi\n"
                filling = false
            } else {
                out += (filling ? "" : ".PP\n") + text(String(line)) + "\n"
                filling = true
            }
        }
        return out
    }

    /// Plain text made safe for roff: a backslash written as one, every hyphen a hyphen (not a break point that
    /// hyphenation may move), a line that would start with a control character (`.` or `'`) protected, and what help
    /// quotes in backticks (a command, an option) in bold.
    static func text(_ s: String) -> String {
        var out = ""
        var quoting = false
        for c in s {
            switch c {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "`":
                out += quoting ? "\\fR" : "\\fB"
                quoting.toggle()
            default: out.append(c)
            }
        }
        if quoting { out += "\\fR" }
        if out.first == "." || out.first == "'" { out = "\\&" + out }
        return out
    }
}
