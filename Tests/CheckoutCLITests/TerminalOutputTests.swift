import Foundation
import TestSupport
import Testing

/// Text output on a terminal (through `script`, which gives the binary a pseudo-terminal) and off one.
@Suite struct TerminalOutputTests {
    static let escape = "\u{1B}["

    /// Runs the binary on a pseudo-terminal; returns everything the terminal showed.
    func onTerminal(_ arguments: String, noColor: Bool, home: String, term: String = "xterm") async throws -> String {
        var env = BinaryRunner.environment(home: home)
        if !noColor { env["NO_COLOR"] = nil }
        env["TERM"] = term
        let (status, shown) = try await runOnTerminal(arguments, home: home, environment: env)
        #expect(status == 0)
        return shown
    }

    @Test func terminalGetsALiveProgressLineAndColour() async throws {
        let s = try Scratch()
        let shown = try await onTerminal("flow run emulator-orders", noColor: false, home: s.path)
        #expect(shown.contains("\r\(Self.escape)2K"))  // the progress line is drawn and erased
        #expect(shown.contains("\(Self.escape)32m✓\(Self.escape)0m health"))  // green tick
    }

    /// A batch's live line counts its runs as they end (made only for a terminal, where it is shown).
    @Test func aBatchOnATerminalCountsItsRunsOnTheLiveLine() async throws {
        let s = try Scratch()
        let shown = try await onTerminal(
            "flow run emulator-orders --repeat 3 --parallel 1", noColor: true, home: s.path)
        for done in 1...3 { #expect(shown.contains("\(done)/3 done, 0 failed, "), "\(shown.debugDescription)") }
    }

    @Test func noColorKeepsProgressButDropsColour() async throws {
        let s = try Scratch()
        let shown = try await onTerminal("flow run emulator-orders", noColor: true, home: s.path)
        #expect(shown.contains("\r\(Self.escape)2K"))
        #expect(!shown.contains("\(Self.escape)32m"))
        #expect(shown.contains("✓ health"))
    }

    @Test func aDumbTerminalGetsNoCursorControl() async throws {
        let s = try Scratch()
        let shown = try await onTerminal("flow run emulator-orders", noColor: false, home: s.path, term: "dumb")
        #expect(!shown.contains(Self.escape), "no escape sequence at all: \(shown.debugDescription)")
        #expect(shown.contains("✓ health"))
    }

    @Test func pipesGetPlainLines() async throws {
        let s = try Scratch()
        // NO_COLOR set but empty counts as unset (no-color.org), so colour would be allowed here: only the
        // missing terminal keeps escapes out.
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders"], home: s.path, environment: ["TERM": "xterm", "NO_COLOR": ""])
        #expect(r.status == 0)
        #expect(!r.stdout.contains("\u{1B}") && !r.stderr.contains("\u{1B}"))
    }
}
