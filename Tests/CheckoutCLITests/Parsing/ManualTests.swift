import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// `checkout-driver manual`: the manual page the packages install, from the declarations — every command with its
/// arguments and options, the global options, every exit code — in roff that man renders without a warning.
@Suite struct ManualTests {
    static let page = Manual.page(CheckoutDriver.root, globalOptions: GlobalOptions.specs, version: "1.2.3-test")

    @Test func everyCommandOptionArgumentAndExitCodeIsOnThePage() {
        func walk(_ command: CommandSpec, _ path: [String]) {
            if path.count > 1 {
                let heading = ".SS \"\(Manual.text(path.joined(separator: " ")))\"\n\(Manual.text(command.abstract))\n"
                #expect(Self.page.contains(heading), "\(path)")
                for a in command.arguments {
                    #expect(Self.page.contains(".TP\n.I \(Manual.text(a.usage))\n"), "\(a.name)")
                }
            }
            for o in command.options {
                #expect(Self.page.contains("\\fB\\-\\-\(Manual.text(o.long))\\fR"), "\(o.long)")
            }
            for sub in command.subcommands { walk(sub, path + [sub.name]) }
        }
        walk(CheckoutDriver.root, [CheckoutDriver.root.name])
        for o in GlobalOptions.specs + Help.standardOptions {
            #expect(Self.page.contains("\\fB\\-\\-\(Manual.text(o.long))\\fR"), "\(o.long)")
        }
        let exitStatus = Self.page.components(separatedBy: ".SH EXIT STATUS\n").last ?? ""
        #expect(ExitCode.allCases.count == 12)
        for code in ExitCode.allCases {
            #expect(exitStatus.contains(".TP\n.B \(code.rawValue)\n\(Manual.text(code.meaning))\n"), "\(code)")
        }
        // In order: a reader looks a code up.
        let listed = exitStatus.split(separator: "\n").filter { $0.hasPrefix(".B ") }.compactMap {
            Int($0.dropFirst(3))
        }
        #expect(listed == ExitCode.allCases.map { Int($0.rawValue) }.sorted(), "\(listed)")
        #expect(
            Self.page.hasPrefix(".TH CHECKOUT\\-DRIVER 1 \"\" \"checkout\\-driver 1.2.3\\-test\" \"User Commands\"\n"))
    }

    /// Text reaches roff as text: a backslash is printed, not an escape; a line cannot start a request; a hyphen is
    /// one.
    @Test func textIsEscapedForRoff() {
        #expect(Manual.text(#"a\b"#) == #"a\eb"#)
        #expect(Manual.text(".env files") == #"\&.env files"#)
        #expect(Manual.text("'quoted'") == #"\&'quoted'"#)
        #expect(Manual.text("--env") == #"\-\-env"#)
        #expect(Manual.text("a.b 'c'") == "a.b 'c'")
        #expect(Manual.text("run `flow list` first") == #"run \fBflow list\fR first"#)
        #expect(Manual.text("an open `quote") == #"an open \fBquote\fR"#)
    }

    /// The binary prints the page, and man renders it with groff's warnings on without one, showing every command and
    /// exit code as a reader sees them.
    @Test func manRendersTheBinarysPageWithoutAWarning() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["manual"], home: s.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix(".TH CHECKOUT\\-DRIVER 1 "))
        let file = try s.write("checkout-driver.1", r.stdout)
        let environment = ["PATH": "/usr/bin:/bin", "MANWIDTH": "100", "LANG": "C.UTF-8", "HOME": s.path]
        let warnings = try runTool("/usr/bin/man", ["--warnings", "-l", file], environment: environment).output
        let both = try runTool(
            "/usr/bin/man", ["--warnings", "-l", file], environment: environment, mergingErrors: true)
        #expect(both.status == 0)
        #expect(both.output == warnings, "man warns: \(both.output.replacingOccurrences(of: warnings, with: ""))")
        let shown = warnings.replacingOccurrences(of: "\u{8}", with: "")
        #expect(shown.contains("checkout-driver flow run"))
        #expect(shown.contains("checkout-driver sandbox serve"))
        #expect(shown.contains("EXIT STATUS"))
        #expect(shown.contains("--shard i/n|auto|auto/N"))
    }
}
