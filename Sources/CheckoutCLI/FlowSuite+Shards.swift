import CheckoutKit
import Foundation

/// `--shard i/n`: which of a suite's runs are one CI job's, the same on every machine.
extension FlowSuite {
    /// `--shard i/n` (1 ≤ i ≤ n), or `auto`: the shard a CI system hands its parallel job (`CISystem`).
    struct Shard: Equatable {
        var index: Int
        var total: Int

        static func parse(_ text: String, environment: [String: String]) throws(Diagnostic) -> Shard {
            if text == "auto" || text.hasPrefix("auto/") {
                var jobTotal: Int?
                if text != "auto" {
                    guard let total = Int(text.dropFirst("auto/".count)), total >= 1 else {
                        throw .usage(
                            "--shard auto/N expects a whole number of shards N ≥ 1, got '\(text)'",
                            hint: "give the Kubernetes Indexed Job's completions count, e.g. --shard auto/4")
                    }
                    jobTotal = total
                }
                return try CISystem.shard(environment: environment, jobTotal: jobTotal)
            }
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let total = Int(parts[1]), total >= 1,
                (1...total).contains(index)
            else {
                throw .usage(
                    "--shard expects i/n with 1 ≤ i ≤ n (e.g. 2/4), auto or auto/N, got '\(text)'",
                    hint:
                        "shard i of n runs one n-th of the runs: give each of n CI jobs its own i, from 1 to n (docs/qa-ci.md, \"CI shards\")"
                )
            }
            return Shard(index: index, total: total)
        }
    }

    /// A CI system that tells each of a job's parallel copies which one it is, in variables of its own. `--shard auto`
    /// reads them all: exactly one may ask for more than one shard (a total of 1 is what a job that is not split says).
    struct CISystem {
        var name: String
        /// The variable holding this copy's index, counted from `firstIndex`.
        var indexVariable: String
        /// The variable holding the number of copies; nil where the system sets none (a Kubernetes Indexed Job, whose
        /// completions count is given as `--shard auto/N`).
        var totalVariable: String?
        var firstIndex: Int

        static let all = [
            CISystem(name: "GitLab", indexVariable: "CI_NODE_INDEX", totalVariable: "CI_NODE_TOTAL", firstIndex: 1),
            CISystem(
                name: "CircleCI", indexVariable: "CIRCLE_NODE_INDEX", totalVariable: "CIRCLE_NODE_TOTAL", firstIndex: 0),
            CISystem(
                name: "Buildkite", indexVariable: "BUILDKITE_PARALLEL_JOB",
                totalVariable: "BUILDKITE_PARALLEL_JOB_COUNT", firstIndex: 0),
            CISystem(
                name: "a Kubernetes Indexed Job", indexVariable: "JOB_COMPLETION_INDEX", totalVariable: nil,
                firstIndex: 0),
        ]

        /// What the variables spell, for a message: `CI_NODE_INDEX=2 CI_NODE_TOTAL=4`.
        func spelled(_ environment: [String: String], jobTotal: Int?) -> String {
            let total =
                totalVariable.map { "\($0)=\(environment[$0] ?? "unset")" }
                ?? "total \(jobTotal.map(String.init) ?? "unset") (auto/N)"
            return "\(indexVariable)=\(environment[indexVariable] ?? "unset") \(total)"
        }

        /// This system's shard, nil when its variables are not set at all (`jobTotal`: the N of `--shard auto/N`).
        func shard(_ environment: [String: String], jobTotal: Int?) throws(Diagnostic) -> Shard? {
            let indexText = environment[indexVariable]
            let totalText = totalVariable.flatMap { environment[$0] }
            if indexText == nil && totalText == nil { return nil }
            // GitLab sets CI_NODE_TOTAL=1 and no index in a job that is not split: the whole suite.
            if indexText == nil && totalText == "1" { return Shard(index: 1, total: 1) }
            let total = totalVariable == nil ? jobTotal : totalText.flatMap { Int($0) }
            guard let total, total >= 1, let index = indexText.flatMap({ Int($0) }), index >= firstIndex,
                index - firstIndex < total
            else {
                let range = "\(firstIndex)-based, \(firstIndex) to total\(firstIndex == 0 ? " - 1" : "")"
                throw .usage(
                    "--shard auto found \(name)'s variables but cannot use them: \(spelled(environment, jobTotal: jobTotal)) (the index is \(range))",
                    hint: totalVariable == nil
                        ? "give the Indexed Job's completions count as --shard auto/N"
                        : "check the job's parallel setting, or give --shard i/n")
            }
            return Shard(index: index - firstIndex + 1, total: total)
        }

        /// The shard the environment's CI system asks for: the one system whose total is above 1, or the whole (1/1)
        /// when each that is there says 1.
        static func shard(environment: [String: String], jobTotal: Int?) throws(Diagnostic) -> Shard {
            var found: [(system: CISystem, shard: Shard)] = []
            for system in all {
                if let shard = try system.shard(environment, jobTotal: jobTotal) { found.append((system, shard)) }
            }
            let split = found.filter { $0.shard.total > 1 }
            if split.count > 1 {
                let named = split.map { "\($0.system.name) (\($0.system.spelled(environment, jobTotal: jobTotal)))" }
                throw .usage(
                    "--shard auto found two CI systems each asking for more than one shard: \(named.joined(separator: " and "))",
                    hint: "unset the variables of the one this job is not run by, or give --shard i/n")
            }
            if let shard = split.first?.shard ?? found.first?.shard { return shard }
            if let jobTotal, jobTotal > 1 {
                throw .usage(
                    "--shard auto/\(jobTotal) reads JOB_COMPLETION_INDEX, which a Kubernetes Indexed Job sets, and it is unset",
                    hint: "run it in an Indexed Job (completionMode: Indexed), or give --shard i/n")
            }
            let variables = all.map(\.indexVariable).joined(separator: ", ")
            throw .usage(
                "--shard auto found no CI system's shard variables (\(variables))",
                hint:
                    "run it in a parallel CI job (GitLab parallel:, CircleCI parallelism, Buildkite parallelism, a Kubernetes Indexed Job with auto/N), or give --shard i/n"
            )
        }
    }

    /// The runs of one shard: every run (a flow and which repetition of that name it is) is ranked by a hash of its
    /// name and that number, and dealt round-robin in rank order — so the shards are disjoint, together complete, sized
    /// within one of each other, and the same on every machine whatever order the files were found in.
    static func runs(_ runs: [Member], shard: Shard?) -> [Member] {
        guard let shard else { return runs }
        return offsets(of: runs.map(\.flow.name), shard: shard).map { runs[$0] }
    }

    /// Which of the runs (flows named `names`, in the suite's order) are shard `shard`'s, as offsets in order.
    static func offsets(of names: [String], shard: Shard) -> [Int] {
        guard shard.total > 1 else { return Array(names.indices) }
        var seen: [String: Int] = [:]
        let keyed = names.enumerated().map { offset, name -> (hash: UInt64, offset: Int) in
            let k = seen[name, default: 0]
            seen[name] = k + 1
            return (fnv1a("\(name)#\(k)"), offset)
        }
        let ranked = keyed.sorted { ($0.hash, $0.offset) < ($1.hash, $1.offset) }
        return ranked.enumerated().filter { $0.offset % shard.total == shard.index - 1 }.map(\.element.offset).sorted()
    }

    /// 64-bit FNV-1a of the UTF-8 bytes: small, and the same everywhere (Swift's own hashing is seeded per process).
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
