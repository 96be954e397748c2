import Foundation
import Glibc
import Synchronization
import WireTypes

/// Gives every accepted connection a process-unique number (HTTPRequest.connectionID).
private let connectionCounter = Atomic<Int>(0)

/// One connection: the bytes it has received, how far the request under way has been read, and its deadlines.
///
/// A worker that takes the connection's socket from the server's epoll set calls `serveReady(scratch:)`: it reads what
/// has arrived, answers every whole request in it (pipelined ones in order), and says whether to wait for more. Reading
/// is incremental — the head's end is searched only in new bytes and a chunked body is decoded as it arrives — so a
/// slow client costs a worker nothing between its bytes. Only the worker holding the socket touches the connection's
/// state; the server's sweep reads just the two atomics.
final class Connection: @unchecked Sendable {
    // @unchecked: the buffer and the reading state belong to the one worker that holds the connection
    // (`ConnectionSlots`); other threads read only the atomics, `fd` and `token`.
    let fd: Int32
    /// What the socket is registered with in the server's epoll set: its slot and generation (0: not in the set).
    let token: UInt64
    private let server: HTTPServer
    private let limits: ServerLimits
    private let id: Int
    /// Bytes received and not yet answered: the request under way starts at index 0 (pipelined requests after it stay
    /// here until their turn).
    private var buffer: [UInt8] = []
    /// Requests answered on this connection.
    private var index = 0
    /// The request under way: how far its head was searched, its head once parsed, and its body's progress.
    private var scanned = 0
    private var pending: PendingRequest?
    /// When the request under way must have arrived whole (set at its first byte): a slow client gets 408 then.
    private var requestDeadline: Double?
    /// The `Date` line of this second's answers, formatted once a second.
    private var dateSecond: time_t = 0
    private var dateLine = ""
    /// When this connection must be looked at again (milliseconds of the monotonic clock, 0 while a worker holds it):
    /// the idle timeout between requests, or the request deadline.
    private let deadlineMilliseconds = Atomic<Int64>(0)
    /// Set by the sweep once it woke the connection for its deadline, so it is woken once.
    private let swept = Atomic<Bool>(false)
    /// When the connection began waiting for its next request (milliseconds, 0 while a request is under way): at the
    /// connection cap the longest idle one is closed to make room.
    let idleSince = Atomic<Int64>(0)

    /// The last read filled the worker's buffer, or brought bytes after the peer hung up: more may wait (bytes, or the
    /// close), and with an edge-triggered registration no report will say so.
    private(set) var mayHaveMore = false
    /// A report said the peer closed its side (or the socket failed): the holder reads on until it sees the close.
    var peerHungUp = false

    init(fd: Int32, server: HTTPServer, token: UInt64) {
        self.fd = fd
        self.token = token
        self.server = server
        self.limits = server.limits
        self.id = connectionCounter.add(1, ordering: .relaxed).newValue
    }

    /// The deadline, in monotonic seconds.
    var deadline: Double { Double(deadlineMilliseconds.load(ordering: .acquiring)) / 1000 }

    func deadlinePassed(_ now: Double) -> Bool {
        let due = deadlineMilliseconds.load(ordering: .acquiring)
        return due > 0 && Double(due) / 1000 <= now
    }

    /// True for the first caller after the connection was last armed.
    func markSwept() -> Bool { !swept.exchange(true, ordering: .acquiringAndReleasing) }

    /// Starts the wait for the first request.
    func startIdle() { waitForMore(now: monotonicSeconds()) }

    /// Serves what the socket has for us. True: wait for more (the caller lets the connection go); false: closed.
    func serveReady(scratch: UnsafeMutableRawBufferPointer) -> Bool {
        deadlineMilliseconds.store(0, ordering: .releasing)
        swept.store(false, ordering: .releasing)
        let received = receive(into: scratch)
        if received != .nothing { idleSince.store(0, ordering: .releasing) }
        while true {
            let request: HTTPRequest
            let keepAlive: Bool
            do {
                guard let whole = try readRequest() else {
                    let now = monotonicSeconds()
                    let due = buffer.isEmpty ? nil : requestDeadline
                    if let due, due <= now {
                        writeResponse(HTTPResponse.text(408, "Request Timeout\n"), head: false, close: true)
                        return finish(linger: true)
                    }
                    if received == .closed { return finish(linger: false) }
                    if due == nil && idleDeadlinePassed(now) { return finish(linger: false) }
                    waitForMore(now: now)
                    return true
                }
                (request, keepAlive) = whole
            } catch {
                switch error {
                case .reject(let status, let message):
                    // Errors get a tiny plain-text answer, and the connection is not trusted any further.
                    writeResponse(HTTPResponse.text(status, message + "\n"), head: false, close: true)
                    return finish(linger: true)
                }
            }
            let isHead = request.method == "HEAD"
            switch server.handler(request) {
            case .respond(let response):
                // A handler may ask to close by setting `Connection: close` itself.
                let close =
                    !keepAlive
                    || response.headers.contains {
                        HTTPHeaders.sameName($0.name, "Connection") && $0.value.lowercased() == "close"
                    }
                guard writeResponse(response, head: isHead, close: close), !close else { return finish(linger: true) }
            case .reset:
                // Linger {on, 0 s}: close() then sends RST instead of FIN, so the peer sees ECONNRESET.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return finish(linger: false)
            case .truncate(let response, let bodyBytes):
                var out = ByteWriter()
                writeHead(of: response, close: true, into: &out)
                if !isHead { response.body.prefix(max(0, bodyBytes)).withUnsafeBytes { out.append($0) } }
                _ = out.withBytes { sendAll($0) }
                return finish(linger: true)
            }
            index += 1
        }
    }

    /// Closes a connection no worker holds (the server is shutting down and its workers have ended).
    func closeUnregistered() { _ = close(fd) }

    /// Sets the deadline the server's sweep watches: the request's, while one is under way; otherwise the idle timeout.
    private func waitForMore(now: Double) {
        let due: Double
        if !buffer.isEmpty {
            if requestDeadline == nil { requestDeadline = now + limits.requestTimeout }
            due = requestDeadline!
        } else {
            // Between requests nothing is owed, so the idle timeout closes silently. While idle the connection may be
            // closed to make room for a new one (the server's connection cap).
            if idleSince.load(ordering: .acquiring) == 0 {
                idleSince.store(max(1, Int64(now * 1000)), ordering: .releasing)
            }
            due = Double(idleSince.load(ordering: .acquiring)) / 1000 + limits.idleTimeout
        }
        deadlineMilliseconds.store(max(1, Int64((due * 1000).rounded(.up))), ordering: .releasing)
    }

    private func idleDeadlinePassed(_ now: Double) -> Bool {
        let since = idleSince.load(ordering: .acquiring)
        return since > 0 && Double(since) / 1000 + limits.idleTimeout <= now
    }

    /// Closes the socket. With `linger`, first half-close and drain what the client still sends: closing with
    /// unread input makes the kernel send RST, which can destroy the response the client has not read yet.
    private func finish(linger: Bool) -> Bool {
        if linger {
            Glibc.shutdown(fd, Int32(SHUT_WR))
            let deadline = monotonicSeconds() + 1
            var drain = [UInt8](repeating: 0, count: 4096)
            while wait(for: Int16(POLLIN), until: deadline) {
                let n = drain.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { break }
            }
        }
        server.forget(self) { _ = close(fd) }
        return false
    }

    // MARK: - Reading

    private enum Received { case data, nothing, closed }

    /// One read of what has arrived (the socket is non-blocking), appended to `buffer`.
    private func receive(into scratch: UnsafeMutableRawBufferPointer) -> Received {
        while true {
            let n = recv(fd, scratch.baseAddress, scratch.count, 0)
            mayHaveMore = n == scratch.count || (peerHungUp && n > 0)
            if n > 0 {
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[0..<n]))
                return .data
            }
            if n == 0 { return .closed }
            if errno == EINTR { continue }
            return errno == EAGAIN || errno == EWOULDBLOCK ? .nothing : .closed
        }
    }

    /// Polls the socket for `events` until `deadline`; false when it passed or the socket failed.
    private func wait(for events: Int16, until deadline: Double) -> Bool {
        while true {
            let remaining = deadline - monotonicSeconds()
            if remaining <= 0 { return false }
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining * 1000 + 1, Double(Int32.max))))
            if ready < 0 { if errno == EINTR { continue } else { return false } }
            if ready > 0 { return true }
        }
    }

    /// The next whole request in `buffer`, or nil when more bytes are needed.
    private func readRequest() throws(ReadFailure) -> (HTTPRequest, Bool)? {
        if pending == nil {
            guard let headEnd = findHeadEnd(from: scanned) else {
                scanned = max(0, buffer.count - 3)
                if buffer.count > limits.maxHeaderBytes { throw .reject(431, "Request Header Fields Too Large") }
                return nil
            }
            guard headEnd <= limits.maxHeaderBytes else { throw .reject(431, "Request Header Fields Too Large") }
            pending = try PendingRequest(head: parseHead(buffer[0..<headEnd]), bodyStart: headEnd, limits: limits)
        }
        // Moved out and, unless whole, back: a copy of the request under way, taken and put back, cost a retain and a
        // release of each of its strings per read.
        // (A request refused here is answered and its connection closed: nothing to put back.)
        guard var request = pending.take() else { return nil }
        let complete = try request.advance(buffer)
        if request.sendContinue {
            // curl and others wait for `100 Continue` before sending a larger body; tell them to go ahead.
            request.sendContinue = false
            request.continueSent = true
            let interim: StaticString = "HTTP/1.1 100 Continue\r\n\r\n"
            _ = interim.withUTF8Buffer { sendAll(UnsafeRawBufferPointer($0)) }
        }
        guard complete else {
            pending = consume request
            return nil
        }

        let head = request.head
        let keepAlive = head.http11 ? !occurs("close", in: head.connection) : occurs("keep-alive", in: head.connection)
        var message = head.request
        message.body = Data(request.body(in: buffer))
        message.indexOnConnection = index
        message.connectionID = id
        // The request is consumed: drop its bytes so the buffer does not grow across a long keep-alive connection.
        let end = request.end
        if end == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024)
        } else {
            buffer.removeSubrange(0..<end)
        }
        scanned = 0
        requestDeadline = nil
        return (message, keepAlive)
    }

    /// Finds the blank line ending the header section (CRLF CRLF, or bare LF LF); returns the index just after it.
    private func findHeadEnd(from start: Int) -> Int? {
        var i = start
        let count = buffer.count
        while i < count {
            if buffer[i] == 0x0A {
                // "\n\n" or "\n\r\n"
                if i + 1 < count && buffer[i + 1] == 0x0A { return i + 2 }
                if i + 2 < count && buffer[i + 1] == 0x0D && buffer[i + 2] == 0x0A { return i + 3 }
            }
            i += 1
        }
        return nil
    }

    // MARK: - Writing

    /// The response's head, written into `out`: piece by piece into one `ByteWriter`, where appending each piece to an
    /// array cost about a hundred instructions (a tenth of a health request's).
    private func writeHead(of response: HTTPResponse, close: Bool, into out: inout ByteWriter) {
        out.append("HTTP/1.1 ")
        out.append(decimal: response.status)
        out.append(0x20)
        out.append(reasonPhrase(response.status))
        out.append("\r\n")
        var hasDate = false
        for (name, value) in response.headers {
            // Framing belongs to the server: it writes Content-Length itself.
            if HTTPHeaders.sameName(name, "Date") { hasDate = true }
            if HTTPHeaders.sameName(name, "Connection") || HTTPHeaders.sameName(name, "Content-Length")
                || HTTPHeaders.sameName(name, "Transfer-Encoding")
            {
                continue
            }
            out.append(name)
            out.append(": ")
            out.append(value)
            out.append("\r\n")
        }
        if response.status != 204 && response.status != 304 && response.status >= 200 {
            out.append("Content-Length: ")
            out.append(decimal: response.body.count)
            out.append("\r\n")
        }
        if close { out.append("Connection: close\r\n") }
        // An origin server with a clock sends one (RFC 9110 §6.6.1); clients read clock skew from it (`doctor`).
        if !hasDate {
            let second = time(nil)
            if second != dateSecond {
                dateSecond = second
                dateLine = "Date: \(Timestamp.imfFixdate(secondsSince1970: Int64(second)))\r\n"
            }
            out.append(dateLine)
        }
        out.append("\r\n")
    }

    /// Head and body go out in a single buffer (one send) so the client sees the response in one segment.
    @discardableResult
    private func writeResponse(_ response: HTTPResponse, head isHead: Bool, close: Bool) -> Bool {
        let bodyAllowed = !isHead && response.status != 204 && response.status != 304 && response.status >= 200
        var out = ByteWriter(capacity: 256 + (bodyAllowed ? response.body.count : 0))
        writeHead(of: response, close: close, into: &out)
        if bodyAllowed { response.body.withUnsafeBytes { out.append($0) } }
        return out.withBytes { sendAll($0) }
    }

    /// Writes everything; a client that stops reading for the idle timeout fails the write (and the connection).
    private func sendAll(_ raw: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        // Read from the clock only once a send must wait: normally there is one call and no wait.
        var deadline: Double?
        while offset < raw.count {
            // Normally one call; the loop only covers a partial write of a large body.
            let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    if deadline == nil { deadline = monotonicSeconds() + max(1, limits.idleTimeout) }
                    if wait(for: Int16(POLLOUT), until: deadline!) { continue }
                }
                return false
            }
            offset += n
        }
        return true
    }
}
