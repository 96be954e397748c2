import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The state file that chains separate invocations (captured ids, idempotency keys, spent tokens).
///
/// Every change is read-modify-write under an exclusive advisory lock (`flock` on a sibling `.lock`
/// file, so that the rename below never swaps the locked inode away), and lands atomically: written to a
/// temporary file in the same directory, flushed, renamed over the old one. Mode 0600. A file that
/// does not parse is an error that names it — never silently reset, since it may hold the only record of
/// an idempotency key.
public struct StateStore: Sendable {
    public let path: String
    let redactor: Redactor?

    public init(path: String, redactor: Redactor? = nil) {
        self.path = path
        self.redactor = redactor
    }

    /// `$XDG_STATE_HOME/checkout-driver/<env>/state.json` (XDG's default `~/.local/state`).
    public static func defaultPath(environment: String, processEnvironment: [String: String]) -> String {
        let base = processEnvironment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? ((processEnvironment["HOME"] ?? NSHomeDirectory()) + "/.local/state")
        return "\(base)/checkout-driver/\(environment)/state.json"
    }

    /// The current document (an empty object when the file does not exist yet).
    public func read() throws(Diagnostic) -> JSON {
        try withLock(exclusive: false) { () throws(Diagnostic) -> JSON in try load() }
    }

    /// Applies `change` to the document and writes the result, all under the lock.
    @discardableResult
    public func update<T>(_ change: (inout JSON) throws(Diagnostic) -> T) throws(Diagnostic) -> T {
        try withLock(exclusive: true) { () throws(Diagnostic) -> T in
            var document = try load()
            let result = try change(&document)
            try write(document)
            return result
        }
    }

    /// Adds values captured by a flow to the `captures` section (an object; `${state.captures.<name>}` in later runs).
    public func recordCaptures(_ captures: [String: JSON]) throws(Diagnostic) {
        try update { (doc: inout JSON) throws(Diagnostic) in
            var merged = try self.captures(in: doc)
            for (name, value) in captures { merged[name] = value }
            doc = Self.capturesSection.setting(.object(merged), in: doc)
        }
    }

    /// The `captures` section of a state document, checked: exit 65 naming the path when it is not an object.
    func captures(in document: JSON) throws(Diagnostic) -> [String: JSON] {
        var values: [String: JSON] = [:]
        for (name, field) in try StateField(document["captures"], at: Self.capturesSection, in: path).members() { values[name] = field.value }
        return values
    }

    private static let capturesSection = JSONPath(components: [.key("captures")])

    private func load() throws(Diagnostic) -> JSON {
        // `--session /dev/null` (a device, a FIFO) is a state that is never read back: reading /dev/full or a FIFO
        // would never end.
        guard FileManager.default.fileExists(atPath: path), isRegularFile else { return .object([:]) }
        let data: Data
        switch FileIO.read(path) {
        case .success(let bytes): data = bytes
        case .failure(let error): throw .data("cannot read state file \(path): \(error.reason)", hint: "check its permissions")
        }
        guard let json = try? JSON.parse(data), case .object = json else {
            throw .data("state file \(path) is corrupt (not a JSON object)",
                        hint: "inspect it, then move it aside or delete it to start afresh (it may hold idempotency keys you still need)")
        }
        return json
    }

    /// Where the state file keeps a credential the next invocation must send: Centra's shopper session token (per
    /// protocols/centra.md), and the Afterpay checkout token and its signed JWT that Cash App's validate and confirm
    /// take. The only things the redactor leaves as they are, since carrying them between invocations is what the
    /// file (mode 0600) is for. They appear in no other output.
    static let sessionCredentialPaths = [
        JSONPath(components: [.key("centra"), .key("session")]),
        CashAppState.root.appending("token"),
        CashAppState.root.appending("jwt"),
        // Sent as the customer request's redirect_url; Afterpay may build it with the checkout token in it.
        CashAppState.root.appending("redirectUri"),
    ]

    private func write(_ document: JSON) throws(Diagnostic) {
        // The state file is an output like any other: the one redactor gets the last word, but for session credentials.
        var safe = redactor?.json(document) ?? document
        for path in Self.sessionCredentialPaths {
            if let value = path.evaluate(document) { safe = path.setting(value, in: safe) }
        }
        try FileIO.write(Data((safe.serialized(pretty: true) + "\n").utf8), to: path)
    }

    /// Whether the state file is (or will be) a regular file: `/dev/null` or a FIFO is written in place, unlocked.
    private var isRegularFile: Bool {
        var info = stat()
        return stat(FileIO.resolvingSymlinks(path), &info) != 0 || (info.st_mode & S_IFMT) == S_IFREG
    }

    private func withLock<T>(exclusive: Bool, _ body: () throws(Diagnostic) -> T) throws(Diagnostic) -> T {
        guard isRegularFile else { return try body() }
        // The lock sits beside the file really written, so two symlinks to one state file share it.
        let target = FileIO.resolvingSymlinks(path)
        let directory = (target as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw .ioError("cannot create the state directory \(directory): \(error.localizedDescription)",
                               hint: "pass --session FILE somewhere writable")
            }
        }
        let fd = open(target + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw .ioError("cannot open \(target).lock: \(String(cString: strerror(errno)))", hint: "pass --session FILE somewhere writable")
        }
        defer { close(fd) }
        while flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0 {
            if errno != EINTR {
                throw .ioError("cannot lock \(path): \(String(cString: strerror(errno)))", hint: "pass --session FILE on a local file system")
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}
