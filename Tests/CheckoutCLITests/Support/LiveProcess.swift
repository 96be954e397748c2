import Foundation

/// The built binary running in the background with its output collected as it arrives, for tests that act while
/// it runs: send a signal once it is polling, start clients once a listener is up.
final class LiveProcess: @unchecked Sendable {
    // @unchecked: `out` and `err` are only touched under `lock`; the readability handlers run on Foundation's queues.
    enum Stream { case stdout, stderr }

    let process = Process()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    init(_ arguments: [String], home: String, environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: BinaryRunner.binary)
        process.arguments = arguments
        process.environment = BinaryRunner.environment(home: home, extra: environment)
        process.currentDirectoryURL = URL(fileURLWithPath: home)
        process.standardInput = FileHandle.nullDevice
        let outPipe = Pipe(), errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        collect(outPipe, .stdout)
        collect(errPipe, .stderr)
        try process.run()
    }

    private func collect(_ pipe: Pipe, _ stream: Stream) {
        pipe.fileHandleForReading.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil; return }
            lock.withLock {
                switch stream {
                case .stdout: out.append(chunk)
                case .stderr: err.append(chunk)
                }
            }
        }
    }

    var stdout: String { lock.withLock { String(decoding: out, as: UTF8.self) } }
    var stderr: String { lock.withLock { String(decoding: err, as: UTF8.self) } }

    /// Waits until `marker` has been printed on `stream`; false if it was not within `timeout` seconds.
    func waitFor(_ marker: String, on stream: Stream = .stdout, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (stream == .stdout ? stdout : stderr).contains(marker) { return true }
            usleep(10_000)
        }
        return false
    }

    func send(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// The exit status once it exits within `seconds`; nil when it did not (it is then stopped for good).
    func exitStatus(within seconds: Double) -> Int32? {
        guard process.exits(within: seconds) else {
            process.stop()
            return nil
        }
        usleep(50_000)  // let the readability handlers drain the last bytes
        return process.terminationStatus
    }
}

/// Polls `condition` every 10 ms for up to `timeout` seconds; true once it holds.
func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
