import Foundation

/// A temporary directory for one test, removed when the value goes.
public final class Scratch {
    public let path: String

    public init() throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("cd-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    public var url: URL { URL(fileURLWithPath: path) }

    /// Writes `text` to `name` inside it (folders made as needed) and returns the file's path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let file = path + "/" + name
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return file
    }

    public func read(_ name: String) throws -> String {
        try String(contentsOfFile: path + "/" + name, encoding: .utf8)
    }
}

/// A fresh directory under the system temp dir, for a test that removes it itself.
public func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "checkout-driver-tests-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
