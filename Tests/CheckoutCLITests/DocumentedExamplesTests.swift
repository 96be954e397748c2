import Foundation
import TestSupport
import Testing

/// Every console example of the README and `docs/` runs here and prints what its page shows: each block in a fresh home
/// and working directory, its commands in order (a `sandbox serve … &` serves the rest of its block, as in a shell),
/// standard output and error together as a terminal shows them. On both sides what changes from run to run (times,
/// ports, ids, timestamps) is masked; on the page a line `…` stands for any number of lines and `…` within a line for
/// any text, so that a long answer may be shown in part. A command shown without output must print nothing (`> FILE`
/// takes its output). Not run: a command against a real sandbox (`--env sandbox`), and a block under a line
/// `<!-- not run: why -->`. Usage that is not a transcript goes in a `sh` block.
@Suite struct DocumentedExamplesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    struct Command {
        var words: [String]
        var redirect: String?
        var background: Bool
        var documented: [String]
        var line: Int
    }

    struct Block {
        var page: String
        var line: Int
        var commands: [Command]
    }

    /// The pages' console blocks, each command with the lines shown after it.
    static func blocks() throws -> [Block] {
        let pages =
            ["README.md"]
            + (try FileManager.default.contentsOfDirectory(atPath: repository.path + "/docs"))
            .filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
        var blocks: [Block] = []
        for page in pages {
            let lines = try String(contentsOf: repository.appendingPathComponent(page), encoding: .utf8).components(
                separatedBy: "\n")
            var i = 0
            while i < lines.count {
                guard lines[i] == "```console" else {
                    i += 1
                    continue
                }
                let skipped = lines[max(0, i - 2)..<i].contains { $0.hasPrefix("<!-- not run: ") }
                var block = Block(page: page, line: i + 1, commands: [])
                i += 1
                while i < lines.count, lines[i] != "```" {
                    if lines[i].hasPrefix("$ ") {
                        block.commands.append(try command(lines[i].dropFirst(2), line: i + 1, page: page))
                    } else if !block.commands.isEmpty {
                        block.commands[block.commands.count - 1].documented.append(lines[i])
                    }
                    i += 1
                }
                for k in block.commands.indices {
                    while block.commands[k].documented.last?.isEmpty == true {
                        block.commands[k].documented.removeLast()
                    }
                }
                if !skipped { blocks.append(block) }
            }
        }
        return blocks
    }

    /// A shown command line: its words as a shell splits them (quotes, `#` comments after two spaces), `> FILE`, `&`.
    static func command(_ text: Substring, line: Int, page: String) throws -> Command {
        var text = String(text)
        if let comment = text.range(of: "  #") { text = String(text[..<comment.lowerBound]) }
        text = text.trimmingCharacters(in: .whitespaces)
        var background = false
        if text.hasSuffix("&") {
            background = true
            text = String(text.dropLast()).trimmingCharacters(in: .whitespaces)
        }
        var words: [String] = []
        var word = ""
        var quote: Character?
        var inWord = false
        for c in text {
            if let q = quote {
                if c == q { quote = nil } else { word.append(c) }
            } else if c == "\"" || c == "'" {
                quote = c
                inWord = true
            } else if c == " " {
                if inWord {
                    words.append(word)
                    word = ""
                    inWord = false
                }
            } else {
                word.append(c)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        var redirect: String?
        if let at = words.firstIndex(of: ">"), at + 1 < words.count {
            redirect = words[at + 1]
            words.removeSubrange(at...(at + 1))
        }
        guard words.first == "checkout-driver" else {
            throw Failure("\(page):\(line): an example that is not a checkout-driver command")
        }
        return Command(
            words: Array(words.dropFirst()), redirect: redirect, background: background, documented: [], line: line)
    }

    /// What changes from run to run, made the same on both sides.
    static func masked(_ text: String) -> String {
        let rules: [(String, String)] = [
            (#"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, "<TIME>"),
            (#"127\.0\.0\.1:\d+"#, "127.0.0.1:<PORT>"),
            (#"pid \d+"#, "pid <PID>"),
            (#"\b\d+(\.\d+)? ?(ms|s)\b"#, "<DURATION>"),
            (#"after \d+ polls?"#, "after <N> polls"),
            (#"\b[0-9a-f]{4,}…"#, "<HEX>…"),  // a masked nonce's first digits
            // An id: letters and digits mixed, ten or more (pi_01M8…, ord_93305d0f…, GRR_y0pw…, a base64 transaction
            // id).
            (#"\b(?=[A-Za-z0-9_-]*[0-9])(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{10,}\b"#, "<ID>"),
        ]
        var text = text
        for (pattern, replacement) in rules {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text
    }

    /// Whether the lines shown match the page's: a page line `…` matches any number of lines, `…` within a line any
    /// text.
    static func matches(_ shown: ArraySlice<String>, _ page: ArraySlice<String>) -> Bool {
        guard let first = page.first else { return shown.isEmpty }
        if first.trimmingCharacters(in: .whitespaces) == "…" {
            return (shown.startIndex...shown.endIndex).contains { matches(shown[$0...], page.dropFirst()) }
        }
        guard let line = shown.first, matches(line, first) else { return false }
        return matches(shown.dropFirst(), page.dropFirst())
    }

    static func matches(_ line: String, _ pattern: String) -> Bool {
        guard pattern.contains("…") else { return line == pattern }
        let regex =
            "^"
            + pattern.components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*")
            + "$"
        return line.range(of: regex, options: .regularExpression) != nil
    }

    @Test func everyOfflineExamplePrintsWhatItsPageShows() async throws {
        let blocks = try Self.blocks()
        #expect(blocks.count >= 8, "the pages hold fewer console blocks than expected: \(blocks.count)")
        var checked = 0
        for block in blocks {
            let s = try Scratch()
            var servers: [ServeProcess] = []
            defer { for server in servers { server.stop() } }
            for command in block.commands {
                let place = "\(block.page):\(command.line)"
                if let env = command.words.firstIndex(of: "--env"), command.words.dropFirst(env + 1).first == "sandbox"
                {
                    continue
                }
                if command.background {
                    #expect(
                        command.words.starts(with: ["sandbox", "serve"]),
                        "\(place): only sandbox serve runs in the background")
                    let server = try ServeProcess(home: s.path, arguments: Array(command.words.dropFirst(2)))
                    servers.append(server)
                    #expect(
                        command.documented.isEmpty
                            || Self.matches([Self.masked(server.url)], command.documented.map(Self.masked)[...]),
                        "\(place)")
                    continue
                }
                // Standard error and output as one stream, in the order written, as a terminal shows them.
                let merged = ["/bin/sh", "-c", #"exec "$0" "$@" 2>&1"#]
                let r = try await BinaryRunner.run(
                    command.words, home: s.path, timeout: 60, under: command.redirect == nil ? merged : [])
                if let file = command.redirect {
                    try r.stdout.write(toFile: s.path + "/" + file, atomically: true, encoding: .utf8)
                    continue
                }
                var shown = r.stdout.split(separator: "\n", omittingEmptySubsequences: false).map {
                    Self.masked(String($0))
                }
                if shown.last == "" { shown.removeLast() }
                let expected = command.documented.map(Self.masked)
                #expect(
                    Self.matches(shown[...], expected[...]),
                    "\(place): checkout-driver \(command.words.joined(separator: " ")) printed\n\(shown.joined(separator: "\n"))\nwhere the page shows\n\(expected.joined(separator: "\n"))"
                )
                checked += 1
            }
        }
        #expect(checked >= 12, "only \(checked) examples were compared")
    }

    /// The masks keep what a reader checks: a step's name and status, an amount, a state.
    @Test func theMasksLeaveWhatMatters() {
        #expect(Self.masked("✓ confirm  200  16 ms  (2 requests)") == "✓ confirm  200  <DURATION>  (2 requests)")
        #expect(
            Self.masked("payment_intent pi_01M8RPRR6937WY2SAV51BW5VEB  requires_capture")
                == "payment_intent <ID>  requires_capture")
        #expect(
            Self.masked("total             997.50 SEK  (99750 minor units)")
                == "total             997.50 SEK  (99750 minor units)")
        #expect(
            Self.masked("environment: local (embedded emulator at http://127.0.0.1:37957)")
                == "environment: local (embedded emulator at http://127.0.0.1:<PORT>)")
    }

    @Test func anEllipsisStandsForWhatThePageLeavesOut() {
        #expect(Self.matches(["a", "b", "c", "d"][...], ["a", "…", "d"][...]))
        #expect(Self.matches(["a", "d"][...], ["a", "…", "d"][...]))
        #expect(!Self.matches(["a", "b"][...], ["a", "…", "d"][...]))
        #expect(
            Self.matches(
                ["note: confirm got no answer (POST http://x/confirm)"][...],
                ["note: confirm got … (POST …/confirm)"][...]))
        #expect(!Self.matches(["note: confirm failed"][...], ["note: confirm got …"][...]))
        #expect(!Self.matches(["a", "extra"][...], ["a"][...]))
        #expect(!Self.matches([][...], ["a"][...]))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
