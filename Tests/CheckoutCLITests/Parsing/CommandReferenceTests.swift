import Foundation
import Testing

@testable import CheckoutCLI

/// `docs/commands.md` is the declarations' help, every command of it: a new command, option or default changes the
/// page, and a page left behind fails here. When it fails, the page as it should be is in `.build/commands.md`.
@Suite struct CommandReferenceTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func theReferencePageIsWhatTheDeclarationsSay() throws {
        let generated = Help.reference(CheckoutDriver.root, globalOptions: GlobalOptions.specs)
        let page =
            (try? String(contentsOf: Self.repository.appendingPathComponent("docs/commands.md"), encoding: .utf8)) ?? ""
        if page != generated {
            try generated.write(
                to: Self.repository.appendingPathComponent(".build/commands.md"), atomically: true, encoding: .utf8)
        }
        #expect(
            page == generated, "docs/commands.md differs from the declarations: cp .build/commands.md docs/commands.md")
    }

    /// Every command, however deep, has its section, with its own help and not the global options again.
    @Test func everyCommandHasASection() {
        let generated = Help.reference(CheckoutDriver.root, globalOptions: GlobalOptions.specs)
        func paths(_ command: CommandSpec, _ path: [String]) -> [[String]] {
            [path] + command.subcommands.flatMap { paths($0, path + [$0.name]) }
        }
        let all = paths(CheckoutDriver.root, ["checkout-driver"])
        #expect(all.count > 40)
        for path in all {
            #expect(
                generated.contains("\n## \(path.joined(separator: " "))\n\n```text\n\(path.joined(separator: " ")) — "),
                "\(path)")
        }
        #expect(generated.components(separatedBy: "GLOBAL OPTIONS:").count == 1)
        #expect(generated.contains("--env NAME"))
    }
}
