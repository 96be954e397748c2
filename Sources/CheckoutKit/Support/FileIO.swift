import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Files the driver reads and writes (state, tokens, flows, reports), with the system's own reasons on failure.
public enum FileIO {
    /// The system's folder for temporary files (`TMPDIR`, else /tmp), without a trailing slash (Foundation's path has
    /// one only for the root). Read once: Foundation builds its URL anew on every ask, and a batch asked once per run
    /// (more than the rest of starting the run).
    public static let temporaryDirectory: String = {
        let path = FileManager.default.temporaryDirectory.path
        return path == "/" ? "" : path
    }()

    /// The one way the driver writes a file the user pointed it at (`--out`, `--record`, `--junit`, `--session`, …),
    /// as the user means it:
    /// - a symlink is followed, and its target written;
    /// - something that is not a regular file (`/dev/null`, `/dev/stdout`, a FIFO) is written in place, never
    ///   replaced;
    /// - a regular file (or a new one) is replaced atomically: the bytes go to a temporary file in the same directory,
    ///   created with the final mode (never readable by others, not even briefly), flushed, then renamed over the
    ///   target, so a reader sees the old file or the new one, never a part of either. A read-only file is refused,
    ///   not replaced. The temporary file is removed on any error, and on a second Ctrl-C (`removeTemporaryFiles`).
    /// Failures are exit 74 (`EX_IOERR`) with the system's reason: "No space left on device", "Permission denied".
    public static func write(_ bytes: Data, to requested: String, mode: mode_t = 0o600) throws(Diagnostic) {
        let path = resolvingSymlinks(requested)
        var info = stat()
        let exists = stat(path, &info) == 0
        if exists && (info.st_mode & S_IFMT) != S_IFREG {
            try writeInPlace(bytes, to: path, shown: requested, directory: (info.st_mode & S_IFMT) == S_IFDIR)
            return
        }
        // Judged by its mode, not by access(2): root may write anything, but a file nobody may write was made
        // read-only on purpose.
        if exists && info.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0 {
            throw .ioError(
                "cannot write \(requested): it is read-only",
                hint: "make it writable, or point the option at another file")
        }
        let directory = Self.directory(of: path)
        let temp =
            (directory.isEmpty ? "." : directory)
            + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UInt32.random(in: 0...UInt32.max)).tmp"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(requested, errno, hint: "check the directory exists and is writable") }
        temporaryFiles.withLock { _ = $0.insert(temp) }
        defer { temporaryFiles.withLock { _ = $0.remove(temp) } }
        var code: Int32 = 0
        if !writeAll(fd, bytes) || fsync(fd) != 0 { code = errno }
        close(fd)
        if code == 0, rename(temp, path) != 0 { code = errno }
        if code != 0 {
            unlink(temp)
            throw failure(requested, code, hint: "check there is space and the directory is writable")
        }
    }

    /// Appends `bytes` to the regular file at `path` (symlinks already resolved; `shown` is the name the user gave),
    /// which must be `expected` bytes long, and flushes them — `fdatasync`: the bytes and the size that reaches them —
    /// before it returns. False, with nothing written, when the file is not that long (someone wrote it without the
    /// lock): the caller writes it whole instead. On a failure the file is cut back to `expected` bytes, as it was, and
    /// the error is exit 74 as `write`'s. `tear` (a test's fault) writes half the bytes and kills the process.
    static func append(
        _ bytes: [UInt8], to path: String, expected: Int, shown: String, tear: Bool = false
    ) throws(Diagnostic) -> Bool {
        let fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard fd >= 0 else { throw failure(shown, errno, hint: "check the file and its directory are writable") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size == expected else { return false }
        if info.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0 {
            throw .ioError(
                "cannot write \(shown): it is read-only", hint: "make it writable, or point the option at another file")
        }
        if tear {
            _ = writeAll(fd, Data(bytes.prefix(bytes.count / 2)))
            kill(getpid(), SIGKILL)
        }
        if writeAll(fd, Data(bytes)) && fdatasync(fd) == 0 { return true }
        let code = errno
        _ = ftruncate(fd, off_t(expected))
        throw failure(shown, code, hint: "check there is space and the directory is writable")
    }

    /// Whether `write` could write `requested` (`option` names it in the message), checked before a run sends anything:
    /// a directory, a read-only file or a missing directory is exit 74 now rather than after the money moved. Nothing
    /// is created.
    public static func checkWritable(_ requested: String, option: String) throws(Diagnostic) {
        let path = resolvingSymlinks(requested)  // the target, as `write` writes it
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR {
                throw .ioError(
                    "\(option) \(requested) is a directory",
                    hint:
                        "give a file path, e.g. \(requested)/\(option == "--junit" ? "report.xml" : option == "--record" ? "run.har" : "state.json")"
                )
            }
            if (info.st_mode & S_IFMT) == S_IFREG && info.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0 {
                throw .ioError(
                    "cannot write \(option) \(requested): it is read-only",
                    hint: "make it writable, or point \(option) at another file")
            }
            return
        }
        let directory = Self.directory(of: path)
        let parent = directory.isEmpty ? "." : directory
        guard stat(parent, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw .ioError(
                "cannot write \(option) \(requested): the directory \(directory) does not exist",
                hint: "create it first, or point \(option) elsewhere")
        }
        guard access(parent, W_OK) == 0 else {
            throw .ioError(
                "cannot write \(option) \(requested): the directory \(directory) is not writable",
                hint: "point \(option) at a directory you can write")
        }
    }

    /// Removes the temporary files of writes under way (the process is about to exit without finishing them).
    /// Whether two paths name one file (symlinks and `.`/`..` resolved; a file that does not exist yet by its path).
    public static func samePath(_ a: String, _ b: String) -> Bool {
        func canonical(_ p: String) -> String { URL(fileURLWithPath: resolvingSymlinks(p)).standardizedFileURL.path }
        return canonical(a) == canonical(b)
    }

    /// A directory that output files go in (`--record DIR/`): made (owner-only) when it does not exist yet, as long as
    /// its parent does.
    public static func ensureDirectory(_ requested: String, option: String) throws(Diagnostic) {
        var info = stat()
        if stat(requested, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw .ioError(
                    "\(option) \(requested) is not a directory",
                    hint: "a path ending in / names a directory; drop the / to write one file")
            }
            guard access(requested, W_OK) == 0 else {
                throw .ioError(
                    "cannot write in \(option) \(requested): the directory is not writable",
                    hint: "point \(option) at a directory you can write")
            }
            return
        }
        guard mkdir(requested, 0o700) == 0 else {
            throw .ioError(
                "cannot make the directory \(option) \(requested): \(String(cString: strerror(errno)))",
                hint: "create its parent first, or point \(option) elsewhere")
        }
    }

    public static func removeTemporaryFiles() {
        for temp in temporaryFiles.withLock({ $0 }) { unlink(temp) }
    }

    private static let temporaryFiles = Mutex<Set<String>>([])

    /// A device, a FIFO or a terminal: opened and written as it is (no temporary file, no rename, no truncation).
    private static func writeInPlace(_ bytes: Data, to path: String, shown: String, directory: Bool) throws(Diagnostic)
    {
        if directory { throw .ioError("cannot write \(shown): it is a directory", hint: "name a file inside it") }
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw failure(shown, errno, hint: "check that it can be written") }
        defer { close(fd) }
        guard writeAll(fd, bytes) else { throw failure(shown, errno, hint: "check that it can take the output") }
    }

    /// The directory part of `path`: "" for a bare name, "/" for "/x", "a/b" for "a/b/c" (and for "a/b/c/").
    /// Foundation's `NSString.deletingLastPathComponent` is not used: on Linux it crashes on a one-character path
    /// (`--out -`, `--junit a`).
    public static func directory(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1 && path.hasSuffix("/") { path = path.dropLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Follows a chain of symlinks to the path that will really be written (which may not exist yet).
    static func resolvingSymlinks(_ path: String) -> String {
        var current = path
        for _ in 0..<40 {  // as the kernel does, give up on loops
            // lstat first: a path that is no link (the usual case, on every state-file write) costs one system call,
            // where Foundation's reading of a link throws, and builds an error, for each one that is not.
            var info = stat()
            guard lstat(current, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK,
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: current)
            else { return current }
            let parent = directory(of: current)
            current = target.hasPrefix("/") || parent.isEmpty ? target : parent + "/" + target
        }
        return current
    }

    static func failure(_ path: String, _ code: Int32, hint: String) -> Diagnostic {
        .ioError(
            "cannot write \(path): \(String(cString: strerror(code)))",
            hint: code == ENOSPC ? "free some space, or write elsewhere" : hint)
    }

    /// A whole file's bytes, or the system's reason it could not be read ("No such file or directory").
    public static func read(_ path: String) -> Result<Data, ReadError> {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ReadError(code: errno)) }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return .failure(ReadError(code: errno)) }
            if n == 0 { return .success(data) }
            data.append(contentsOf: buffer[0..<n])
        }
    }

    public struct ReadError: Error, CustomStringConvertible {
        /// The system's error number (`ENOENT`: there is no such file).
        public let code: Int32
        public var reason: String { String(cString: strerror(code)) }
        public var description: String { reason }
    }

    /// The path of `command` as a shell would run it: itself when it holds a `/`, else the first executable of that
    /// name on `path` (`$PATH`'s form); nil when there is none.
    static func executable(_ command: String, path: String) -> String? {
        if command.contains("/") { return access(command, X_OK) == 0 ? command : nil }
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(command)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Writes every byte to a file descriptor, resuming after signals and short writes. False on failure, with
    /// `errno` saying why.
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

extension FileIO {
    /// A file the user names that must hold a JSON object: unreadable, not JSON or not an object is exit 65 naming
    /// `what` (`--fields file x.json`) and the problem; `example` shows what belongs there.
    public static func readJSONObject(
        _ path: String, what: String, example: String = "a JSON object"
    ) throws(Diagnostic) -> JSON.Object {
        let json: JSON
        switch read(path) {
        case .success(let data):
            do { json = try JSON.parse(data) } catch {
                throw .data("\(what) \(path) is not JSON: \(error)", hint: example)
            }
        case .failure(let error): throw .data("cannot read \(what) \(path): \(error.reason)", hint: "check the path")
        }
        guard let object = json.objectValue else {
            throw .data("\(what) \(path) holds \(json.kindName), not an object", hint: example)
        }
        return object
    }
}
