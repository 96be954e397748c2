import CheckoutKit
import Testing

@testable import CheckoutCLI

/// Every kind of input a command can declare, read into one value.
private struct Everything: CommandInput {
    enum Mode: String, CaseIterable, Sendable { case manual, automatic }
    var file: String?
    var mode: Mode?
    var format = OutputFormat.text
    var open = false
    var id: String?
    var url: String?
    var count: Int?
    var wait: Double?
    var budget: Double = 30
    var lines: [String] = []
    var metadata: [String: String] = [:]
    var vars: JSON.Object = [:]
    var currency: Currency?
    var amount: Int?
    var target: String?
    var rest: [String] = []

    static let inputs: [Input<Everything>] = [
        .value("file", \.file, value: "FILE", help: "a file"),
        .choice("mode", \.mode, value: "MODE", help: "a mode"),
        .choice("format", \.format, value: "FORMAT", help: "a format", default: .text),
        .flag("open", short: "o", \.open, help: "open it"),
        .identifier("id", \.id, help: "an id"),
        .url("url", \.url, help: "a URL"),
        .integer("count", \.count, range: 1...9, help: "how many"),
        .seconds("wait", \.wait, help: "how long"),
        .seconds("budget", \.budget, help: "the budget", default: 30),
        .values("line", \.lines, value: "LINE", help: "a line"),
        .pairs("meta", \.metadata, help: "metadata"),
        .variables("var", \.vars, help: "a variable"),
        .currency("currency", \.currency, help: "a currency"),
        .amount("amount", \.amount, .majorUnits, currency: \.currency, help: "an amount"),
        .identifier(argument: "TARGET", \.target, help: "the target", optional: true),
        .arguments("REST", \.rest, help: "the rest"),
    ]
}

@Suite struct CommandInputTests {
    private let command = CommandSpec(name: "try", abstract: "every input", input: Everything.self) { _, _ in .ok }

    private func read(_ words: [String]) throws(Diagnostic) -> Everything {
        let parser = Parser(root: CommandSpec(name: "root", abstract: "", subcommands: [command]), globalOptions: [])
        guard case .run(_, let invocation) = try parser.parse(["try"] + words) else {
            throw .internalError("no command")
        }
        return try Everything.read(invocation)
    }

    private func refusal(_ words: [String]) -> String? {
        do {
            _ = try read(words)
            return nil
        } catch { return error.message }
    }

    @Test func eachKindIsReadIntoItsProperty() throws {
        let v = try read([
            "t-1", "a", "b", "--file", "f.json", "--mode", "manual", "--format", "jsonl", "-o", "--id", "o-1",
            "--url", "https://x.test/r", "--count", "3", "--wait", "2m", "--budget", "500ms", "--line", "x=1",
            "--line", "x=1", "--meta", "k=v=w", "--var", "amount=12.00", "--currency", "JPY", "--amount", "1200",
        ])
        #expect(v.file == "f.json" && v.mode == .manual && v.format == .jsonl && v.open && v.id == "o-1")
        #expect(v.url == "https://x.test/r" && v.count == 3 && v.wait == 120 && v.budget == 0.5)
        #expect(v.lines == ["x=1", "x=1"], "in the order given, repeats kept")
        #expect(v.metadata == ["k": "v=w"] && v.vars["amount"] == .number(JSON.Number(literal: "12.00")!))
        #expect(v.currency?.code == "JPY" && v.amount == 1200, "read in the currency given before it")
        #expect(v.target == "t-1" && v.rest == ["a", "b"])
    }

    @Test func whatIsLeftOutKeepsItsDefault() throws {
        let v = try read([])
        #expect(v.file == nil && v.mode == nil && v.format == .text && !v.open && v.count == nil && v.budget == 30)
        #expect(v.lines.isEmpty && v.metadata.isEmpty && v.amount == nil && v.target == nil && v.rest.isEmpty)
    }

    @Test func aBadValueIsRefusedNamingItsOption() {
        #expect(refusal(["--count", "12"]) == "--count expects an integer in 1…9, got '12'")
        #expect(refusal(["--wait", "soon"])?.hasPrefix("--wait expects a duration") == true)
        #expect(refusal(["--url", "ftp://x"])?.hasPrefix("--url 'ftp://x'") == true)
        #expect(refusal(["--id", " "]) == "--id is empty; give an id")
        #expect(refusal(["--meta", "novalue"]) == "--meta expects KEY=VALUE, got 'novalue'")
        #expect(refusal(["--currency", "XYZ"])?.hasPrefix("--currency XYZ:") == true)
        #expect(
            refusal(["--amount", "12.345", "--currency", "USD"])?.contains("has 3 decimals, and USD has 2") == true)
        #expect(refusal(["--amount", "12.5", "--currency", "JPY"])?.contains("JPY has none") == true)
    }

    /// Help, completion and the parser's checks come from the same declarations.
    @Test func theDeclarationIsWhatHelpShows() {
        #expect(
            command.options.map(\.long) == [
                "file", "mode", "format", "open", "id", "url", "count", "wait", "budget", "line", "meta", "var",
                "currency", "amount",
            ])
        #expect(command.arguments.map(\.name) == ["TARGET", "REST"])
        #expect(command.options.first { $0.long == "mode" }?.choices == ["manual", "automatic"])
        #expect(command.options.first { $0.long == "format" }?.defaultValue == "text")
        #expect(command.options.first { $0.long == "budget" }?.defaultValue == "30")
        #expect(command.options.first { $0.long == "open" }?.short == "o")
        #expect(command.options.filter(\.repeatable).map(\.long) == ["line", "meta", "var"])
        #expect(command.arguments.last?.repeats == true)
        #expect(refusal(["--mode", "later"])?.contains("manual") == true, "the parser checks the choices")
    }
}
