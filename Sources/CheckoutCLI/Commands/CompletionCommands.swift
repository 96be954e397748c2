import CheckoutKit
import Foundation

/// `checkout-driver completion bash|zsh|fish`: a completion script generated from the command declarations — every
/// command, option and choice, the built-in flows and operations where a command takes them, files where a file is
/// expected — so it never falls behind the commands themselves.
enum CompletionCommands {
    static let shells = ["bash", "zsh", "fish"]

    struct CompletionInput: CommandInput {
        var shell: String?

        static let inputs: [Input<CompletionInput>] = [.argument("SHELL", \.shell, help: "bash, zsh or fish.")]
    }

    static let spec = CommandSpec(
        name: "completion", abstract: "Print a shell completion script (bash, zsh or fish).",
        discussion: """
            Install it once (docs/cli.md, "Shell completion"):
              bash   checkout-driver completion bash > ~/.local/share/bash-completion/completions/checkout-driver
              zsh    checkout-driver completion zsh > "${fpath[1]}/_checkout-driver"
              fish   checkout-driver completion fish > ~/.config/fish/completions/checkout-driver.fish
            """,
        input: CompletionInput.self
    ) { input, invocation throws(Diagnostic) in
        let shell = input.shell!
        let model = CompletionModel(root: CheckoutDriver.root, globalOptions: GlobalOptions.specs)
        switch shell {
        case "bash": Console.shared.out(model.bash)
        case "zsh": Console.shared.out(model.zsh)
        case "fish": Console.shared.out(model.fish)
        default:
            let suggestion = Suggest.closest(to: shell, in: shells).map { "; did you mean '\($0)'?" } ?? ""
            throw invocation.usage(
                "no completion for shell '\(shell)'\(suggestion) (choose from \(shells.joined(separator: ", ")))")
        }
        return .ok
    }
}

/// What completes where, read off the command tree: for each command path ("", "flow", "flow run"), its subcommands,
/// its options (its own and the global ones) with what each option's value is, and what its arguments are.
struct CompletionModel {
    enum Value: Equatable {
        case words([String])
        case files
        /// Files ending in a suffix (a recording's `.har`), and directories to find them in.
        case filesEnding(String)
        case wordsAndFiles([String])
        /// A value nothing can propose (an amount, an id).
        case free
    }

    struct Node {
        var path: String
        var subcommands: [String]
        var options: [String]
        var values: [String: Value]
        var argument: Value?
    }

    var nodes: [Node] = []

    init(root: CommandSpec, globalOptions: [OptionSpec]) {
        func visit(_ command: CommandSpec, path: String) {
            var options = ["--help"] + (path.isEmpty ? ["--version"] : [])
            var values: [String: Value] = [:]
            for option in command.options + globalOptions {
                let names = ["--" + option.long] + (option.short.map { ["-\($0)"] } ?? [])
                options += names
                if let value = Self.value(of: option) { for name in names { values[name] = value } }
            }
            let argument = command.arguments.first.map { Self.value(of: $0, path: path) }
            nodes.append(
                Node(
                    path: path, subcommands: command.subcommands.map(\.name), options: options, values: values,
                    argument: argument))
            for sub in command.subcommands { visit(sub, path: path.isEmpty ? sub.name : path + " " + sub.name) }
        }
        visit(root, path: "")
    }

    static var flowNames: [String] { BuiltinFlows.all.map(\.name) }

    static func value(of option: OptionSpec) -> Value? {
        guard let name = option.valueName else { return nil }
        if let choices = option.choices { return .words(choices) }
        if option.long == "env" { return .words(["local", "sandbox"]) }
        if name == "NAME|FILE" { return .wordsAndFiles(flowNames) }
        return isFile(name) ? .files : .free
    }

    static func value(of argument: ArgumentSpec, path: String) -> Value {
        switch (path, argument.name) {
        case ("flow show", _): .words(flowNames)
        case ("flow ops", _):
            .words(
                Operations.registry.names
                    + Set(Operations.registry.names.compactMap { $0.split(separator: ".").first.map(String.init) })
                    .sorted())
        case ("completion", _): .words(CompletionCommands.shells)
        case (_, "FLOW"), (_, "NAME|FILE"): .wordsAndFiles(flowNames)
        case (_, let name) where name.hasSuffix(".har"): .filesEnding(".har")
        case (_, let name) where isFile(name): .files
        default: .free
        }
    }

    static func isFile(_ placeholder: String) -> Bool {
        placeholder.contains("FILE") || placeholder == "PATH" || placeholder.hasSuffix(".har")
            || placeholder.hasSuffix(".xml")
    }

    // MARK: - bash and zsh: the same walker, in the shell's own dialect

    /// `case` arms answering, for a command path, its subcommands / options / the value of an option / its arguments.
    private func cases(indent: String) -> (subcommands: String, options: String, value: String, argument: String) {
        func arm(_ key: String, _ text: String) -> String { "\(indent)\(quoted(key))) echo \(quoted(text)) ;;" }
        func describe(_ value: Value) -> String {
            switch value {
            case .words(let w): "words:" + w.joined(separator: " ")
            case .files: "files"
            case .filesEnding(let suffix): "files:" + suffix
            case .wordsAndFiles(let w): "words+files:" + w.joined(separator: " ")
            case .free: "free"
            }
        }
        var subcommands: [String] = []
        var options: [String] = []
        var values: [String] = []
        var arguments: [String] = []
        for node in nodes {
            if !node.subcommands.isEmpty { subcommands.append(arm(node.path, node.subcommands.joined(separator: " "))) }
            options.append(arm(node.path, node.options.joined(separator: " ")))
            for (option, value) in node.values.sorted(by: { $0.key < $1.key }) {
                values.append(arm(node.path + "|" + option, describe(value)))
            }
            if let argument = node.argument { arguments.append(arm(node.path, describe(argument))) }
        }
        return (
            subcommands.joined(separator: "\n"), options.joined(separator: "\n"), values.joined(separator: "\n"),
            arguments.joined(separator: "\n")
        )
    }

    private func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }

    /// The helpers both bash and zsh run: POSIX `case` in functions.
    private var helpers: String {
        let c = cases(indent: "    ")
        return """
            _checkout_driver_subcommands() {
              case "$1" in
            \(c.subcommands)
              esac
            }
            _checkout_driver_options() {
              case "$1" in
            \(c.options)
              esac
            }
            _checkout_driver_value() {
              case "$1|$2" in
            \(c.value)
              esac
            }
            _checkout_driver_argument() {
              case "$1" in
            \(c.argument)
              esac
            }
            """
    }

    /// After an option that takes a value, that value is what completes (both shells say it the same way).
    private let offerOptionValue = """
          if [[ $prev == -* && $prev != *=* ]]; then
            kind="$(_checkout_driver_value "$cmdpath" "$prev")"
            if [[ -n $kind ]]; then
              _checkout_driver_offer "$kind"
              return
            fi
          fi
        """

    var bash: String {
        """
        # bash completion for checkout-driver — generated by `checkout-driver completion bash` from its command declarations.
        \(helpers)
        _checkout_driver() {
          local cur="${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath="" i w kind subs
          for ((i = 1; i < COMP_CWORD; i++)); do
            w="${COMP_WORDS[i]}"
            if [[ $w == -* ]]; then
              [[ $w == *=* ]] && continue
              kind="$(_checkout_driver_value "$cmdpath" "$w")"
              # Its value follows, as the next word or, split at '=', as the one after the '='.
              [[ -n $kind ]] && ((i++)) && [[ ${COMP_WORDS[i]} == "=" ]] && ((i++))
              continue
            fi
            subs=" $(_checkout_driver_subcommands "$cmdpath") "
            [[ $subs == *" $w "* ]] && cmdpath="${cmdpath:+$cmdpath }$w"
          done
          ((COMP_CWORD > 1)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
          # --opt=VALUE: bash splits it at '=' (COMP_WORDBREAKS) into --opt, =, VALUE; with '=' not a break it is one word.
          if [[ $cur == "=" || $prev == "=" ]] && ((COMP_CWORD > 1)); then
            local opt="${COMP_WORDS[COMP_CWORD - 1]}"
            [[ $cur == "=" ]] || opt="${COMP_WORDS[COMP_CWORD - 2]}"
            [[ $cur == "=" ]] && cur=""
            kind="$(_checkout_driver_value "$cmdpath" "$opt")"
            [[ -n $kind ]] && _checkout_driver_offer "$kind" "$cur"
            return 0
          fi
          if [[ $cur == --*=* ]]; then
            kind="$(_checkout_driver_value "$cmdpath" "${cur%%=*}")"
            [[ -n $kind ]] && _checkout_driver_offer "$kind" "${cur#*=}" "${cur%%=*}="
            return 0
          fi
        \(offerOptionValue)
          if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$(_checkout_driver_options "$cmdpath")" -- "$cur"))
            return
          fi
          subs="$(_checkout_driver_subcommands "$cmdpath")"
          if [[ -n $subs ]]; then
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
            return
          fi
          kind="$(_checkout_driver_argument "$cmdpath")"
          [[ -n $kind ]] && _checkout_driver_offer "$kind"
          return 0
        }
        # $1 what to offer, $2 the text typed so far (default: the word under the cursor), $3 a prefix each offer keeps
        # (the `--opt=` of a word bash did not split at '=').
        _checkout_driver_offer() {
          local cur="${2-${COMP_WORDS[COMP_CWORD]}}" prefix="$3" i
          case "$1" in
            words:*) COMPREPLY=($(compgen -W "${1#words:}" -- "$cur")) ;;
            words+files:*) COMPREPLY=($(compgen -W "${1#words+files:}" -- "$cur")); _checkout_driver_files "$cur" ;;
            files) COMPREPLY=(); _checkout_driver_files "$cur" ;;
            files:*) COMPREPLY=(); _checkout_driver_files "$cur" "${1#files:}" ;;
            *) COMPREPLY=() ;;
          esac
          for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]="$prefix${COMPREPLY[i]}"; done
          return 0
        }
        # $1 the text typed so far; $2, when given, the suffix the files must have (directories are offered too).
        _checkout_driver_files() {
          # One file a line: a name may hold spaces.
          local IFS=$'\n' cur="$1"
          if [[ -n $2 ]]; then
            COMPREPLY+=($(compgen -d -- "$cur") $(compgen -f -X "!*$2" -- "$cur"))
          else
            COMPREPLY+=($(compgen -f -- "$cur"))
          fi
        }
        complete -o filenames -F _checkout_driver checkout-driver
        """
    }

    var zsh: String {
        """
        #compdef checkout-driver
        # zsh completion for checkout-driver — generated by `checkout-driver completion zsh` from its command declarations.
        \(helpers)
        _checkout_driver() {
          local cur="${words[CURRENT]}" prev="" cmdpath="" w kind subs
          local -i i=2
          while (( i < CURRENT )); do
            w="${words[i]}"
            if [[ $w == -* ]]; then
              if [[ $w != *=* ]]; then
                kind="$(_checkout_driver_value "$cmdpath" "$w")"
                [[ -n $kind ]] && (( i++ ))
              fi
            else
              subs=" $(_checkout_driver_subcommands "$cmdpath") "
              [[ $subs == *" $w "* ]] && cmdpath="${cmdpath:+$cmdpath }$w"
            fi
            (( i++ ))
          done
          (( CURRENT > 2 )) && prev="${words[CURRENT-1]}"
          # --opt=VALUE is one word here: the value completes after the '='.
          if [[ $cur == --*=* ]]; then
            kind="$(_checkout_driver_value "$cmdpath" "${cur%%=*}")"
            if [[ -n $kind ]]; then
              compset -P '*='
              _checkout_driver_offer "$kind"
            fi
            return
          fi
        \(offerOptionValue)
          if [[ $cur == -* ]]; then
            compadd -- ${=$(_checkout_driver_options "$cmdpath")}
            return
          fi
          subs="$(_checkout_driver_subcommands "$cmdpath")"
          if [[ -n $subs ]]; then
            compadd -- ${=subs}
            return
          fi
          kind="$(_checkout_driver_argument "$cmdpath")"
          [[ -n $kind ]] && _checkout_driver_offer "$kind"
        }
        _checkout_driver_offer() {
          case "$1" in
            words:*) compadd -- ${=${1#words:}} ;;
            words+files:*) compadd -- ${=${1#words+files:}}; _files ;;
            files:*) _files -g "*${1#files:}" ;;
            files) _files ;;
          esac
        }
        if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
          _checkout_driver "$@"
        else
          compdef _checkout_driver checkout-driver
        fi
        """
    }

    // MARK: - fish

    var fish: String {
        var lines = [
            "# fish completion for checkout-driver — generated by `checkout-driver completion fish` from its command declarations.",
            "",
            "# The command path typed so far (\"flow run\"): words that are subcommands, options and their values skipped.",
            "function __checkout_driver_path",
            "    set -l tokens (commandline -opc)",
            "    set -l path",
            "    set -l skip 0",
            "    for token in $tokens[2..-1]",
            "        if test $skip = 1",
            "            set skip 0",
            "            continue",
            "        end",
            "        switch $token",
            "            case '-*=*'",
            "                continue",
            "            case \(valueOptions.map { "'\($0)'" }.joined(separator: " "))",
            "                set skip 1",
            "                continue",
            "            case '-*'",
            "                continue",
            "        end",
            "        if contains -- $token (__checkout_driver_subcommands (string join ' ' $path))",
            "            set path $path $token",
            "        end",
            "    end",
            "    string join ' ' $path",
            "end",
            "",
            "function __checkout_driver_subcommands",
            "    switch \"$argv[1]\"",
        ]
        for node in nodes where !node.subcommands.isEmpty {
            lines.append("        case \(quoted(node.path))")
            lines.append("            printf '%s\\n' \(node.subcommands.joined(separator: " "))")
        }
        lines += [
            "    end", "end", "", "function __checkout_driver_at", "    set -l at (__checkout_driver_path)",
            "    test \"$at\" = \"$argv[1]\"", "end", "",
            "complete -c checkout-driver -f",
        ]
        func words(_ value: Value) -> String {
            switch value {
            case .words(let w): " -x -a " + quoted(w.joined(separator: " "))
            case .wordsAndFiles(let w): " -r -F -a " + quoted(w.joined(separator: " "))
            case .files: " -r -F"
            // Only those files (fish's own __fish_complete_suffix lists every file, the suffix's first), and
            // directories.
            case .filesEnding(let suffix):
                " -r -f -a "
                    + quoted(
                        "(__fish_complete_path (commandline -ct) | string match -r -- \"^[^\\t]*(?:/|\(suffix.replacingOccurrences(of: ".", with: "\\.")))(?:\\t.*)?\\$\")"
                    )
            case .free: " -x"
            }
        }
        for node in nodes {
            let at = "-n " + quoted("__checkout_driver_at " + quoted(node.path))
            if !node.subcommands.isEmpty {
                lines.append("complete -c checkout-driver \(at) -a \(quoted(node.subcommands.joined(separator: " ")))")
            } else if let argument = node.argument {
                lines.append("complete -c checkout-driver \(at)\(words(argument))")
            }
            for option in node.options where option.hasPrefix("--") {
                let long = String(option.dropFirst(2))
                let short = node.options.first {
                    $0.count == 2 && node.values[$0] == node.values[option] && Self.shortFor(long) == $0
                }
                var line = "complete -c checkout-driver \(at) -l \(long)"
                if let short { line += " -s \(short.dropFirst())" }
                if let value = node.values[option] { line += words(value) }
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Every option that takes a value, anywhere: the path walker skips their values.
    private var valueOptions: [String] { Array(Set(nodes.flatMap(\.values.keys))).sorted() }

    private static func shortFor(_ long: String) -> String? {
        GlobalOptions.specs.first { $0.long == long }?.short.map { "-\($0)" }
    }
}
