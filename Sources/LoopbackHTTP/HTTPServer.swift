import CEpoll
import Dispatch
import Foundation
import Glibc  // Linux only (see docs/architecture.md, "Constraints")
import Synchronization

/// A small HTTP/1.1 server on POSIX sockets: a few worker threads over one `epoll` set, a synchronous handler.
///
/// The handler stays a plain function (the emulator's handlers may sleep to inject latency), run on the worker that
/// read the request; a handler that blocks costs one worker, and the pool starts another when none is left waiting
/// (`WorkerPool`). An idle keep-alive connection costs no thread, and blocking I/O stays off Swift concurrency's
/// cooperative pool.
public final class HTTPServer: Sendable {
    public let port: UInt16
    public let host: String
    public let limits: ServerLimits
    let handler: HTTPHandler
    private let listenFD: Int32
    private let pool: WorkerPool
    /// Which worker holds each open connection (registered edge-triggered, so a socket stays in the set while served).
    private let slots: ConnectionSlots
    private let box: ServerBox

    private struct State {
        var started = false
        var stopping = false
        /// Open connections by socket, so that shutdown() can wake them and the connection cap can find the longest
        /// idle one (closed to make room, so idle keep-alive sockets cannot lock other clients out). A connection in
        /// the epoll set is reached through its slot's token (`ConnectionSlots`).
        var connections: [Int32: Connection] = [:]
        /// Connections closed to make room whose workers have not closed them yet.
        var evicting: Set<Int32> = []
    }
    private let state = Mutex(State())
    /// Left once shutdown() finished, so that any number of callers can wait for it.
    private let finished = DispatchGroup()
    /// Only the first shutdown() call does the work; later calls wait for it.
    private let shutdownClaimed = Atomic<Bool>(false)

    static let listenerToken: UInt64 = 2
    /// Workers kept however quiet the server is (more start while handlers block).
    public let minimumWorkers: Int

    public var baseURL: String { "http://\(host):\(port)" }

    /// Binds and listens immediately (so the port is known and a busy port fails here); `start()` begins accepting.
    /// `workers` are kept however quiet the server is: one for a run's own listener (a webhook inbox, a 3DS return
    /// page), a few for the emulator, where handlers block in injected latencies while others serve.
    public convenience init(
        host: String = "127.0.0.1", port: UInt16 = 0, limits: ServerLimits = .init(), workers: Int = 1,
        handler: @escaping HTTPHandler
    ) throws {
        try self.init(
            host: host, port: port, limits: limits, workers: workers, readSize: WorkerPool.readSize, handler: handler)
    }

    /// `readSize`: the bytes a worker reads from a socket at once (smaller in tests, so that a request takes reads).
    init(
        host: String, port: UInt16, limits: ServerLimits, workers: Int, readSize: Int, handler: @escaping HTTPHandler
    ) throws {
        // A peer that goes away mid-write must not kill the process; send() also passes MSG_NOSIGNAL.
        signal(SIGPIPE, SIG_IGN)
        let address = host == "localhost" ? "127.0.0.1" : host
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else {
            throw HTTPServerError("cannot listen on host \"\(host)\": expected an IPv4 address such as 127.0.0.1")
        }
        let fd = socket(
            AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
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
        // The pool calls back into the server, which does not exist yet: the closures reach it through a box filled
        // in below, before any thread starts.
        let box = ServerBox()
        self.box = box
        do {
            pool = try WorkerPool(
                minimum: max(1, workers), maximum: limits.maxConnections + max(1, workers), readSize: readSize,
                serve: { token, scratch in box.server?.serve(token: token, scratch: scratch) },
                sweep: { box.server?.sweep() })
        } catch {
            close(fd)
            throw error
        }
        self.listenFD = fd
        // Room for the cap and for as many again closed to make room but not yet closed by their workers (beyond that,
        // a new connection gets the cap's 503).
        self.slots = ConnectionSlots(capacity: 2 * limits.maxConnections + 16)
        self.port = UInt16(bigEndian: actual.sin_port)
        self.host = host
        self.limits = limits
        self.minimumWorkers = max(1, workers)
        self.handler = handler
        box.server = self
        finished.enter()
    }

    /// Starts the workers and begins accepting; returns immediately. Calling it again does nothing.
    public func start() {
        let go = state.withLock { s -> Bool in
            guard !s.started, !s.stopping else { return false }
            s.started = true
            return true
        }
        guard go else { return }
        // Like any running thread's owner, the workers keep the server alive until shutdown().
        box.running = self
        arm(listener: cepoll_add)
        pool.start()
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
            // SHUT_RDWR makes a worker's recv or send on it fail at once; the fd itself is closed by its owner.
            // Doing it under the lock means no fd in the set can have been closed and reused meanwhile.
            Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
            for fd in s.connections.keys { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        pool.stop()
        // No worker is left: connections still waiting in the set are closed here.
        let left = state.withLock { s in
            defer { s.connections.removeAll() }
            return Array(s.connections.values)
        }
        for connection in left { connection.closeUnregistered() }
        // A slot keeps its connection, and a connection its server: emptied, so the server can go.
        for connection in left { slots.empty(connection.token) }
        pool.close()
        close(listenFD)
        box.running = nil
        finished.leave()
    }

    /// Blocks the caller until shutdown() completed.
    public func waitUntilShutdown() {
        finished.wait()
    }

    /// How many worker threads serve connections now (however many connections are open).
    var workerCount: Int { pool.workerCount }

    deinit {
        // A server dropped without shutdown() must not leak its sockets.
        if !shutdownClaimed.load(ordering: .acquiring) {
            close(listenFD)
            pool.close()
        }
    }

    // MARK: - Serving ready sockets

    /// One ready socket, on the worker that took it from the set.
    private func serve(token: UInt64, scratch: UnsafeMutableRawBufferPointer) {
        if token == Self.listenerToken {
            acceptAll()
            arm(listener: cepoll_modify)
            return
        }
        guard let connection = slots.claim(token) else { return }
        // Edge-triggered: a report comes when bytes arrive, not while some wait unread. So the holder reads until a
        // read comes back short, again when bytes were reported while it held the connection, and on to the close
        // when the peer hung up (the close that comes with the last bytes is not reported again).
        if token & ConnectionSlots.hangupBit != 0 { connection.peerHungUp = true }
        while true {
            guard connection.serveReady(scratch: scratch) else { return }
            if connection.mayHaveMore { continue }
            switch slots.release(token) {
            case .released: return
            case .readAgain(let hungUp): if hungUp { connection.peerHungUp = true }
            }
        }
    }

    private func arm(listener operation: Int32) {
        _ = cepoll_control(pool.epoll, operation, listenFD, cepoll_in | cepoll_one_shot, Self.listenerToken)
    }

    private func register(_ connection: Connection) {
        _ = cepoll_control(
            pool.epoll, cepoll_add, connection.fd, cepoll_in | cepoll_read_hangup | cepoll_edge_triggered,
            connection.token)
    }

    /// Wakes each connection whose deadline passed (idle too long, or a request arriving too slowly): a read
    /// shutdown makes its socket readable, and the worker that takes it sees the deadline and closes or answers 408.
    private func sweep() {
        let now = monotonicSeconds()
        state.withLock { s in
            for (fd, connection) in s.connections where connection.deadlinePassed(now) && connection.markSwept() {
                Glibc.shutdown(fd, Int32(SHUT_RD))
            }
        }
    }

    // MARK: - Accepting

    private func acceptAll() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE { usleep(10_000) }  // out of fds: back off, the listener re-arms
                return
            }
            // Register under the lock so that a concurrent shutdown() either sees this fd or we see `stopping`.
            let verdict = state.withLock { s -> Admission in
                if s.stopping { return .stopping }
                guard slots.hasRoom else { return .refused }
                if s.connections.count - s.evicting.count >= limits.maxConnections {
                    let idle = s.connections.compactMap { fd, connection -> (Int32, Int64)? in
                        let since = connection.idleSince.load(ordering: .acquiring)
                        return since > 0 && !s.evicting.contains(fd) ? (fd, since) : nil
                    }
                    guard let oldest = idle.min(by: { $0.1 < $1.1 })?.0 else { return .refused }
                    Glibc.shutdown(oldest, Int32(SHUT_RDWR))
                    s.evicting.insert(oldest)
                }
                guard let connection = slots.fill({ Connection(fd: fd, server: self, token: $0) }) else {
                    return .refused
                }
                s.connections[fd] = connection
                return .accepted(connection)
            }
            switch verdict {
            case .stopping:
                close(fd)
                return
            case .refused:
                // Over the limit: a tiny 503 so the client knows why, then close. No worker waits on it.
                let reply = Array(
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
                _ = reply.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
            case .accepted(let connection):
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                var one: Int32 = 1
                // Responses are written in one send; without NODELAY small writes could wait for delayed ACKs.
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                connection.startIdle()
                register(connection)
            }
        }
    }

    /// What becomes of an accepted socket.
    private enum Admission {
        case stopping
        /// Over the connection cap with no idle connection to close, or no slot free: a 503, then closed.
        case refused
        case accepted(Connection)
    }

    /// Serves one socket already connected (one end of a socketpair, an inherited socket) on the calling thread, until
    /// the peer is done or the connection must close: the same reading, request limits and replies as an accepted
    /// connection, outside the epoll set (what the fuzzer drives the parser through). The connection cap and the
    /// socket options the accept loop sets (no delay) are the caller's. Closed when it returns.
    public func serve(connected fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let connection = Connection(fd: fd, server: self, token: 0)
        state.withLock { $0.connections[fd] = connection }
        connection.startIdle()
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: pool.readSize, alignment: 16)
        defer { scratch.deallocate() }
        while true {
            let wait = max(0, connection.deadline - monotonicSeconds())
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(wait * 1000 + 1, Double(Int32.max))))
            if ready < 0 && errno == EINTR { continue }
            if !connection.serveReady(scratch: scratch) { return }
        }
    }

    /// Called by a connection's holder to close its socket.
    func forget(_ connection: Connection, _ closeIt: () -> Void) {
        // Close under the lock so that shutdown() and the sweep never call shutdown(2) on a recycled fd number.
        state.withLock { s in
            s.connections[connection.fd] = nil
            s.evicting.remove(connection.fd)
            closeIt()
            // Closed, the socket has left the epoll set: only reports taken before are left, and they name the slot's
            // old generation.
            slots.empty(connection.token)
        }
    }
}

/// Lets the worker pool's callbacks reach the server that owns it, and keeps a started server alive until it is shut
/// down (a server dropped before `start()` still closes its sockets in `deinit`).
private final class ServerBox: @unchecked Sendable {
    // @unchecked: `server` is written once in HTTPServer.init before the pool's threads exist; `running` is written in
    // start() before they exist and in shutdown() after they ended.
    weak var server: HTTPServer?
    var running: HTTPServer?
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

/// Dispatch sources are cancelled when released, so installed ones are retained here for the process's life.
private let signalSources = Mutex<[any DispatchSourceSignal]>([])
