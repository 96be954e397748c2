import CSpawn
import Glibc

/// A program started the way a shell starts one: every signal at its default disposition and none blocked, only
/// standard input, output and error open.
///
/// Foundation's `Process` passes on what the parent has set: a program that handles SIGINT and SIGTERM through
/// dispatch sources ignores both (and SIGPIPE, to see EPIPE), and its children would ignore them too — an
/// `xdg-open` or `openssl s_server` that SIGTERM cannot stop. It also passes on descriptors opened without
/// close-on-exec, such as a lock file's, which would keep the lock held for as long as a browser runs.
public struct ChildProcess: Sendable, Hashable {
    public let pid: pid_t

    /// Where one of the three standard streams goes.
    public enum Stream: Sendable {
        /// The parent's own.
        case inherit
        /// /dev/null.
        case null
        /// This descriptor of the parent's (a pipe's end, an open file); the parent keeps its copy.
        case descriptor(Int32)
    }

    /// How a child ended.
    public enum Termination: Sendable, Hashable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The status as a shell reports it: the exit status, or 128 + the signal.
        public var shellStatus: Int32 {
            switch self {
            case .exited(let status): status
            case .signaled(let sig): 128 + sig
            }
        }

        public var description: String {
            switch self {
            case .exited(let status): "exited with \(status)"
            case .signaled(let sig): "killed by signal \(sig)"
            }
        }
    }

    /// Why a program could not be started: the program and the system's reason.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let executable: String
        public let errno: Int32
        /// The system's words for `errno`: "Permission denied".
        public var reason: String { String(cString: strerror(errno)) }
        public var description: String { "cannot start \(executable): \(reason)" }
    }

    /// Starts `executable` (a path; nothing is looked up on PATH) with `arguments` after its name, `environment`
    /// (the parent's when nil) and `directory` as its working directory (the parent's when nil).
    public static func start(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        directory: String? = nil, standardInput: Stream = .inherit, standardOutput: Stream = .inherit,
        standardError: Stream = .inherit
    ) throws(Failure) -> ChildProcess {
        // Each setting call fails only for want of memory or for a descriptor that is not open.
        func check(_ result: Int32) throws(Failure) {
            guard result == 0 else { throw Failure(executable: executable, errno: result) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (stream, target) in [
            (standardInput, STDIN_FILENO), (standardOutput, STDOUT_FILENO), (standardError, STDERR_FILENO),
        ] {
            switch stream {
            case .inherit: break
            case .null:
                try check(
                    posix_spawn_file_actions_addopen(
                        &actions, target, "/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY, 0))
            case .descriptor(let fd):
                try check(posix_spawn_file_actions_adddup2(&actions, fd, target))
            }
        }
        // After the dup2s: nothing else the parent has open reaches the child.
        try check(cspawn_addclosefrom(&actions, 3))
        if let directory { try check(cspawn_addchdir(&actions, directory)) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        // Signals 1 to 64 by their bits: glibc's sigfillset leaves out its two internal ones (32 and 33), and its
        // posix_spawn would then leave them ignored in the child, where a shell-started program has nothing ignored.
        withUnsafeMutableBytes(of: &all) { $0.storeBytes(of: UInt64.max, toByteOffset: 0, as: UInt64.self) }
        try check(posix_spawnattr_setsigmask(&attributes, &none))
        try check(posix_spawnattr_setsigdefault(&attributes, &all))
        try check(posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid = pid_t()
        try check(
            envp.map { posix_spawn(&pid, executable, &actions, &attributes, argv, $0) }
                ?? posix_spawn(&pid, executable, &actions, &attributes, argv, environ))
        return ChildProcess(pid: pid)
    }

    /// Sends `sig`. Only while the child is not yet reaped (before `wait()` returns) is its pid surely its own.
    public func signal(_ sig: Int32) { kill(pid, sig) }

    /// Blocks until the child ends, leaving it unreaped: until `wait()`, its pid stays its own, so a signal sent in
    /// the meantime cannot reach another process that was given the same number.
    public func waitForEnd() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
    }

    /// Blocks until the child ends and reaps it; nil when there is nothing to reap (it was reaped already, or SIGCHLD
    /// is ignored and the system reaped it). A reaped pid may belong to another process next.
    public func wait() -> Termination? {
        var status: Int32 = 0
        while true {
            if waitpid(pid, &status, 0) == pid { return Self.termination(status) }
            if errno != EINTR { return nil }
        }
    }

    private static func termination(_ status: Int32) -> Termination {
        // The <sys/wait.h> macros, which Swift does not import: the low 7 bits are the signal, 0 for an exit.
        let sig = status & 0x7f
        return sig == 0 ? .exited((status >> 8) & 0xff) : .signaled(sig)
    }
}
