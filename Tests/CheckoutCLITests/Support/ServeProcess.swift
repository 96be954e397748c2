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
        var buffer = Data()
        while !buffer.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        url = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        let announcement = home + "/state/checkout-driver/local/emulator.json"
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: announcement) { usleep(10_000) }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}
