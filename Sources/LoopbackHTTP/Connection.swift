import Glibc
import Foundation
import Synchronization
import WireTypes

/// Gives every accepted connection a process-unique number (HTTPRequest.connectionID).
private let connectionCounter = Atomic<Int>(0)

/// Why reading a request stopped short of a request.
private enum ReadFailure: Error {
    /// The request is bad or too big: answer with this status, then close.
    case reject(Int, String)
}

/// One connection: the bytes it has received, how far the request under way has been read, and its deadlines.
///
/// A worker that takes the connection's socket from the server's epoll set calls `serveReady(scratch:)`: it reads what has
/// arrived, answers every whole request in it (pipelined ones in order), and says whether to wait for more. Reading
/// is incremental — the head's end is searched only in new bytes and a chunked body is decoded as it arrives — so a
/// slow client costs a worker nothing between its bytes. Only the worker holding the socket touches the connection's
/// state; the server's sweep reads just the two atomics.
final class Connection: @unchecked Sendable {
    // @unchecked: the buffer and the reading state belong to the one worker that took the socket from the epoll set
    // (it is registered one-shot); other threads read only the atomics and `fd`.
    let fd: Int32
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
    private var dateLine: [UInt8] = []
    /// When this connection must be looked at again (milliseconds of the monotonic clock, 0 while a worker holds it):
    /// the idle timeout between requests, or the request deadline.
    private let deadlineMilliseconds = Atomic<Int64>(0)
    /// Set by the sweep once it woke the connection for its deadline, so it is woken once.
    private let swept = Atomic<Bool>(false)
    /// When the connection began waiting for its next request (milliseconds, 0 while a request is under way): at the
    /// connection cap the longest idle one is closed to make room.
    let idleSince = Atomic<Int64>(0)

    init(fd: Int32, server: HTTPServer) {
        self.fd = fd
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

    /// Serves what the socket has for us. True: wait for more (the caller arms the socket again); false: closed.
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
                let close = !keepAlive || response.headers.contains {
                    HTTPHeaders.sameName($0.name, "Connection") && $0.value.lowercased() == "close" }
                guard writeResponse(response, head: isHead, close: close), !close else { return finish(linger: true) }
            case .reset:
                // Linger {on, 0 s}: close() then sends RST instead of FIN, so the peer sees ECONNRESET.
                var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                return finish(linger: false)
            case .truncate(let response, let bodyBytes):
                var bytes = head(of: response, close: true)
                if !isHead { bytes.append(contentsOf: response.body.prefix(max(0, bodyBytes))) }
                _ = sendAll(bytes)
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
            if idleSince.load(ordering: .acquiring) == 0 { idleSince.store(max(1, Int64(now * 1000)), ordering: .releasing) }
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
        server.forget(fd) { _ = close(fd) }
        return false
    }

    // MARK: - Reading

    private enum Received { case data, nothing, closed }

    /// One read of what has arrived (the socket is non-blocking), appended to `buffer`.
    private func receive(into scratch: UnsafeMutableRawBufferPointer) -> Received {
        while true {
            let n = recv(fd, scratch.baseAddress, scratch.count, 0)
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
            _ = sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
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

    private func head(of response: HTTPResponse, close: Bool, reserving bodyBytes: Int = 0) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + bodyBytes)
        // Appended piece by piece: an interpolated line is a string built, then copied.
        bytes.append(contentsOf: "HTTP/1.1 ".utf8)
        bytes.append(contentsOf: String(response.status).utf8)
        bytes.append(0x20)
        bytes.append(contentsOf: reasonPhrase(response.status).utf8)
        bytes.append(contentsOf: "\r\n".utf8)
        var hasDate = false
        for (name, value) in response.headers {
            // Framing belongs to the server: it writes Content-Length itself.
            if HTTPHeaders.sameName(name, "Date") { hasDate = true }
            if HTTPHeaders.sameName(name, "Connection") || HTTPHeaders.sameName(name, "Content-Length")
                || HTTPHeaders.sameName(name, "Transfer-Encoding") { continue }
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        if response.status != 204 && response.status != 304 && response.status >= 200 {
            bytes.append(contentsOf: "Content-Length: ".utf8)
            bytes.append(contentsOf: String(response.body.count).utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        if close { bytes.append(contentsOf: "Connection: close\r\n".utf8) }
        // An origin server with a clock sends one (RFC 9110 §6.6.1); clients read clock skew from it (`doctor`).
        if !hasDate {
            let second = time(nil)
            if second != dateSecond {
                dateSecond = second
                dateLine = Array("Date: \(Self.imfDate(second))\r\n".utf8)
            }
            bytes.append(contentsOf: dateLine)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return bytes
    }

    /// "Thu, 03 Dec 2026 10:13:28 GMT" (IMF-fixdate): strftime in the C locale, which this process never changes.
    static func imfDate(_ seconds: time_t) -> String {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        var buffer = [CChar](repeating: 0, count: 40)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Head and body go out in a single buffer (one send) so the client sees the response in one segment.
    @discardableResult
    private func writeResponse(_ response: HTTPResponse, head isHead: Bool, close: Bool) -> Bool {
        let bodyAllowed = !isHead && response.status != 204 && response.status != 304 && response.status >= 200
        var bytes = head(of: response, close: close, reserving: bodyAllowed ? response.body.count : 0)
        if bodyAllowed { bytes.append(contentsOf: response.body) }
        return sendAll(bytes)
    }

    /// Writes everything; a client that stops reading for the idle timeout fails the write (and the connection).
    private func sendAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            let deadline = monotonicSeconds() + max(1, limits.idleTimeout)
            while offset < raw.count {
                // Normally one call; the loop only covers a partial write of a large body.
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    if (errno == EAGAIN || errno == EWOULDBLOCK) && wait(for: Int16(POLLOUT), until: deadline) { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }
}

/// A request whose head has been parsed, and how far its body has arrived. Framing (RFC 9112 §6): chunked or
/// Content-Length, never both (a request-smuggling signal); no Transfer-Encoding on HTTP/1.0, which has none; and
/// chunked is the only transfer coding this server decodes.
private struct PendingRequest {
    var head: ParsedHead
    let bodyStart: Int
    /// Where the request ends in the buffer (known once it is complete).
    private(set) var end: Int
    private var framing: Framing
    private let maxBody: Int
    /// The head asked for `100 Continue` and its body has not all arrived: send it once.
    var sendContinue = false
    var continueSent = false

    private enum Framing {
        case length(Int)
        case chunked(ChunkedBody)
    }

    init(head: ParsedHead, bodyStart: Int, limits: ServerLimits) throws(ReadFailure) {
        self.head = head
        self.bodyStart = bodyStart
        self.end = bodyStart
        self.maxBody = limits.maxBodyBytes
        let lengths = head.contentLengths
        if let transferEncoding = head.transferEncoding {
            guard head.http11 else { throw .reject(400, "Bad Request: Transfer-Encoding in an HTTP/1.0 request") }
            guard lengths.isEmpty else { throw .reject(400, "Bad Request: both Transfer-Encoding and Content-Length") }
            guard transferEncoding.trimmingCharacters(in: .whitespaces).lowercased() == "chunked" else {
                throw .reject(501, "Not Implemented: the only transfer coding accepted is chunked")
            }
            framing = .chunked(ChunkedBody(cursor: bodyStart))
        } else if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let length = parseDecimal(first) else {
                throw .reject(400, "Bad Request: invalid Content-Length")
            }
            guard length <= limits.maxBodyBytes else { throw .reject(413, "Content Too Large") }
            framing = .length(length)
        } else {
            framing = .length(0)
        }
    }

    /// Reads on in `buffer`; true once the request is whole.
    mutating func advance(_ buffer: [UInt8]) throws(ReadFailure) -> Bool {
        let complete: Bool
        switch framing {
        case .length(let length):
            complete = buffer.count - bodyStart >= length
            if complete { end = bodyStart + length }
        case .chunked(var body):
            complete = try body.advance(buffer, maxBody: maxBody)
            if complete { end = body.cursor }
            framing = .chunked(body)
        }
        if !complete && head.expectContinue && !continueSent { sendContinue = true }
        return complete
    }

    /// The body of a whole request.
    func body(in buffer: [UInt8]) -> [UInt8] {
        switch framing {
        case .length(let length): Array(buffer[bodyStart..<(bodyStart + length)])
        case .chunked(let body): body.data
        }
    }
}

/// A chunked body decoded as its bytes arrive, enforcing the body limit on the running size. Trailers are read and
/// ignored.
private struct ChunkedBody {
    /// The first byte not decoded yet.
    var cursor: Int
    var data: [UInt8] = []
    private var phase = Phase.size

    private enum Phase {
        case size
        case data(Int)
        case dataEnd
        case trailers
    }

    init(cursor: Int) { self.cursor = cursor }

    /// Decodes what `buffer` holds past `cursor`; true once the last chunk and the trailers are in.
    mutating func advance(_ buffer: [UInt8], maxBody: Int) throws(ReadFailure) -> Bool {
        while true {
            switch phase {
            case .size:
                guard let line = try line(in: buffer) else { return false }
                // chunk-size [; extensions]
                let sizePart = line.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[0]
                guard let size = parseHex(trimmed(sizePart)) else { throw .reject(400, "Bad Request: invalid chunk size") }
                if size == 0 {
                    phase = .trailers
                } else {
                    guard data.count + size <= maxBody else { throw .reject(413, "Content Too Large") }
                    phase = .data(size)
                }
            case .data(let size):
                guard buffer.count - cursor >= size else { return false }
                data.append(contentsOf: buffer[cursor..<(cursor + size)])
                cursor += size
                phase = .dataEnd
            case .dataEnd:
                guard let line = try line(in: buffer) else { return false }
                guard line.isEmpty else { throw .reject(400, "Bad Request: chunk data longer than its size") }
                phase = .size
            case .trailers:
                // Trailer fields until an empty line.
                guard let line = try line(in: buffer) else { return false }
                if line.isEmpty { return true }
            }
        }
    }

    /// The next whole line (without CRLF / LF), or nil until it has arrived. Lines are short in chunked framing.
    private mutating func line(in buffer: [UInt8]) throws(ReadFailure) -> ArraySlice<UInt8>? {
        guard let newline = buffer[cursor...].firstIndex(of: 0x0A) else {
            if buffer.count - cursor > 4096 { throw .reject(400, "Bad Request: chunk line too long") }
            return nil
        }
        var end = newline
        if end > cursor && buffer[end - 1] == 0x0D { end -= 1 }
        let line = buffer[cursor..<end]
        cursor = newline + 1
        return line
    }
}

// MARK: - Parsing helpers (pure functions on bytes)

private struct ParsedHead {
    var request: HTTPRequest
    var http11: Bool
    // The headers the server itself acts on, picked out while parsing (avoids case-insensitive Foundation
    // string compares per lookup on the hot path).
    var transferEncoding: String? = nil
    var contentLengths: [String] = []
    var connection = ""
    var expectContinue = false
}

/// Parses "METHOD SP target SP HTTP/1.x" and the header fields. Anything malformed is a 400. One pass over the bytes,
/// line by line, with no array of lines.
private func parseHead(_ bytes: ArraySlice<UInt8>) throws(ReadFailure) -> ParsedHead {
    /// Where the line starting at `start` lies (without CRLF / LF) and where the next one starts; nil past the last line.
    /// Positions, not a slice: an optional tuple holding a slice is copied and destroyed through the runtime's generic
    /// witnesses, 3.4k instructions a request.
    func line(from start: Int) -> (range: Range<Int>, next: Int)? {
        guard start < bytes.endIndex, let newline = bytes[start...].firstIndex(of: 0x0A) else { return nil }
        var end = newline
        if end > start && bytes[end - 1] == 0x0D { end -= 1 }
        return (start..<end, newline + 1)
    }
    // The head ends with an empty line, so a request line alone is not a request.
    guard let (requestRange, afterRequestLine) = line(from: bytes.startIndex), !requestRange.isEmpty,
          afterRequestLine < bytes.endIndex
    else { throw .reject(400, "Bad Request: malformed request line") }
    let requestLine = bytes[requestRange]
    guard !requestLine.contains(0x0D) else { throw .reject(400, "Bad Request: a bare CR in the request line") }
    guard let firstSpace = requestLine.firstIndex(of: 0x20),
          let secondSpace = requestLine[(firstSpace + 1)...].firstIndex(of: 0x20),
          !requestLine[(secondSpace + 1)...].contains(0x20)
    else { throw .reject(400, "Bad Request: malformed request line") }
    let method = requestLine[requestLine.startIndex..<firstSpace]
    let target = requestLine[(firstSpace + 1)..<secondSpace]
    let versionBytes = requestLine[(secondSpace + 1)...]
    guard !method.isEmpty, method.allSatisfy(isTokenByte), !target.isEmpty, target.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
    else { throw .reject(400, "Bad Request: malformed request line") }
    let http11 = versionBytes.elementsEqual("HTTP/1.1".utf8)
    guard http11 || versionBytes.elementsEqual("HTTP/1.0".utf8) else { throw .reject(400, "Bad Request: unsupported HTTP version") }

    var headers = HTTPHeaders()
    // The fields the server acts on, gathered before the head is made once: a head made empty and filled in was
    // copied and destroyed again for every request.
    var transferEncoding: String?
    var contentLengths: [String] = []
    var connection = ""
    var expectContinue = false
    var hosts = 0
    var next = afterRequestLine
    while let (range, after) = line(from: next), !range.isEmpty {
        next = after
        let line = bytes[range]
        // A CR that does not end its line (RFC 9112 §2.2) could be read as a line end by one parser and not another.
        guard !line.contains(0x0D) else { throw .reject(400, "Bad Request: a bare CR in the header section") }
        // Obsolete line folding and names with whitespace before the colon are rejected (RFC 9112 §5).
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
              line[line.startIndex..<colon].allSatisfy(isTokenByte)
        else { throw .reject(400, "Bad Request: malformed header field") }
        let value = trimmed(line[(colon + 1)...])
        guard !value.contains(0) else { throw .reject(400, "Bad Request: malformed header field") }
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
        let valueText = String(decoding: value, as: UTF8.self)
        headers.add(name, valueText)
        // The name's length picks the one it may be; its bytes, compared without case, tell (no lowercased copy).
        func named(_ known: String) -> Bool { HTTPHeaders.sameName(name, known) }
        switch colon - line.startIndex {
        case 4 where named("Host"): hosts += 1
        case 17 where named("Transfer-Encoding"): transferEncoding = transferEncoding.map { $0 + ", " + valueText } ?? valueText
        case 14 where named("Content-Length"): contentLengths.append(valueText)
        case 10 where named("Connection"): connection += valueText.lowercased()
        case 6 where named("Expect"): expectContinue = valueText.lowercased() == "100-continue"
        default: break
        }
    }
    // HTTP/1.1 needs exactly one Host (RFC 9112 §3.2); two could be read differently by different hops.
    if hosts > 1 { throw .reject(400, "Bad Request: more than one Host header") }
    if http11 && hosts == 0 { throw .reject(400, "Bad Request: an HTTP/1.1 request needs a Host header") }
    let request = HTTPRequest(method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
                              headers: headers)
    return ParsedHead(request: request, http11: http11, transferEncoding: transferEncoding, contentLengths: contentLengths,
                      connection: connection, expectContinue: expectContinue)
}

/// RFC 9110 token characters (method and header names): asked of every byte of every name.
private let tokenBytes = ByteSet { b in
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
    default:
        "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

private func isTokenByte(_ b: UInt8) -> Bool { tokenBytes.contains(b) }

/// Whether `word` occurs in `text`, compared as bytes (the Connection header's lowercased values). Foundation's
/// `contains` cost each request a thousand instructions even with no such header.
private func occurs(_ word: String, in text: String) -> Bool {
    !text.isEmpty && text.utf8.firstRange(of: word.utf8) != nil
}

private func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var s = s
    while let f = s.first, f == 0x20 || f == 0x09 { s.removeFirst() }
    while let l = s.last, l == 0x20 || l == 0x09 { s.removeLast() }
    return s
}

/// Digits only (no sign, no spaces), and small enough not to overflow.
private func parseDecimal(_ s: String) -> Int? {
    guard !s.isEmpty, s.utf8.count <= 15, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int(s)
}

private func parseHex(_ s: ArraySlice<UInt8>) -> Int? {
    guard !s.isEmpty, s.count <= 12 else { return nil }
    var value = 0
    for b in s {
        switch b {
        case 0x30...0x39: value = value * 16 + Int(b - 0x30)
        case 0x41...0x46: value = value * 16 + Int(b - 0x41 + 10)
        case 0x61...0x66: value = value * 16 + Int(b - 0x61 + 10)
        default: return nil
        }
    }
    return value
}

public func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 402: "Payment Required"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 413: "Content Too Large"
    case 415: "Unsupported Media Type"
    case 422: "Unprocessable Content"
    case 425: "Too Early"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status \(status)"
    }
}
