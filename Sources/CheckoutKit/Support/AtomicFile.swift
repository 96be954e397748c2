import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one way the driver writes a file that matters (state, token, report): into a temporary file in
/// the same directory, created with the final mode (never readable by others, not even briefly), flushed,
/// then renamed over the target. A reader sees the old file or the new one, never a part of either.
public enum AtomicFile {
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
