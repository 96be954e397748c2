import Foundation
import TestSupport

/// `checkout-driver sandbox serve` as a background process with its own home: once started it is serving
/// and has announced itself, so `--env local` runs in the same home use it.
final class ServeProcess {
    let process: TestProcess
    let url: String

    init(home: String, arguments: [String] = []) throws {
        let out = Pipe()
        process = try TestProcess(
            BinaryRunner.binary, ["sandbox", "serve"] + arguments, environment: BinaryRunner.environment(home: home),
            standardOutput: .pipe(out))
        // The first line of stdout is the base URL; the announcement is written right after it.
        guard let line = out.fileHandleForReading.readLine(containing: "http://") else {
            process.stop()
            throw Failure("sandbox serve printed no URL")
        }
        url = line
        if !arguments.contains("--no-announce") {
            let announcement = home + "/state/checkout-driver/local/emulator.json"
            for _ in 0..<500 where !FileManager.default.fileExists(atPath: announcement) { usleep(10_000) }
            // Without it, --env local runs would quietly use an emulator of their own: fail loudly instead.
            guard FileManager.default.fileExists(atPath: announcement) else {
                process.stop()
                throw Failure("sandbox serve did not announce itself")
            }
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A test's cleanup must never hang the suite: SIGTERM, then SIGKILL after 5 s.
    func stop() { process.stop() }
}
