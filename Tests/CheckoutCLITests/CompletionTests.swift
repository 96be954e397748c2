import CheckoutKit
import Foundation
import Testing
import TestSupport
@testable import CheckoutCLI

/// `completion bash|zsh|fish`: each script loads in its shell, names every command and option, and completes what a
/// person types — bash and fish asked as they would be at a prompt (zsh is checked for syntax: it needs a terminal).
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
        let r = try shell("/bin/bash", ["-c", "cd '\(directory)' && source '\(file)' && COMP_WORDS=(\(quoted)) && COMP_CWORD=\(words.count - 1) && _checkout_driver && printf '%s\\n' \"${COMPREPLY[@]}\""])
        #expect(r.status == 0, "\(r.out)")
        return r.out.split(separator: "\n").map(String.init)
    }

    @Test func everyScriptLoadsAndNamesEveryCommandAndOption() async throws {
        let s = try Scratch()
        let model = CompletionModel(root: CheckoutDriver.root, globalOptions: GlobalOptions.specs)
        #expect(model.nodes.count > 40, "\(model.nodes.count) commands")
        for (shell, check) in [("bash", ["/bin/bash", "-n"]), ("zsh", ["/usr/bin/zsh", "-n"]), ("fish", ["/usr/bin/fish", "--no-execute"])] {
            let file = try await Self.script(shell, in: s)
            let syntax = try Self.shell(check[0], [check[1], file])
            #expect(syntax.status == 0, "\(shell): \(syntax.out)")
            let text = try String(contentsOfFile: file, encoding: .utf8)
            for node in model.nodes {
                for word in node.path.split(separator: " ") { #expect(text.contains(String(word)), "\(shell): \(word)") }
                for option in node.options where option.hasPrefix("--") {
                    #expect(text.contains(shell == "fish" ? "-l \(option.dropFirst(2))" : option), "\(shell): \(node.path) \(option)")
                }
            }
        }
        let wrong = try await BinaryRunner.run(["completion", "zhs"], home: s.path)
        #expect(wrong.status == 64 && wrong.stderr.contains("no completion for shell 'zhs'; did you mean 'zsh'?"), "\(wrong.all)")
    }

    @Test func bashCompletesCommandsOptionsChoicesFlowsAndFiles() async throws {
        let s = try Scratch()
        let file = try await Self.script("bash", in: s)
        _ = try s.write("old-report.html", "")
        _ = try s.write("old week.html", "")
        let complete = { (words: [String]) throws -> [String] in try Self.bash(file, words, in: s.path) }
        #expect(try complete(["checkout-driver", "fl"]) == ["flow"])
        #expect(try complete(["checkout-driver", "flow", ""]) == ["run", "replay", "list", "show", "describe", "ops", "schema", "validate", "junit-merge"])
        #expect(try complete(["checkout-driver", "flow", "run", "--for"]) == ["--format", "--force"])
        #expect(try complete(["checkout-driver", "flow", "run", "--format", ""]) == ["text", "json", "jsonl"])
        #expect(try complete(["checkout-driver", "--env", "sandbox", "flow", "run", "bahn-"]) == ["bahn-apple-pay"], "an option's value is not a command")
        #expect(try complete(["checkout-driver", "doctor", "--provider", ""]) == Providers.all.map(\.name))
        #expect(try complete(["checkout-driver", "flow", "show", "cashapp-server"]).sorted() == ["cashapp-server", "cashapp-server-auth"])
        #expect(try complete(["checkout-driver", "flow", "ops", "bahn.c"]).sorted() == ["bahn.cancel", "bahn.capture", "bahn.confirm", "bahn.createIntent"])
        #expect(try complete(["checkout-driver", "flow", "run", "--html", "old-"]) == ["old-report.html"])
        #expect(try complete(["checkout-driver", "flow", "run", "--html", "old"]).sorted() == ["old week.html", "old-report.html"], "a name with a space is one")
        #expect(try complete(["checkout-driver", "bahn", "create-intent", "--amount", ""]) == [], "an amount has nothing to propose")
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
        #expect(try complete("checkout-driver flow ").sorted() == ["describe", "junit-merge", "list", "ops", "replay", "run", "schema", "show", "validate"])
        #expect(try complete("checkout-driver flow run --format ").sorted() == ["json", "jsonl", "text"])
        #expect(try complete("checkout-driver --env sandbox doctor --provider ").sorted() == Providers.all.map(\.name).sorted())
        #expect(try complete("checkout-driver flow run bahn-").contains("bahn-apple-pay"))
    }
}
