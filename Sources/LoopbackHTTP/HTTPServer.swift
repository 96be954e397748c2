import Glibc  // Linux only (see docs/architecture.md, "Constraints")
import Dispatch
import Foundation
import Synchronization

/// A small HTTP/1.1 server on blocking POSIX sockets: one thread per connection, a synchronous handler.
///
/// Thread-per-connection keeps the handler a plain function (the emulator's handlers may sleep to inject latency)
/// and keeps blocking I/O off Swift concurrency's cooperative pool.
public final class HTTPServer: Sendable {
    public let port: UInt16
    public let host: String
    public let limits: ServerLimits
    let handler: HTTPHandler
    private let listenFD: Int32

    private struct State {
        var started = false
        var stopping = false
        /// Open connection sockets, so that shutdown() can wake their threads, each with its idle mark: at the
        /// connection cap the longest idle one is closed to make room, so idle keep-alive sockets cannot lock other
        /// clients out.
        var connections: [Int32: IdleMark] = [:]
        /// Connections closed to make room whose threads have not finished yet.
        var evicting: Set<Int32> = []
    }
    private let state = Mutex(State())
    /// Entered by the accept thread and every connection thread; shutdown() waits on it (a join).
    private let threads = DispatchGroup()
    /// Left once shutdown() finished, so that any number of callers can wait for it.
    private let finished = DispatchGroup()
    /// Only the first shutdown() call does the work; later calls wait for it.
    private let shutdownClaimed = Atomic<Bool>(false)

    public var baseURL: String { "http://\(host):\(port)" }

    /// Binds and listens immediately (so the port is known and a busy port fails here); `start()` begins accepting.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, limits: ServerLimits = .init(),
                handler: @escaping HTTPHandler) throws {
        // A peer that goes away mid-write must not kill the process; send() also passes MSG_NOSIGNAL.
        signal(SIGPIPE, SIG_IGN)
        let address = host == "localhost" ? "127.0.0.1" : host
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else {
            throw HTTPServerError("cannot listen on host \"\(host)\": expected an IPv4 address such as 127.0.0.1")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if bound != 0 {
            let code = errno
            close(fd)
            switch code {
            case EADDRINUSE: throw HTTPServerError("port \(port) is already in use on \(host)")
            case EACCES: throw HTTPServerError("permission denied to listen on port \(port)")
            default: throw HTTPServerError("cannot bind \(host):\(port): \(String(cString: strerror(code)))")
            }
        }
        guard listen(fd, 1024) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw HTTPServerError("cannot listen on \(host):\(port): \(message)")
        }
        // Port 0 asks the kernel for an ephemeral port: read back which one we got.
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.listenFD = fd
        self.port = UInt16(bigEndian: actual.sin_port)
        self.host = host
        self.limits = limits
        self.handler = handler
        finished.enter()
    }

    /// Starts the accept loop on its own thread and returns immediately. Calling it again does nothing.
    public func start() {
        let go = state.withLock { s -> Bool in
            guard !s.started, !s.stopping else { return false }
            s.started = true
            return true
        }
        guard go else { return }
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        thread.name = "http-accept-\(port)"
        thread.start()
    }

    /// Stops accepting, closes the listener and every open connection, and waits for all threads. Idempotent, and
    /// safe to call from any thread (including a signal source); concurrent callers all return after it completed.
    public func shutdown() {
        if shutdownClaimed.exchange(true, ordering: .acquiringAndReleasing) {
            finished.wait()
            return
        }
        state.withLock { s in
            s.stopping = true
            // SHUT_RDWR wakes a thread blocked in accept/poll/recv/send; the fd itself is closed by its owner.
            // Doing it under the lock means no fd in the set can have been closed and reused meanwhile.
            Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
            for fd in s.connections.keys { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        threads.wait()
        close(listenFD)
        finished.leave()
    }

    /// Blocks the caller until shutdown() completed.
    public func waitUntilShutdown() {
        finished.wait()
    }

    deinit {
        // A server dropped without shutdown() must not leak its listening socket.
        if !shutdownClaimed.load(ordering: .acquiring) { close(listenFD) }
    }

    // MARK: - Accepting

    private func acceptLoop() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.withLock({ $0.stopping }) { return }
                if errno == EMFILE || errno == ENFILE { usleep(10_000); continue }  // out of fds: back off, retry
                return
            }
            // Register under the lock so that a concurrent shutdown() either sees this fd or we see `stopping`.
            let mark = IdleMark()
            let verdict = state.withLock { s -> Int in
                if s.stopping { return 0 }
                if s.connections.count - s.evicting.count >= limits.maxConnections {
                    let idle = s.connections.compactMap { fd, mark -> (Int32, Int64)? in
                        let since = mark.since.load(ordering: .acquiring)
                        return since > 0 && !s.evicting.contains(fd) ? (fd, since) : nil
                    }
                    guard let oldest = idle.min(by: { $0.1 < $1.1 })?.0 else { return 1 }
                    Glibc.shutdown(oldest, Int32(SHUT_RDWR))
                    s.evicting.insert(oldest)
                }
                s.connections[fd] = mark
                return 2
            }
            switch verdict {
            case 0:
                close(fd)
                return
            case 1:
                // Over the limit: a tiny 503 so the client knows why, then close. No thread is spent on it.
                let reply = Array("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
            default:
                var one: Int32 = 1
                // Responses are written in one send; without NODELAY small writes could wait for delayed ACKs.
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                // A client that stops reading must not pin a thread in send() forever.
                var tv = timeval(tv_sec: max(1, Int(limits.idleTimeout)), tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
                threads.enter()
                let thread = Thread { [self] in
                    let connection = Connection(fd: fd, server: self, idle: mark)
                    connection.run()
                    threads.leave()
                }
                thread.start()
            }
        }
    }

    /// Serves one socket already connected (one end of a socketpair, an inherited socket) on the calling thread, until
    /// the peer is done or the connection must close: the same reading, request limits and replies as an accepted
    /// connection, with no thread of its own (what the fuzzer drives the parser through). The connection cap and the
    /// socket options the accept loop sets (send timeout, no delay) are the caller's. Closed when it returns.
    public func serve(connected fd: Int32) {
        let mark = IdleMark()
        state.withLock { $0.connections[fd] = mark }
        Connection(fd: fd, server: self, idle: mark).run()
    }

    /// Called by a connection thread just before it closes its socket.
    func forget(_ fd: Int32, _ closeIt: () -> Void) {
        // Close under the lock so that shutdown() never calls shutdown(2) on a recycled fd number.
        state.withLock { s in
            s.connections[fd] = nil
            s.evicting.remove(fd)
            closeIt()
        }
    }
}

/// When a connection began waiting for its next request (milliseconds of a monotonic clock, 0 while it serves one).
/// Its own thread writes it without the server's lock — a lock taken twice per request by every connection costs
/// most of the server's throughput under load (Linux's contended mutexes sleep in the kernel) — and the accept
/// thread reads it, under the lock, only at the connection cap.
final class IdleMark: Sendable {
    let since = Atomic<Int64>(0)

    func set(idle: Bool, at seconds: Double) {
        since.store(idle ? max(1, Int64(seconds * 1000)) : 0, ordering: .releasing)
    }
}

/// Installs SIGINT/SIGTERM handlers that run `action` (once per signal) instead of killing the process.
/// The sources are kept alive for the life of the process.
public func onTerminationSignals(_ action: @escaping @Sendable () -> Void) {
    for sig in [SIGINT, SIGTERM] {
        // The default disposition would terminate the process before the dispatch source sees the signal.
        signal(sig, SIG_IGN)
        // Created inside the lock so the (non-Sendable) source never leaves the protected list.
        signalSources.withLock { sources in
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler(handler: action)
            source.resume()
            sources.append(source)
        }
    }
}

/// On SIGINT/SIGTERM, shut the servers down cleanly (their `waitUntilShutdown()` callers then return).
public func installShutdownOnSignals(_ servers: [HTTPServer]) {
    onTerminationSignals { for server in servers { server.shutdown() } }
}

public func installShutdownOnSignals(_ servers: HTTPServer...) {
    installShutdownOnSignals(servers)
}

/// Dispatch sources are cancelled when released, so installed ones are retained here for the process's life.
private let signalSources = Mutex<[any DispatchSourceSignal]>([])
