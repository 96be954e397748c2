import Foundation

/// A state file as the tool reads it, read apart from the tool: the document, then each record appended after it
/// (0x1E, one line of JSON, LF) folded in, a last record cut short left out (docs/architecture.md, "The state file's
/// journal"). A batch still running, or killed, leaves records; a file at rest is plain JSON. Empty when there is none.
public func stateFileObject(_ path: String) throws -> [String: Any] {
    guard FileManager.default.fileExists(atPath: path) else { return [:] }
    let parts = try Data(contentsOf: URL(fileURLWithPath: path)).split(
        separator: 0x1E, omittingEmptySubsequences: false)
    guard var state = try JSONSerialization.jsonObject(with: Data(parts[0])) as? [String: Any] else {
        throw StateFileError(reason: "the document is not an object")
    }
    for (index, part) in parts.enumerated().dropFirst() {
        guard part.last == UInt8(ascii: "\n"),
            let record = try? JSONSerialization.jsonObject(with: Data(part)) as? [String: Any]
        else {
            if index == parts.count - 1 { break }
            throw StateFileError(reason: "record \(index) is unreadable")
        }
        for section in record["unset"] as? [String] ?? [] { state[section] = nil }
        for (section, value) in record["set"] as? [String: Any] ?? [:] { state[section] = value }
        for (section, change) in record["in"] as? [String: [String: Any]] ?? [:] {
            var members = state[section] as? [String: Any] ?? [:]
            for member in change["unset"] as? [String] ?? [] { members[member] = nil }
            for (member, value) in change["set"] as? [String: Any] ?? [:] { members[member] = value }
            state[section] = members
        }
    }
    return state
}

public struct StateFileError: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "state file: \(reason)" }
}
