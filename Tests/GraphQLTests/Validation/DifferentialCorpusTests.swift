import Foundation
import Testing

@testable import GraphQL

/// The differential corpus: documents written by hand (Corpus/cases.graphql) and hundreds made at random over three
/// schemas (this project's harness, Centra's and Braintree's published ones), each judged valid or invalid by this
/// engine. The tests check the hand-written verdicts and that the random ones are a real mix; they then export every
/// document with the engine's verdict to .build/graphql-differential, where Scripts/graphql-differential has
/// graphql-core (an independent implementation) judge the same documents, and fails on any disagreement.
@Suite struct DifferentialCorpusTests {
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The schemas by the name the corpus uses, as SDL files relative to the repository.
    static let schemaFiles = [
        "harness": "Tests/GraphQLTests/Validation/Corpus/harness.graphql",
        "centra": "Sources/SandboxEmulator/Centra/Schema/storefront_api_schema.graphql",
        "braintree": "Sources/SandboxEmulator/Braintree/Schema/schema.graphql",
    ]
    /// Random documents per schema (each schema's sequence has a seed of its own, made from its name).
    static let generated = ["harness": 400, "centra": 200, "braintree": 200]

    struct Case {
        var schema: String
        var expectValid: Bool?
        var text: String
    }

    static func schema(_ name: String) throws -> Schema {
        try Schema(sdl: String(contentsOf: repoRoot.appendingPathComponent(schemaFiles[name]!), encoding: .utf8))
    }

    static func handWritten() throws -> [Case] {
        let text = try String(
            contentsOf: HarnessSchema.directory.appendingPathComponent("cases.graphql"), encoding: .utf8)
        var cases: [Case] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#> ") {
                let words = line.dropFirst(3).split(separator: " ")
                cases.append(Case(schema: String(words[0]), expectValid: words[1] == "valid", text: ""))
            } else if !cases.isEmpty {
                cases[cases.count - 1].text += line + "\n"
            }
        }
        return cases
    }

    /// Valid when it parses and (unless only its syntax is judged) no rule objects; the messages otherwise.
    static func verdict(_ c: Case, schemas: [String: Schema]) -> (valid: Bool, errors: [String]) {
        let document: Document
        do { document = try Parser.parse(c.text) } catch { return (false, [error.message]) }
        guard c.schema != "parse", let schema = schemas[c.schema] else { return (true, []) }
        let errors = Validator.validate(document, against: schema).map(\.message)
        return (errors.isEmpty, errors)
    }

    @Test func theEngineGivesEveryHandWrittenDocumentItsVerdictAndTheCorpusIsExported() throws {
        var schemas: [String: Schema] = [:]
        for name in Self.schemaFiles.keys { schemas[name] = try Self.schema(name) }
        let written = try Self.handWritten()
        #expect(written.count >= 100, "\(written.count)")
        for c in written {
            let (valid, errors) = Self.verdict(c, schemas: schemas)
            #expect(valid == c.expectValid, "\(c.schema): \(c.text) → \(errors)")
        }

        var corpus = written
        for (name, count) in Self.generated.sorted(by: { $0.key < $1.key }) {
            var generator = DocumentGenerator(
                schema: schemas[name]!, seed: UInt64(name.utf8.reduce(0) { $0 &* 31 &+ UInt64($1) }),
                mistakes: name == "harness" ? 1 : 0.5)
            let made = (0..<count).map { _ in Case(schema: name, expectValid: nil, text: generator.document()) }
            // A real mix: a generator whose documents were nearly all valid, or nearly all invalid, would test little.
            let valid = made.filter { Self.verdict($0, schemas: schemas).valid }.count
            #expect(valid >= count / 4 && valid <= count * 3 / 4, "\(name): \(valid) of \(count) valid")
            corpus += made
        }
        #expect(corpus.count >= 800, "\(corpus.count)")

        // The export Scripts/graphql-differential reads: one file per document, and a manifest with each verdict.
        let directory = Self.repoRoot.appendingPathComponent(".build/graphql-differential")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var manifest: [[String: Any]] = []
        for (index, c) in corpus.enumerated() {
            let file = String(format: "%04d-%@.graphql", index, c.schema)
            try Data(c.text.utf8).write(to: directory.appendingPathComponent(file))
            let (valid, errors) = Self.verdict(c, schemas: schemas)
            manifest.append([
                "file": file, "schema": c.schema, "valid": valid, "errors": errors, "handWritten": c.expectValid != nil,
            ])
        }
        let document: [String: Any] = ["schemas": Self.schemaFiles, "documents": manifest]
        try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys])
            .write(to: directory.appendingPathComponent("manifest.json"))
    }

    /// The generator is deterministic: the same seed makes the same documents, so a disagreement can be reproduced.
    @Test func theSameSeedMakesTheSameDocuments() throws {
        let schema = try Self.schema("harness")
        var a = DocumentGenerator(schema: schema, seed: 7)
        var b = DocumentGenerator(schema: schema, seed: 7)
        let first = (0..<20).map { _ in a.document() }
        #expect(first == (0..<20).map { _ in b.document() })
        var c = DocumentGenerator(schema: schema, seed: 8)
        #expect(first != (0..<20).map { _ in c.document() })
    }
}
