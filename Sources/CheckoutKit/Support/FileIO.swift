import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files the driver reads and writes (state, tokens, flows, reports), with the system's own reasons on failure.
public enum FileIO {
    /// The one way the driver writes a file that matters: into a temporary file in the same directory, created
    /// with the final mode (never readable by others, not even briefly), flushed, then renamed over the target.
    /// A reader sees the old file or the new one, never a part of either.
    public static func write(_ bytes: Data, to path: String, mode: mode_t = 0o600) throws(Diagnostic) {
        let directory = (path as NSString).deletingLastPathComponent
        let temp = (directory.isEmpty ? "." : directory)
            + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        func failure() -> Diagnostic {
            .data("cannot write \(path): \(String(cString: strerror(errno)))", hint: "check the directory exists and is writable")
        }
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure() }
        let written = writeAll(fd, bytes) && fsync(fd) == 0
        close(fd)
        guard written, rename(temp, path) == 0 else {
            let error = failure()
            unlink(temp)
            throw error
        }
    }

    /// A whole file's bytes, or the system's reason it could not be read ("No such file or directory").
    public static func read(_ path: String) -> Result<Data, ReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadError(reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return .failure(ReadError(reason: String(cString: strerror(errno)))) }
            if n == 0 { return .success(data) }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    public struct ReadError: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { reason }
    }

    /// Writes every byte to a file descriptor, resuming after signals and short writes.
    @discardableResult
    public static func writeAll(_ fd: Int32, _ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0, errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }
}
