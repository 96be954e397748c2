import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// `completion bash|zsh|fish`: each script loads in its shell, names every command and option, and completes what a
/// person types — each asked as it would be at a prompt: bash through its completion function, fish through
/// `complete -C`, zsh in a pseudo-terminal session (`zpty`) where a TAB is typed.
@Suite struct CompletionTests {
    static func script(_ shell: String, in s: Scratch) async throws -> String {
        let r = try await BinaryRunner.run(["completion", shell], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        return try s.write("completion.\(shell)", r.stdout)
    }

    static func shell(_ path: String, _ arguments: [String]) throws -> (status: Int32, out: String) {
        let run = try runTool(path, arguments, mergingErrors: true)
        return (run.status, run.output)
    }

    /// What bash's completion offers for `words`, the last being the word under the cursor.
    static func bash(_ file: String, _ words: [String], in directory: String) throws -> [String] {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let r = try shell(
            "/bin/bash",
            [
                "-c",
                "cd '\(directory)' && source '\(file)' && COMP_WORDS=(\(quoted)) && COMP_CWORD=\(words.count - 1) && _checkout_driver && printf '%s\\n' \"${COMPREPLY[@]}\"",
            ])
        #expect(r.status == 0, "\(r.out)")
        return r.out.split(separator: "\n").map(String.init)
    }

    @Test func everyScriptLoadsAndNamesEveryCommandAndOption() async throws {
        let s = try Scratch()
        let model = CompletionModel(root: CheckoutDriver.root, globalOptions: GlobalOptions.specs)
        #expect(model.nodes.count > 40, "\(model.nodes.count) commands")
        for (shell, check) in [
            ("bash", ["/bin/bash", "-n"]), ("zsh", ["/usr/bin/zsh", "-n"]),
            ("fish", ["/usr/bin/fish", "--no-execute"]),
        ] {
            let file = try await Self.script(shell, in: s)
            let syntax = try Self.shell(check[0], [check[1], file])
            #expect(syntax.status == 0, "\(shell): \(syntax.out)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for node in model.nodes {
                for word in node.path.split(separator: " ") {
                    #expect(text.contains(String(word)), "\(shell): \(word)")
                }
                for option in node.options where option.hasPrefix("--") {
                    #expect(
                        text.contains(shell == "fish" ? "-l \(option.dropFirst(2))" : option),
                        "\(shell): \(node.path) \(option)")
                }
            }
        }
        let wrong = try await BinaryRunner.run(["completion", "zhs"], home: s.path)
        #expect(
            wrong.status == 64 && wrong.stderr.contains("no completion for shell 'zhs'; did you mean 'zsh'?"),
            "\(wrong.all)")
    }

    @Test func bashCompletesCommandsOptionsChoicesFlowsAndFiles() async throws {
        let s = try Scratch()
        let file = try await Self.script("bash", in: s)
        _ = try s.write("old-report.html", "")
        _ = try s.write("old week.html", "")
        let complete = { (words: [String]) throws -> [String] in try Self.bash(file, words, in: s.path) }
        #expect(try complete(["checkout-driver", "fl"]) == ["flow"])
        #expect(
            try complete(["checkout-driver", "flow", ""]) == [
                "run", "replay", "list", "show", "describe", "ops", "schema", "validate", "junit-merge",
            ])
        #expect(try complete(["checkout-driver", "flow", "run", "--for"]) == ["--format", "--force"])
        #expect(try complete(["checkout-driver", "flow", "run", "--format", ""]) == ["text", "json", "jsonl"])
        #expect(
            try complete(["checkout-driver", "--env", "sandbox", "flow", "run", "bahn-"]) == ["bahn-apple-pay"],
            "an option's value is not a command")
        #expect(try complete(["checkout-driver", "doctor", "--provider", ""]) == Providers.all.map(\.name))
        #expect(
            try complete(["checkout-driver", "flow", "show", "cashapp-server"]).sorted() == [
                "cashapp-server", "cashapp-server-auth",
            ])
        #expect(
            try complete(["checkout-driver", "flow", "ops", "bahn.c"]).sorted() == [
                "bahn.cancel", "bahn.capture", "bahn.confirm", "bahn.createIntent",
            ])
        #expect(try complete(["checkout-driver", "flow", "run", "--html", "old-"]) == ["old-report.html"])
        #expect(
            try complete(["checkout-driver", "flow", "run", "--html", "old"]).sorted() == [
                "old week.html", "old-report.html",
            ], "a name with a space is one")
        #expect(
            try complete(["checkout-driver", "bahn", "create-intent", "--amount", ""]) == [],
            "an amount has nothing to propose")
        // --opt=VALUE, split at '=' as bash does by default (COMP_WORDBREAKS), or one word as bash-completion keeps it.
        #expect(try complete(["checkout-driver", "flow", "run", "--format", "=", ""]) == ["text", "json", "jsonl"])
        #expect(try complete(["checkout-driver", "flow", "run", "--format", "="]) == ["text", "json", "jsonl"])
        #expect(try complete(["checkout-driver", "flow", "run", "--format", "=", "js"]) == ["json", "jsonl"])
        #expect(
            try complete(["checkout-driver", "flow", "run", "--format=js"]) == ["--format=json", "--format=jsonl"])
        #expect(try complete(["checkout-driver", "--env", "=", ""]) == ["local", "sandbox"])
        #expect(try complete(["checkout-driver", "--env", "=", "s"]) == ["sandbox"])
        #expect(try complete(["checkout-driver", "--env=l"]) == ["--env=local"])
        #expect(
            try complete(["checkout-driver", "doctor", "--provider=b"]).sorted() == [
                "--provider=bahn", "--provider=braintree",
            ])
        #expect(try complete(["checkout-driver", "flow", "run", "--html=old-"]) == ["--html=old-report.html"])
        #expect(
            try complete(["checkout-driver", "--env", "=", "sandbox", "flow", "run", "bahn-"]) == ["bahn-apple-pay"])
        // A recording is a .har file: flow replay offers those (and directories to find them in).
        _ = try s.write("run.har", "{}")
        try FileManager.default.createDirectory(atPath: s.path + "/runs", withIntermediateDirectories: true)
        #expect(try complete(["checkout-driver", "flow", "replay", ""]).sorted() == ["run.har", "runs"])
    }

    /// What zsh offers when TAB is typed after each of `lines` at its prompt: one zsh in a pseudo-terminal (`zpty`)
    /// with the script loaded through compinit, whose `compadd` also prints what it adds; the line is cleared between
    /// TABs. Each TAB's answer is read until it has come and nothing more follows, not for a fixed time.
    static func zsh(_ file: String, _ lines: [String], in directory: String) throws -> [[String]] {
        let driver = """
            zmodload zsh/zpty
            zpty z zsh -f -i
            zpty -w z "PROMPT='%% '"
            zpty -w z "autoload -Uz compinit; compinit -u -D"
            zpty -w z "source ${1:A}"
            zpty -w z 'compadd () { local -a __h; builtin compadd -O __h "$@"; (( $#__h )) && print -r -- "<offered>" ${(j: :)__h} "</offered>"; builtin compadd "$@" }'
            zpty -w z "zstyle ':completion:*' menu no"
            zpty -w z "cd ${2:A}"
            local chunk
            for line in "${@[3,-1]}"; do
              local out="" quiet=0 waited=0
              while zpty -r -t z chunk; do :; done
              zpty -w -n z "$line"$'\t'
              # Until zsh has offered something and gone quiet for half a second: at most 15 s, for a busy machine.
              while (( waited < 150 )) && [[ $out != *'</offered>'* || $quiet -lt 5 ]]; do
                sleep 0.1
                (( waited++, quiet++ ))
                while zpty -r -t z chunk; do out+=$chunk; quiet=0; done
              done
              print -r -- "<line>" $(print -r -- "$out" | tr -d '\r' | grep -o '<offered> [^$]*</offered>' | sed 's/<[/]*offered>//g')
              zpty -w -n z $'\\C-u'
            done
            zpty -d z
            """
        let script = (directory as NSString).appendingPathComponent("zpty-driver.zsh")
        try Data(driver.utf8).write(to: URL(fileURLWithPath: script))
        let r = try Self.shell("/usr/bin/zsh", ["-f", script, file, directory] + lines)
        let answers = r.out.split(separator: "\n").filter { $0.hasPrefix("<line>") }
            .map { $0.dropFirst("<line>".count).split(separator: " ").map(String.init).sorted() }
        #expect(answers.count == lines.count, "\(r.out)")
        return answers
    }

    @Test func zshCompletesAsAtItsPrompt() async throws {
        let s = try Scratch()
        let file = try await Self.script("zsh", in: s)
        _ = try s.write("run.har", "{}")
        _ = try s.write("notes.txt", "")
        let offered = try Self.zsh(
            file,
            [
                "checkout-driver fl", "checkout-driver flow run --format ", "checkout-driver flow run --format=",
                "checkout-driver --env sandbox doctor --provider ", "checkout-driver flow show cashapp-server",
                "checkout-driver flow replay ",
            ], in: s.path)
        guard offered.count == 6 else { return }
        #expect(offered[0] == ["flow"])
        #expect(offered[1] == ["json", "jsonl", "text"])
        #expect(offered[2] == ["json", "jsonl", "text"], "--opt= completes its value")
        #expect(offered[3] == Providers.all.map(\.name).sorted(), "an option's value is not a command")
        #expect(offered[4] == ["cashapp-server", "cashapp-server-auth"])
        #expect(offered[5].contains("run.har") && !offered[5].contains("notes.txt"), "only recordings: \(offered[5])")
    }

    @Test func fishCompletesAsAtItsPrompt() async throws {
        let s = try Scratch()
        let file = try await Self.script("fish", in: s)
        func complete(_ line: String) throws -> [String] {
            let r = try Self.shell("/usr/bin/fish", ["--no-config", "-c", "source '\(file)'; complete -C '\(line)'"])
            #expect(r.status == 0, "\(r.out)")
            return r.out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        }
        let top = try complete("checkout-driver ")
        #expect(top.contains("flow") && top.contains("doctor") && top.contains("completion"), "\(top)")
        #expect(
            try complete("checkout-driver flow ").sorted() == [
                "describe", "junit-merge", "list", "ops", "replay", "run", "schema", "show", "validate",
            ])
        #expect(try complete("checkout-driver flow run --format ").sorted() == ["json", "jsonl", "text"])
        #expect(
            try complete("checkout-driver --env sandbox doctor --provider ").sorted()
                == Providers.all.map(\.name).sorted())
        #expect(try complete("checkout-driver flow run bahn-").contains("bahn-apple-pay"))
        #expect(try complete("checkout-driver flow run --format=j").sorted() == ["--format=json", "--format=jsonl"])
        _ = try s.write("run.har", "{}")
        _ = try s.write("notes.txt", "")
        let recordings = try Self.shell(
            "/usr/bin/fish",
            ["--no-config", "-c", "cd '\(s.path)'; source '\(file)'; complete -C 'checkout-driver flow replay '"])
        #expect(recordings.out.contains("run.har") && !recordings.out.contains("notes.txt"), "\(recordings.out)")
    }
}
