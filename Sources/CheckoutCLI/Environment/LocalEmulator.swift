import CheckoutKit
import Foundation
import SandboxEmulator

/// What `--env local` means: every base URL points at the embedded emulator and every credential is the
/// emulator's test credential, so that nothing needs configuring (each emulated provider declares its own).
enum LocalEnvironment {
    static func values(baseURL: String) -> [String: String] { Emulator.localConfiguration(baseURL: baseURL) }
}

/// Where a running `sandbox serve` announces itself, so that `--env local` runs use it instead of an
/// embedded emulator: `$XDG_STATE_HOME/checkout-driver/local/emulator.json` = `{"url", "pid"}`.
enum LocalEmulatorFile {
    struct Entry {
        var url: String
        var pid: Int32
    }

    static func path(processEnvironment: [String: String]) -> String {
        FileIO.directory(of: StateStore.defaultPath(environment: "local", processEnvironment: processEnvironment))
            + "/emulator.json"
    }

    /// The announced emulator, when its process is alive and its port accepts connections (a `sandbox serve`
    /// killed with SIGKILL leaves its file behind, and its pid may by now belong to another process).
    static func running(processEnvironment: [String: String]) -> Entry? {
        guard let entry = announced(processEnvironment: processEnvironment), kill(entry.pid, 0) == 0,
            let port = entry.url.split(separator: ":").last.flatMap({ UInt16($0) }), acceptsConnections(port: port)
        else { return nil }
        return entry
    }

    /// What the file announces, alive or not.
    static func announced(processEnvironment: [String: String]) -> Entry? {
        guard let data = try? FileIO.read(path(processEnvironment: processEnvironment)).get(),
            let json = try? JSON.parse(data), let url = json["url"]?.stringValue, let pid = json["pid"]?.intValue
        else { return nil }
        return Entry(url: url, pid: Int32(pid))
    }

    /// An announcement whose `sandbox serve` is gone (killed with SIGKILL, the machine restarted): removed, and said,
    /// since the commands that would have chained through it now each get an emulator of their own.
    static func withdrawStale(processEnvironment: [String: String]) -> Entry? {
        guard let entry = announced(processEnvironment: processEnvironment),
            running(processEnvironment: processEnvironment) == nil
        else { return nil }
        unlink(path(processEnvironment: processEnvironment))
        return entry
    }

    /// A loopback TCP connect, so a stale announcement is ignored rather than sending every run to a dead port.
    private static func acceptsConnections(port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func announce(url: String, processEnvironment: [String: String]) throws(Diagnostic) {
        let file = path(processEnvironment: processEnvironment)
        try? FileManager.default.createDirectory(
            atPath: FileIO.directory(of: file),
            withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileIO.write(JSON.object(["url": .string(url), "pid": .number(Double(getpid()))]).data, to: file)
    }

    /// Removes the announcement if it is still ours (a later `sandbox serve` may have replaced it).
    static func withdraw(processEnvironment: [String: String]) {
        let file = path(processEnvironment: processEnvironment)
        guard let data = try? FileIO.read(file).get(), let json = try? JSON.parse(data) else { return }
        if json["pid"]?.intValue == Int(getpid()) { unlink(file) }
    }

    static func throwawayStatePath() -> String {
        FileIO.temporaryDirectory + "/checkout-driver-\(getpid())-\(UInt32.random(in: 0...UInt32.max))/state.json"
    }
}
