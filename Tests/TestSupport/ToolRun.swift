import Foundation

/// Runs a tool the tests use as an independent judge (zbarimg, chromium, a shell) to its end: its exit status and what
/// it printed on stdout (and stderr too, with `mergingErrors`).
public func runTool(_ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
                    mergingErrors: Bool = false) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = mergingErrors ? out : FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
