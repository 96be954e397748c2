import Foundation

/// Runs the binary on a pseudo-terminal (through `script`, so that its stdout and stderr are terminals) with
/// `environment`; returns its exit status and everything the terminal showed.
func runOnTerminal(_ arguments: String, home: String, environment: [String: String]) async throws -> (status: Int32, shown: String) {
    let output = home + "/terminal-\(UUID().uuidString.prefix(8)).txt"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qec", "\(BinaryRunner.binary) \(arguments)", output]
    process.environment = environment
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
        process.terminationHandler = { _ in done.resume() }
        do { try process.run() } catch { done.resume() }
    }
    return (process.terminationStatus, try String(contentsOfFile: output, encoding: .utf8))
}
