import Foundation
import Synchronization

/// The chain of a state file held by one command at a time: single steps continue one checkout, so two at once would
/// interleave it (`StateStore.holdChain`, an `flock` on a file beside the state file).
extension StateStore {
    /// Holds the chain of this state file for one command: single steps continue one checkout, so two of them at once
    /// would interleave it. Waits up to `wait` seconds for another holder, then refuses with its pid and command.
    /// Released when the returned lock is (or the process ends).
    ///
    /// `finishingRun`: the hold a whole run takes to hand its sections to the chain (`finishRun`). A process's runs
    /// finishing at once share one hold — their finishes are written one after another by the group commit anyway, and
    /// the chain is kept from other commands, not from the process's own runs — where each would otherwise find the
    /// lock taken by its sibling and sleep a polling interval (a 200-run Bahn batch at `--parallel 8` slept 0.49 s so).
    public func holdChain(wait: Double, command: String, finishingRun: Bool = false) throws(Diagnostic) -> ChainLock? {
        guard isRegularFile else { return nil }
        if finishingRun, let shared = Self.finishingHolds.withLock({ $0[target]?.lock }) { return shared }
        let lockPath = target + ".chain.lock"
        var fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        // The state file's folder is made on first use only: a batch takes the chain once per run.
        let directory = FileIO.directory(of: target)
        if fd < 0, errno == ENOENT, !directory.isEmpty {
            try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else {
            throw .ioError(
                "cannot open \(lockPath): \(String(cString: strerror(errno)))",
                hint: "pass --session FILE somewhere writable")
        }
        let end = Date().addingTimeInterval(wait)
        var pause: UInt32 = 1_000
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                close(fd)
                throw .ioError(
                    "cannot lock \(lockPath): \(String(cString: strerror(errno)))",
                    hint: "pass --session FILE on a local file system")
            }
            if Date() >= end {
                let holder = ((try? FileIO.read(lockPath).get()).map { String(decoding: $0, as: UTF8.self) } ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                close(fd)
                throw .unavailable(
                    "state file \(path) is in use by another command (\(holder.isEmpty ? "unknown" : holder)) and stayed so for \(Int(wait)) s",
                    hint:
                        "wait for it to end and run this again, or give this command a state file of its own with --session FILE"
                )
            }
            // Another command's hold is seldom longer than a write: looked at again soon, then less often.
            usleep(pause)
            pause = min(pause * 2, 50_000)
        }
        let mark = Data("pid \(getpid()): \(command)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = mark.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        let lock = ChainLock(fd: fd)
        if finishingRun { Self.finishingHolds.withLock { $0[target] = WeakChainLock(lock: lock) } }
        return lock
    }

    /// The hold the process's finishing runs share, by state file (weak: it is let go with its last holder).
    fileprivate static let finishingHolds = Mutex<[String: WeakChainLock]>([:])
}

private struct WeakChainLock {
    weak var lock: ChainLock?
}

/// The chain of a state file, held by one command (see `StateStore.holdChain`).
public final class ChainLock: Sendable {
    private let fd: Int32

    init(fd: Int32) { self.fd = fd }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
