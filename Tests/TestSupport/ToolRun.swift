import Foundation

/// Runs a tool the tests use as an independent judge (zbarimg, chromium, a shell) to its end: its exit status and what
/// it printed on stdout (and stderr too, with `mergingErrors`). The status is minus the signal if one ended it.
public func runTool(
    _ executable: String, _ arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
    mergingErrors: Bool = false
) throws -> (status: Int32, output: String) {
    let out = Pipe()
    let process = try TestProcess(
        executable, arguments, environment: environment, directory: directory,
        standardOutput: .pipe(out), standardError: mergingErrors ? .pipe(out) : .null)
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.status!, String(decoding: data, as: UTF8.self))
}
