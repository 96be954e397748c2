import CheckoutKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Standard output and standard error, behind one lock so that reporters writing from different
/// places never interleave half lines. Everything written here has already been redacted.
final class Console: @unchecked Sendable {
    // @unchecked: all mutable state (the progress line) is guarded by `lock`.
    static let shared = Console()

    private let lock = NSLock()
    private var progressShown = false
    /// Why writing to standard output failed (a full disk, a read-only file), if it did: the command then exits 74.
    private var stdoutFailure: String?
    /// Standard output's reader closed the pipe (`… | head -1`): nothing more is written there, and the command ends
    /// quietly with 141, as a Unix tool that SIGPIPE ends.
    private var readerGone = false
    /// What a command that serves until stopped (`sandbox serve`, `bahn listen`) does when the reader goes: stop.
    private var onReaderGone: [@Sendable () -> Void] = []
    /// A JSON document (or JSON lines) describing the run's outcome went to stdout: an error then needs no second one.
    private var outcomeWritten = false
    let stderrIsTerminal = isatty(2) == 1
    /// A terminal that understands cursor control: not `TERM=dumb` (an editor's shell, a CI log viewer).
    let stderrTakesCursorControl = isatty(2) == 1 && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    let stdoutIsTerminal = isatty(1) == 1
    /// Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org).
    let color: Bool

    init() {
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        color = isatty(1) == 1 && !noColor && ProcessInfo.processInfo.environment["TERM"] != "dumb"
    }

    func out(_ line: String) {
        lock.withLock {
            clearProgressLocked()
            write(1, line + "\n")
        }
    }

    /// Bytes for standard output exactly as they are (a token), with no newline added.
    func outBytes(_ bytes: Data) {
        lock.withLock {
            clearProgressLocked()
            writeOut(bytes)
        }
    }

    /// Why standard output could not be written, once a write failed.
    var outputFailure: String? { lock.withLock { stdoutFailure } }

    /// Whether standard output's reader closed the pipe.
    var stdoutReaderGone: Bool { lock.withLock { readerGone } }

    /// Runs `action` when standard output's reader closes the pipe (at once, if it already has).
    func whenReaderGone(_ action: @escaping @Sendable () -> Void) {
        let gone = lock.withLock { () -> Bool in
            if !readerGone { onReaderGone.append(action) }
            return readerGone
        }
        if gone { action() }
    }

    /// Writes a JSON line or document that carries the run's outcome (its error included, when it failed).
    func outOutcome(_ line: String) {
        out(line)
        lock.withLock { outcomeWritten = true }
    }

    var wroteOutcome: Bool { lock.withLock { outcomeWritten } }

    func err(_ line: String) {
        lock.withLock {
            clearProgressLocked()
            write(2, line + "\n")
        }
    }

    /// A transient status line on a terminal's stderr, replaced by the next line written. Made only when shown: a
    /// batch's line after each run, formatted for a stderr that is not a terminal, cost more than reading its amount.
    func progress(_ text: @autoclosure () -> String) {
        guard stderrTakesCursorControl else { return }
        lock.withLock {
            write(2, "\r\u{1B}[2K" + text())
            progressShown = true
        }
    }

    private func clearProgressLocked() {
        if progressShown {
            write(2, "\r\u{1B}[2K")
            progressShown = false
        }
    }

    private func write(_ fd: Int32, _ text: String) {
        if fd == 1 { writeOut(Data(text.utf8)) } else { FileIO.writeAll(fd, Data(text.utf8)) }
    }

    /// Caller holds the lock. After one failure nothing more is tried: the first reason is the one to report. A reader
    /// that closed the pipe is no failure: the command stops writing, and a server stops serving.
    private func writeOut(_ bytes: Data) {
        guard stdoutFailure == nil, !readerGone else { return }
        guard FileIO.writeAll(1, bytes) else {
            guard errno == EPIPE else {
                stdoutFailure = String(cString: strerror(errno))
                return
            }
            readerGone = true
            let actions = onReaderGone
            onReaderGone = []
            DispatchQueue.global().async { for action in actions { action() } }
            return
        }
    }

    func paint(_ text: String, _ code: String) -> String { color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
}
