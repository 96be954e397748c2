import Foundation
import Synchronization
import TestSupport

/// The built binary running in the background with its output collected as it arrives, for tests that act while
/// it runs: send a signal once it is polling, start clients once a listener is up. Letting go of it stops the
/// process (its `TestProcess` does), whether the test passed or not.
final class LiveProcess: Sendable {
    enum Stream: String { case stdout, stderr }

    let process: TestProcess
    private let printed: Printed

    /// What it printed so far: the reader threads hold this, not the `LiveProcess`, so they do not keep it alive.
    private final class Printed: Sendable {
        struct State {
            var out = Data()
            var err = Data()
            /// Streams that reached their end (the process closed them, usually by exiting).
            var ended: Set<Stream> = []
        }
        let state = Mutex(State())
    }

    init(_ arguments: [String], home: String, environment: [String: String] = [:]) throws {
        let outPipe = Pipe()
        let errPipe = Pipe()
        process = try TestProcess(
            BinaryRunner.binary, arguments, environment: BinaryRunner.environment(home: home, extra: environment),
            directory: home, standardOutput: .pipe(outPipe), standardError: .pipe(errPipe))
        printed = Printed()
        Self.collect(outPipe, .stdout, into: printed)
        Self.collect(errPipe, .stderr, into: printed)
    }

    /// A thread of its own per stream, blocking in read(2) until the end: no dispatch sources involved (tearing
    /// those down from their own handler has crashed libdispatch here).
    private static func collect(_ pipe: Pipe, _ stream: Stream, into printed: Printed) {
        let handle = pipe.fileHandleForReading
        Thread {
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                printed.state.withLock { s in
                    switch stream {
                    case .stdout: s.out.append(contentsOf: buffer[0..<n])
                    case .stderr: s.err.append(contentsOf: buffer[0..<n])
                    }
                }
            }
            printed.state.withLock { _ = $0.ended.insert(stream) }
        }.start()
    }

    var stdout: String { printed.state.withLock { String(decoding: $0.out, as: UTF8.self) } }
    var stderr: String { printed.state.withLock { String(decoding: $0.err, as: UTF8.self) } }

    /// Waits until `marker` has been printed on `stream`; false if it was not within `timeout` seconds.
    func waitFor(_ marker: String, on stream: Stream = .stdout, timeout: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if (stream == .stdout ? stdout : stderr).contains(marker) { return true }
            usleep(10_000)
        }
        return false
    }

    func send(_ sig: Int32) { process.signal(sig) }

    /// The exit status once it exits within `seconds` (minus the signal if one ended it: a driver killed by SIGINT
    /// is not one that exited with 130), with everything it printed collected; nil when it did not exit (it is then
    /// stopped for good).
    func exitStatus(within seconds: Double) -> Int32? {
        guard process.exits(within: seconds) else {
            process.stop()
            return nil
        }
        _ = eventually(timeout: 5) { printed.state.withLock { $0.ended.count == 2 } }
        return process.status
    }
}
