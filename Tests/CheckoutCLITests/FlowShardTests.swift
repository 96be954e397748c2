import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `--shard i/n` and `flow junit-merge`: a suite spread over CI machines, and their reports as one.
@Suite struct FlowShardTests {
    /// Each run's key as the partition sees it: its flow's name and which repetition of that name it is.
    static func keys(_ names: [String]) -> [String] {
        var seen: [String: Int] = [:]
        return names.map { name in
            let k = seen[name, default: 0]
            seen[name] = k + 1
            return "\(name)#\(k)"
        }
    }

    static func shard(_ names: [String], _ index: Int, of total: Int) -> Set<String> {
        let keys = Self.keys(names)
        return Set(FlowSuite.offsets(of: names, shard: .init(index: index, total: total)).map { keys[$0] })
    }

    /// Over many suite sizes and shard counts: disjoint, complete, within one of each other in size, and the same
    /// whatever order the flows were found in.
    @Test func thePartitionIsDisjointCompleteBalancedAndStable() {
        var generator = SplitMix64(seed: 42)
        for size in 0...40 {
            // Names repeat, as --repeat makes them.
            let names = (0..<size).map { "flow-\($0 % max(1, size / 3))" }
            let allKeys = Set(Self.keys(names))
            for total in 1...6 {
                let shards = (1...total).map { Self.shard(names, $0, of: total) }
                #expect(shards.reduce(0) { $0 + $1.count } == size, "size \(size), \(total) shards: disjoint")
                #expect(shards.reduce(Set()) { $0.union($1) } == allKeys, "size \(size), \(total) shards: complete")
                let sizes = shards.map(\.count)
                #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1, "size \(size), \(total) shards: \(sizes)")
                // Another order on disk gives every shard the same runs.
                var shuffled = names
                shuffled.shuffle(using: &generator)
                #expect(
                    (1...total).map { Self.shard(shuffled, $0, of: total) } == shards,
                    "size \(size), \(total) shards: stable")
            }
        }
    }

    @Test func theHashIsFNV1a() {
        // Published FNV-1a 64 test vectors.
        #expect(FlowSuite.fnv1a("") == 0xcbf2_9ce4_8422_2325)
        #expect(FlowSuite.fnv1a("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(FlowSuite.fnv1a("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test func shardOptionAndAuto() throws {
        #expect(try FlowSuite.Shard.parse("2/4", environment: [:]) == .init(index: 2, total: 4))
        for bad in ["0/4", "5/4", "2", "a/b", "2/0", "1/2/3", "auto/0", "auto/x", "autox"] {
            #expect(throws: Diagnostic.self) { try FlowSuite.Shard.parse(bad, environment: [:]) }
        }
    }

    /// Each CI system's variables, 0- or 1-based, give the same shard i of n.
    @Test(arguments: [
        ("auto", ["CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "5"], 3, 5),  // GitLab: 1-based
        ("auto", ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "5"], 1, 5),
        ("auto", ["CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "4"], 1, 4),  // CircleCI: 0-based
        ("auto", ["CIRCLE_NODE_INDEX": "3", "CIRCLE_NODE_TOTAL": "4"], 4, 4),
        ("auto", ["BUILDKITE_PARALLEL_JOB": "2", "BUILDKITE_PARALLEL_JOB_COUNT": "3"], 3, 3),  // Buildkite: 0-based
        ("auto/6", ["JOB_COMPLETION_INDEX": "0"], 1, 6),  // Kubernetes: 0-based, the total given
        ("auto/6", ["JOB_COMPLETION_INDEX": "5"], 6, 6),
        // A system that says 1 does not count against one that splits.
        ("auto", ["CI_NODE_TOTAL": "1", "CIRCLE_NODE_INDEX": "1", "CIRCLE_NODE_TOTAL": "2"], 2, 2),
        (
            "auto",
            [
                "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1", "BUILDKITE_PARALLEL_JOB": "0",
                "BUILDKITE_PARALLEL_JOB_COUNT": "2",
            ], 1, 2
        ),
        ("auto/3", ["JOB_COMPLETION_INDEX": "1", "CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "1"], 2, 3),
        // Only systems that say 1: the whole.
        ("auto", ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "1"], 1, 1),
        ("auto", ["CI_NODE_TOTAL": "1"], 1, 1),  // GitLab's job that is not split
        ("auto/1", ["JOB_COMPLETION_INDEX": "0"], 1, 1),
    ])
    func autoReadsEachCISystem(text: String, environment: [String: String], index: Int, total: Int) throws {
        #expect(try FlowSuite.Shard.parse(text, environment: environment) == .init(index: index, total: total))
    }

    /// What `--shard auto` cannot use is refused with the variables named.
    @Test(arguments: [
        ("auto", [:], ["found no CI system", "CI_NODE_INDEX", "CIRCLE_NODE_INDEX", "JOB_COMPLETION_INDEX"]),
        ("auto", ["CI_NODE_TOTAL": "4"], ["GitLab", "CI_NODE_INDEX=unset CI_NODE_TOTAL=4"]),
        ("auto", ["CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "4"], ["GitLab", "1-based"]),  // GitLab counts from 1
        ("auto", ["CIRCLE_NODE_INDEX": "4", "CIRCLE_NODE_TOTAL": "4"], ["CircleCI", "0-based"]),
        ("auto", ["BUILDKITE_PARALLEL_JOB": "x", "BUILDKITE_PARALLEL_JOB_COUNT": "2"], ["Buildkite"]),
        ("auto", ["JOB_COMPLETION_INDEX": "2"], ["Kubernetes", "auto/N"]),
        ("auto/4", [:], ["JOB_COMPLETION_INDEX", "unset"]),
        ("auto/4", ["JOB_COMPLETION_INDEX": "4"], ["Kubernetes", "0-based"]),
        (
            "auto", ["CIRCLE_NODE_INDEX": "9223372036854775807", "CIRCLE_NODE_TOTAL": "9223372036854775807"],
            ["CircleCI"]
        ),
        (
            "auto", ["CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2", "CIRCLE_NODE_INDEX": "0", "CIRCLE_NODE_TOTAL": "3"],
            [
                "two CI systems", "GitLab (CI_NODE_INDEX=1 CI_NODE_TOTAL=2)",
                "CircleCI (CIRCLE_NODE_INDEX=0 CIRCLE_NODE_TOTAL=3)",
            ]
        ),
        (
            "auto/2",
            ["JOB_COMPLETION_INDEX": "0", "BUILDKITE_PARALLEL_JOB": "1", "BUILDKITE_PARALLEL_JOB_COUNT": "2"],
            ["two CI systems", "Buildkite", "Kubernetes"]
        ),
    ])
    func autoRefusesWhatItCannotUse(text: String, environment: [String: String], named: [String]) {
        do {
            let shard = try FlowSuite.Shard.parse(text, environment: environment)
            Issue.record("\(text) with \(environment) was taken as \(shard)")
        } catch {
            #expect(error.code == .usage)
            for part in named { #expect(error.message.contains(part), "\(error.message)") }
        }
    }

    /// Three shards of every built-in flow, run apart and merged, are the whole suite once.
    @Test func shardsRunApartAndMergeIntoTheWholeSuite() async throws {
        let s = try Scratch()
        var files: [String] = []
        for i in 1...3 {
            let file = s.path + "/shard-\(i).xml"
            let r = try await BinaryRunner.run(
                ["flow", "run", "--all", "--shard", "\(i)/3", "--junit", file], home: s.path)
            #expect(r.status == 0, "\(r.all)")
            files.append(file)
        }
        let auto = try await BinaryRunner.run(
            ["flow", "run", "--all", "--shard", "auto", "--junit", s.path + "/auto.xml"], home: s.path,
            environment: ["CI_NODE_INDEX": "2", "CI_NODE_TOTAL": "3"])
        #expect(auto.status == 0, "\(auto.all)")
        func names(_ file: String) throws -> [String] {
            try XMLDocument(contentsOf: URL(fileURLWithPath: file)).nodes(forXPath: "/testsuites/testsuite")
                .compactMap { ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue }
        }
        #expect(try names(s.path + "/auto.xml") == names(files[1]))

        let merged = try await BinaryRunner.run(["flow", "junit-merge", s.path + "/all.xml"] + files, home: s.path)
        #expect(merged.status == 0, "\(merged.all)")
        let all = try names(s.path + "/all.xml")
        #expect(all.sorted() == BuiltinFlows.all.map(\.name).sorted())
        let root = try #require(try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/all.xml")).rootElement())
        let steps = try files.reduce(0) { sum, file in
            sum + (try XMLDocument(contentsOf: URL(fileURLWithPath: file)).nodes(forXPath: "//testcase").count)
        }
        #expect(root.attribute(forName: "tests")?.stringValue == String(steps))
        #expect(root.attribute(forName: "failures")?.stringValue == "0")
    }

    /// A Kubernetes Indexed Job's copy and CircleCI's run the same runs as `--shard i/n` does; two systems that each
    /// split are refused before anything runs.
    @Test func autoShardsFromOtherCISystemsEndToEnd() async throws {
        let s = try Scratch()
        func testcases(_ shard: String, _ environment: [String: String], _ name: String) async throws -> [String] {
            let file = s.path + "/\(name).xml"
            let r = try await BinaryRunner.run(
                ["flow", "run", "emulator-orders", "--repeat", "7", "--shard", shard, "--junit", file], home: s.path,
                environment: environment)
            #expect(r.status == 0, "\(r.all)")
            return try XMLDocument(contentsOf: URL(fileURLWithPath: file)).nodes(forXPath: "//testcase")
                .compactMap { ($0 as? XMLElement)?.attribute(forName: "classname")?.stringValue }
        }
        let third = try await testcases("3/3", [:], "plain")
        #expect(!third.isEmpty)
        #expect(try await testcases("auto/3", ["JOB_COMPLETION_INDEX": "2"], "kubernetes") == third)
        #expect(try await testcases("auto", ["CIRCLE_NODE_INDEX": "2", "CIRCLE_NODE_TOTAL": "3"], "circle") == third)
        #expect(try await testcases("1/3", [:], "first") != third)

        let both = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--shard", "auto"], home: s.path,
            environment: [
                "CI_NODE_INDEX": "1", "CI_NODE_TOTAL": "2", "BUILDKITE_PARALLEL_JOB": "0",
                "BUILDKITE_PARALLEL_JOB_COUNT": "2",
            ])
        #expect(both.status == 64)
        #expect(
            both.stderr.contains("two CI systems") && both.stderr.contains("GitLab")
                && both.stderr.contains("Buildkite"))
        #expect(!both.stdout.contains("passed"))
    }

    @Test func junitMergeSumsAndRefusesWhatIsNotJUnit() async throws {
        let s = try Scratch()
        let a = try s.write(
            "a.xml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <testsuites name="checkout-driver" tests="2" failures="1" time="0.500">
              <testsuite name="one" tests="2" failures="1" errors="0" skipped="0" time="0.500" timestamp="2026-12-02T05:00:00Z">
                <testcase classname="one" name="a" time="0.100"/>
                <testcase classname="one" name="b" time="0.400">
                  <failure message="boom" type="StepFailed">boom</failure>
                </testcase>
              </testsuite>
            </testsuites>
            """)
        let b = try s.write(
            "b.xml",
            """
            <testsuites><testsuite name="two" tests="3" failures="0" errors="1" time="1.25"><testcase name="c"/></testsuite>
            <testsuite name="empty" tests="0"/></testsuites>
            """)
        let r = try await BinaryRunner.run(["flow", "junit-merge", s.path + "/out.xml", a, b], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let xml = try XMLDocument(contentsOf: URL(fileURLWithPath: s.path + "/out.xml"))
        let root = try #require(xml.rootElement())
        #expect(root.attribute(forName: "tests")?.stringValue == "5")
        #expect(root.attribute(forName: "failures")?.stringValue == "1")
        #expect(root.attribute(forName: "errors")?.stringValue == "1")
        #expect(root.attribute(forName: "time")?.stringValue == "1.750")
        #expect(
            try xml.nodes(forXPath: "/testsuites/testsuite").compactMap {
                ($0 as? XMLElement)?.attribute(forName: "name")?.stringValue
            }
                == ["one", "two", "empty"])
        #expect(try xml.nodes(forXPath: "//failure").count == 1)

        let itself = try await BinaryRunner.run(["flow", "junit-merge", a, a, b], home: s.path)
        #expect(itself.status == 64)
        #expect(itself.stderr.contains("is both the merged report and one of the reports to merge"))

        let notJUnit = try s.write("c.xml", "<html>nope</html>")
        let refused = try await BinaryRunner.run(
            ["flow", "junit-merge", s.path + "/out2.xml", a, notJUnit], home: s.path)
        #expect(refused.status == 65)
        #expect(refused.stderr.contains("c.xml is not a JUnit report"))
        #expect(!FileManager.default.fileExists(atPath: s.path + "/out2.xml"))
        let missing = try await BinaryRunner.run(
            ["flow", "junit-merge", s.path + "/out3.xml", s.path + "/nope.xml"], home: s.path)
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("cannot read"))
    }
}
