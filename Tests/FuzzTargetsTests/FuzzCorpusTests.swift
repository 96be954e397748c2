import Foundation
import FuzzTargets
import Testing

/// The starting corpora and every crasher the fuzzers ever found (`Fuzz/corpus/<target>/`,
/// `Fuzz/regressions/<target>/`), run through their targets in the ordinary build: a reader that crashes, hangs or
/// breaks its rule on one of them fails here, without a fuzzer.
@Suite struct FuzzCorpusTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fuzz").path

    static func inputs(_ folder: String, _ target: FuzzTarget) -> [String] {
        let directory = "\(root)/\(folder)/\(target.rawValue)"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().map { "\(directory)/\($0)" }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everySeedAndEveryRegressionRunsClean(_ target: FuzzTarget) throws {
        let seeds = Self.inputs("corpus", target)
        // A target with no seeds would be fuzzed from nothing: every one has a corpus in the repository.
        #expect(seeds.count >= 3, "Fuzz/corpus/\(target.rawValue) has \(seeds.count) seeds")
        for path in seeds + Self.inputs("regressions", target) {
            let bytes = try #require(FileManager.default.contents(atPath: path), "cannot read \(path)")
            target.run(Array(bytes))
        }
    }
}
