import CheckoutKit
import Testing

@testable import CheckoutCLI

/// The parser against the real command tree, without starting a process.
@Suite struct ParserTests {
    let parser = Parser(root: CheckoutDriver.root, globalOptions: GlobalOptions.specs)

    func invocation(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> Invocation {
        guard case .run(_, let invocation) = try parser.parse(arguments) else {
            Issue.record("\(arguments) did not parse to a command", sourceLocation: sourceLocation)
            throw Diagnostic.internalError("not a command")
        }
        return invocation
    }

    func usageError(_ arguments: [String]) -> String? {
        do {
            _ = try parser.parse(arguments)
            return nil
        } catch {
            return error.code == .usage ? error.message : "exit \(error.code.rawValue): \(error.message)"
        }
    }

    /// `--opt=value` splits at the first '=': everything after it is the value, '=' signs included.
    @Test func inlineValuesKeepEveryEqualsSignAfterTheFirst() throws {
        let inline = try invocation(["flow", "run", "f.json", "--var=a=b=c", "--var=amount=5100", "--set=NAME=x=y"])
        #expect(try inline.variables("var") == ["a": "b=c", "amount": 5100])
        #expect(try GlobalSettings(inline).config.configurationFlags == ["NAME": "x=y"])

        let separate = try invocation(["flow", "run", "f.json", "--var", "a=b=c", "--set", "NAME==leading"])
        #expect(try separate.variables("var") == ["a": "b=c"])
        #expect(try GlobalSettings(separate).config.configurationFlags == ["NAME": "=leading"])
        #expect(try invocation(["flow", "run", "f.json", "--var=empty="]).variables("var") == ["empty": ""])
    }

    /// `flow run`'s FLOW takes every remaining word; one-word arguments still refuse a second.
    @Test func aRepeatingArgumentTakesEveryRemainingWord() throws {
        let suite = try invocation(["flow", "run", "a.json", "--fail-fast", "b", "dir/"])
        #expect(suite.arguments("FLOW") == ["a.json", "b", "dir/"])
        #expect(suite.argument("FLOW") == "a.json")
        #expect(suite.flag("fail-fast"))
        #expect(try invocation(["flow", "run", "--all"]).arguments("FLOW").isEmpty)
        #expect(usageError(["flow", "validate", "a.json", "b.json"]) == "unexpected argument 'b.json'")
        let help = Help.render(FlowCommands.run, path: ["checkout-driver", "flow", "run"], globalOptions: [])
        #expect(help.contains("USAGE: checkout-driver flow run [FLOW...] [options]"))
    }

    @Test func repeatableOptionsCollectEveryValue() throws {
        let i = try invocation(["flow", "run", "f.json", "--var", "a=1", "--var=b=two", "--set", "X=1", "--set", "Y=2"])
        #expect(try i.variables("var") == ["a": 1, "b": "two"])
        #expect(try GlobalSettings(i).config.configurationFlags == ["X": "1", "Y": "2"])
    }

    @Test func pairsNeedAKey() {
        #expect(throws: Diagnostic.self) {
            try self.invocation(["flow", "run", "f.json", "--var", "=5"]).variables("var")
        }
        #expect(throws: Diagnostic.self) {
            try self.invocation(["flow", "run", "f.json", "--var", "novalue"]).variables("var")
        }
    }

    @Test func aSingleValueOptionGivenTwiceIsAUsageError() {
        #expect(
            usageError(["flow", "run", "f.json", "--timeout", "1", "--timeout=2"])?.contains(
                "--timeout given more than once") == true)
    }

    @Test func aMissingRequiredOptionIsAUsageError() {
        #expect(usageError(["bahn", "confirm", "--intent", "pi_1"]) == "missing required option --token-file FILE")
        #expect(usageError(["applepay", "token"]) == "missing required option --amount N")
    }

    @Test func choicesAreChecked() throws {
        #expect(usageError(["flow", "list", "--format=yaml"])?.contains("invalid value 'yaml' for --format") == true)
        #expect(try invocation(["flow", "list", "--format=jsonl"]).string("format") == "jsonl")
    }

    @Test func doubleDashEndsOptions() throws {
        let i = try invocation(["flow", "run", "--", "--odd.json"])
        #expect(i.argument("FLOW") == "--odd.json")
    }
}
