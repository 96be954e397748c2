import Foundation

/// One process, told apart from a later one that reuses its pid by when it started (field 22 of `/proc/<pid>/stat`,
/// clock ticks since boot): what an outcome in flight is kept under, so that another process can tell a call still
/// going from one whose process died with it.
public struct ProcessIdentity: Sendable, Hashable {
    public let pid: Int32
    public let started: UInt64

    /// This process.
    public static let current: ProcessIdentity = of(pid: getpid()) ?? ProcessIdentity(pid: getpid(), started: 0)

    /// The process running now under `pid`, if any.
    static func of(pid: Int32) -> ProcessIdentity? {
        guard case .success(let data) = FileIO.read("/proc/\(pid)/stat") else { return nil }
        // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so the fields are counted from its last ')'.
        guard let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = data[data.index(after: close)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 19, let started = UInt64(String(decoding: fields[19], as: UTF8.self)) else { return nil }
        return ProcessIdentity(pid: pid, started: started)
    }

    /// Whether this process is still running.
    var isRunning: Bool { self == .current || Self.of(pid: pid) == self }

    var json: JSON { ["pid": JSON(Int(pid)), "started": .string(String(started))] }

    init(pid: Int32, started: UInt64) {
        self.pid = pid
        self.started = started
    }

    init?(_ json: JSON?) {
        guard let pid = json?["pid"]?.intValue, let pid32 = Int32(exactly: pid),
            let started = json?["started"]?.stringValue.flatMap({ UInt64($0) })
        else { return nil }
        self.init(pid: pid32, started: started)
    }
}
