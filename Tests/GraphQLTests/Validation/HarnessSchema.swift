import Foundation

@testable import GraphQL

/// The validation tests' own schema (Corpus/harness.graphql): interfaces, unions, fields that share a name with
/// different types, and all three root types.
enum HarnessSchema {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Corpus")

    static let sdl: String = {
        do { return try String(contentsOf: directory.appendingPathComponent("harness.graphql"), encoding: .utf8) } catch
        { fatalError("\(error)") }
    }()

    static let schema: Schema = {
        do { return try Schema(sdl: sdl) } catch { fatalError("\(error)") }
    }()

    static func validate(_ query: String) throws -> [String] {
        Validator.validate(try Parser.parse(query), against: schema).map(\.message)
    }
}
