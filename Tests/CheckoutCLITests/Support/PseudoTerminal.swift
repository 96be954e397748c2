import Foundation
import TestSupport

/// Runs the binary on a pseudo-terminal (through `script`, so that its stdout and stderr are terminals) with
/// `environment`; returns its exit status and everything the terminal showed.
func runOnTerminal(
    _ arguments: String, home: String, environment: [String: String]
) async throws -> (status: Int32, shown: String) {
    let output = home + "/terminal-\(UUID().uuidString.prefix(8)).txt"
    let process = try TestProcess(
        "/usr/bin/script", ["-qec", "\(BinaryRunner.binary) \(arguments)", output], environment: environment)
    await process.exited()
    return (process.status!, try String(contentsOfFile: output, encoding: .utf8))
}
