import Foundation

/// `checkout-driver sandbox serve` as a background process with its own home: once started it is serving
/// and has announced itself, so `--env local` runs in the same home use it.
final class ServeProcess {
    let process = Process()
    let url: String

    init(home: String, arguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: BinaryRunner.binary)
        process.arguments = ["sandbox", "serve"] + arguments
        process.environment = BinaryRunner.environment(home: home)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line of stdout is the base URL; the announcement is written right after it.
        guard let line = out.fileHandleForReading.readLine(containing: "http://") else {
            process.terminate()
            throw Failure("sandbox serve printed no URL")
        }
        url = line
        if !arguments.contains("--no-announce") {
            let announcement = home + "/state/checkout-driver/local/emulator.json"
            for _ in 0..<500 where !FileManager.default.fileExists(atPath: announcement) { usleep(10_000) }
            // Without it, --env local runs would quietly use an emulator of their own: fail loudly instead.
            guard FileManager.default.fileExists(atPath: announcement) else {
                process.terminate()
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
