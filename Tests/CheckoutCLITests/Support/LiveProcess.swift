import Foundation
import TestSupport

/// The built binary running in the background with its output collected as it arrives, for tests that act while
/// it runs: send a signal once it is polling, start clients once a listener is up.
final class LiveProcess: @unchecked Sendable {
    // @unchecked: `out`, `err` and `ended` are only touched under `lock`, from the two reader threads and the test.
    enum Stream { case stdout, stderr }

    let process = Process()
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()
    /// Streams that reached their end (the process closed them, usually by exiting).
    private var ended: Set<String> = []

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

    /// A thread of its own per stream, blocking in read(2) until the end: no dispatch sources involved (tearing
    /// those down from their own handler has crashed libdispatch here).
    private func collect(_ pipe: Pipe, _ stream: Stream) {
        let handle = pipe.fileHandleForReading
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                lock.withLock {
                    switch stream {
                    case .stdout: out.append(contentsOf: buffer[0..<n])
                    case .stderr: err.append(contentsOf: buffer[0..<n])
                    }
                }
            }
            lock.withLock { _ = ended.insert("\(stream)") }
        }.start()
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

    /// The exit status once it exits within `seconds`, with everything it printed collected; nil when it did not
    /// exit (it is then stopped for good).
    func exitStatus(within seconds: Double) -> Int32? {
        guard process.exits(within: seconds) else {
            process.stop()
            return nil
        }
        _ = eventually(timeout: 5) { lock.withLock { ended.count == 2 } }
        return process.terminationStatus
    }
}

