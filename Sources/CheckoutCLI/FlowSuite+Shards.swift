import CheckoutKit
import Foundation

/// `--shard i/n`: which of a suite's runs are one CI job's, the same on every machine.
extension FlowSuite {
    /// `--shard i/n` (1 ≤ i ≤ n) or `auto`, which reads `CI_NODE_INDEX` and `CI_NODE_TOTAL` as GitLab's `parallel:`
    /// sets them (1-based).
    struct Shard: Equatable {
        var index: Int
        var total: Int

        static func parse(_ text: String, environment: [String: String]) throws(Diagnostic) -> Shard {
            if text == "auto" {
                guard let index = environment["CI_NODE_INDEX"].flatMap({ Int($0) }),
                    let total = environment["CI_NODE_TOTAL"].flatMap({ Int($0) }),
                    total >= 1, (1...total).contains(index)
                else {
                    throw .usage(
                        "--shard auto reads CI_NODE_INDEX and CI_NODE_TOTAL (1-based, as GitLab's parallel: sets them), and they are \(environment["CI_NODE_INDEX"] ?? "unset") and \(environment["CI_NODE_TOTAL"] ?? "unset")",
                        hint: "set both, or give --shard i/n, e.g. --shard 2/4")
                }
                return Shard(index: index, total: total)
            }
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, let index = Int(parts[0]), let total = Int(parts[1]), total >= 1,
                (1...total).contains(index)
            else {
                throw .usage(
                    "--shard expects i/n with 1 ≤ i ≤ n (e.g. 2/4) or auto, got '\(text)'",
                    hint:
                        "shard i of n runs one n-th of the runs: give each of n CI jobs its own i, from 1 to n (docs/qa-ci.md, \"CI shards\")"
                )
            }
            return Shard(index: index, total: total)
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
