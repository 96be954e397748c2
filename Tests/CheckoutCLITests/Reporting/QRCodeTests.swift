import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// The approval link's QR code, read back by an independent decoder (zbarimg, Debian zbar-tools): the symbol
/// libqrencode made, and the same symbol after it was drawn as terminal text and parsed back from that text.
@Suite struct QRCodeTests {
    static let link = "http://127.0.0.1:49152/cashapp/approve/GRR_3f9a1c7e52b84d0a?v=2"

    /// A plain PBM image of the modules (with the quiet zone), 4 pixels per module, decoded by zbarimg.
    static func decode(_ code: QRCode, _ directory: String) throws -> String {
        let scale = 4
        let side = (code.width + 2 * QRCode.quietZone) * scale
        var pbm = "P1\n\(side) \(side)\n"
        for y in 0..<side {
            let row = (0..<side).map { x in
                code.isDark(y / scale - QRCode.quietZone, x / scale - QRCode.quietZone) ? "1" : "0"
            }
            pbm += row.joined(separator: " ") + "\n"
        }
        let path = directory + "/code.pbm"
        try pbm.write(toFile: path, atomically: true, encoding: .ascii)
        return try runTool("/usr/bin/zbarimg", ["--quiet", "--raw", path]).output.trimmingCharacters(in: .newlines)
    }

    /// The modules a terminal drawing shows, read back from its characters (the inverse of `terminalLines`).
    static func readBack(_ lines: [String]) -> QRCode? {
        let zone = QRCode.quietZone
        let side = lines.first?.count ?? 0
        let width = side - 2 * zone
        guard width > 0 else { return nil }
        var modules = [Bool](repeating: false, count: width * width)
        for (index, line) in lines.enumerated() {
            for (column, character) in line.enumerated() {
                let (top, bottom): (Bool, Bool) =
                    switch character {
                    case " ": (true, true)
                    case "▀": (false, true)
                    case "▄": (true, false)
                    default: (false, false)
                    }
                for (row, dark) in [(index * 2 - zone, top), (index * 2 + 1 - zone, bottom)]
                where row >= 0 && row < width && column - zone >= 0 && column - zone < width {
                    modules[row * width + column - zone] = dark
                }
            }
        }
        return QRCode(width: width, modules: modules)
    }

    @Test func theSymbolDecodesBackToTheLink() throws {
        let s = try Scratch()
        let code = try #require(QRCode(Self.link))
        #expect(code.width >= 21 && (code.width - 17) % 4 == 0, "a QR version's size: \(code.width)")
        #expect(try Self.decode(code, s.path) == Self.link)
    }

    @Test func theTerminalDrawingReadsBackToTheSameSymbol() throws {
        let s = try Scratch()
        let code = try #require(QRCode(Self.link))
        let lines = code.terminalLines()
        #expect(lines.count == (code.width + 2 * QRCode.quietZone + 1) / 2, "two module rows per line")
        #expect(Set(lines.map(\.count)) == [code.width + 2 * QRCode.quietZone])
        let back = try #require(Self.readBack(lines))
        #expect(back == code)
        #expect(try Self.decode(back, s.path) == Self.link)
    }

    @Test func cashAppPayDrawsTheCodeOnATerminalAndItDecodesToTheLinkItPrints() async throws {
        let s = try Scratch()
        var env = BinaryRunner.environment(home: s.path)
        env["TERM"] = "xterm"
        let (status, terminal) = try await runOnTerminal(
            "cashapp pay --poll-interval 0.05", home: s.path, environment: env)
        #expect(status == 0)
        let shown =
            terminal
            .replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r\u{1B}[2K", with: "\n")
        let link = try #require(shown.firstMatch(of: /request: approve in Cash App: (\S+)/).map { String($0.output.1) })
        let drawing = shown.split(separator: "\n").map(String.init).filter { line in
            !line.isEmpty && line.allSatisfy { "█▀▄ ".contains($0) }
        }
        let back = try #require(Self.readBack(drawing), "a drawing in \(shown)")
        #expect(try Self.decode(back, s.path) == link)
    }

    @Test func offATerminalOnlyTheLinkIsPrinted() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["cashapp", "pay", "--poll-interval", "0.05"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stderr.contains("request: approve in Cash App: http://"))
        #expect(!r.stderr.contains("▀") && !r.stderr.contains("█"), "no drawing in a pipe")
    }
}
