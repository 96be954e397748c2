import Glibc
import Foundation
import Synchronization

/// Gives every accepted connection a process-unique number (HTTPRequest.connectionID).
private let connectionCounter = Atomic<Int>(0)

/// Why reading a request stopped.
private enum ReadFailure: Error {
    /// The peer closed or the socket failed: close quietly.
    case closed
    /// Nothing arrived within the idle timeout between requests: close quietly.
    case idle
    /// The request is bad or too slow: answer with this status, then close.
    case reject(Int, String)
}

/// Serves one accepted socket on its own thread: read a request, call the handler, write the reply, repeat.
/// Owned by exactly one thread, so it needs no locking.
final class Connection {
    private let fd: Int32
    private let server: HTTPServer
    private let limits: ServerLimits
    private let id: Int
    /// Bytes received but not yet consumed; pipelined requests stay here between iterations.
    private var buffer: [UInt8] = []
    /// Index of the first unconsumed byte in `buffer`.
    private var position = 0
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)

    private let idle: IdleMark

    init(fd: Int32, server: HTTPServer, idle: IdleMark) {
        self.fd = fd
        self.server = server
        self.idle = idle
        self.limits = server.limits
        self.id = connectionCounter.add(1, ordering: .relaxed).newValue
    }

    func run() {
        var index = 0
        while true {
            let request: HTTPRequest
            let keepAlive: Bool
            do {
                (request, keepAlive) = try readRequest(index: index)
            } catch {
                switch error {
                case .closed, .idle:
                    return finish(linger: false)
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
                let close = !keepAlive || response.headers.contains { $0.name.utf8.count == 10
                    && $0.name.lowercased() == "connection" && $0.value.lowercased() == "close" }
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

    /// Closes the socket. With `linger`, first half-close and drain what the client still sends: closing with
    /// unread input makes the kernel send RST, which can destroy the response the client has not read yet.
    private func finish(linger: Bool) {
        if linger {
            Glibc.shutdown(fd, Int32(SHUT_WR))
            let deadline = now() + 1
            while case .data = receive(until: deadline) { buffer.removeAll(keepingCapacity: true) }
        }
        server.forget(fd) { _ = close(fd) }
    }

    // MARK: - Reading

    private enum Received { case data, closed, timeout }

    /// Waits (poll, so that the deadline holds) for data and appends it to `buffer`.
    private func receive(until deadline: Double) -> Received {
        while true {
            let remaining = deadline - now()
            if remaining <= 0 { return .timeout }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32(min(remaining * 1000 + 1, Double(Int32.max))))
            if ready < 0 { if errno == EINTR { continue } else { return .closed } }
            if ready == 0 { continue }  // re-check the deadline
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer.append(contentsOf: scratch[0..<n])
                return .data
            }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return .closed
        }
    }

    /// Reads more for the request being received: its deadline passing means a slow client (408).
    private func more(_ deadline: Double) throws(ReadFailure) {
        switch receive(until: deadline) {
        case .data: return
        case .closed: throw .closed
        case .timeout: throw .reject(408, "Request Timeout")
        }
    }

    private func readRequest(index: Int) throws(ReadFailure) -> (HTTPRequest, Bool) {
        // Drop consumed bytes so the buffer does not grow across a long keep-alive connection.
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        } else if position > 0 {
            buffer.removeSubrange(0..<position)
            position = 0
        }
        // Idle wait: between requests nothing is owed, so a timeout closes silently. While idle the connection may be
        // closed to make room for a new one (the server's connection cap).
        if buffer.isEmpty {
            let since = now()
            idle.set(idle: true, at: since)
            let received = receive(until: since + limits.idleTimeout)
            idle.set(idle: false, at: since)
            switch received {
            case .data: break
            case .closed: throw .closed
            case .timeout: throw .idle
            }
        }
        // From the first byte on, the whole request must arrive within requestTimeout.
        let deadline = now() + limits.requestTimeout

        var scanned = 0
        var headEnd: Int? = nil
        while true {
            if let end = findHeadEnd(from: scanned) { headEnd = end; break }
            scanned = max(0, buffer.count - 3)
            if buffer.count > limits.maxHeaderBytes { throw .reject(431, "Request Header Fields Too Large") }
            try more(deadline)
        }
        guard let headEnd, headEnd <= limits.maxHeaderBytes else {
            throw .reject(431, "Request Header Fields Too Large")
        }
        var head = try parseHead(buffer[0..<headEnd])
        position = headEnd

        // Framing (RFC 9112 §6): chunked or Content-Length, never both (a request-smuggling signal); no
        // Transfer-Encoding on HTTP/1.0, which has none; and chunked is the only transfer coding this server decodes.
        let transferEncoding = head.transferEncoding
        let lengths = head.contentLengths
        var body: [UInt8] = []
        if let transferEncoding {
            guard head.http11 else { throw .reject(400, "Bad Request: Transfer-Encoding in an HTTP/1.0 request") }
            guard lengths.isEmpty else { throw .reject(400, "Bad Request: both Transfer-Encoding and Content-Length") }
            guard transferEncoding.trimmingCharacters(in: .whitespaces).lowercased() == "chunked" else {
                throw .reject(501, "Not Implemented: the only transfer coding accepted is chunked")
            }
            sendContinueIfExpected(head.expectContinue)
            body = try readChunked(deadline)
        } else if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let length = parseDecimal(first) else {
                throw .reject(400, "Bad Request: invalid Content-Length")
            }
            guard length <= limits.maxBodyBytes else { throw .reject(413, "Content Too Large") }
            if length > 0 {
                if buffer.count - position < length { sendContinueIfExpected(head.expectContinue) }
                while buffer.count - position < length { try more(deadline) }
                body = Array(buffer[position..<(position + length)])
                position += length
            }
        }

        let keepAlive = head.http11 ? !head.connection.contains("close") : head.connection.contains("keep-alive")
        head.request.body = Data(body)
        head.request.indexOnConnection = index
        head.request.connectionID = id
        return (head.request, keepAlive)
    }

    /// Finds the blank line ending the header section (CRLF CRLF, or bare LF LF); returns the index just after it.
    private func findHeadEnd(from start: Int) -> Int? {
        var i = max(position, start)
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

    /// curl and others wait for `100 Continue` before sending a larger body; tell them to go ahead.
    private func sendContinueIfExpected(_ expected: Bool) {
        if expected {
            _ = sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
        }
    }

    /// De-chunks a chunked body, enforcing maxBodyBytes on the running size. Trailers are read and ignored.
    private func readChunked(_ deadline: Double) throws(ReadFailure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine(deadline)
            // chunk-size [; extensions]
            let sizePart = line.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard let size = parseHex(trimmed(sizePart)) else { throw .reject(400, "Bad Request: invalid chunk size") }
            if size == 0 {
                // Trailer fields until an empty line.
                while try !readLine(deadline).isEmpty {}
                return body
            }
            guard body.count + size <= limits.maxBodyBytes else { throw .reject(413, "Content Too Large") }
            while buffer.count - position < size { try more(deadline) }
            body.append(contentsOf: buffer[position..<(position + size)])
            position += size
            guard try readLine(deadline).isEmpty else { throw .reject(400, "Bad Request: chunk data longer than its size") }
        }
    }

    /// Reads one line (without CRLF / LF) from the buffer, reading more as needed. Lines are short in chunked framing.
    private func readLine(_ deadline: Double) throws(ReadFailure) -> ArraySlice<UInt8> {
        var searchFrom = position
        while true {
            if let newline = buffer[searchFrom...].firstIndex(of: 0x0A) {
                var end = newline
                if end > position && buffer[end - 1] == 0x0D { end -= 1 }
                let line = buffer[position..<end]
                position = newline + 1
                return line
            }
            if buffer.count - position > 4096 { throw .reject(400, "Bad Request: chunk line too long") }
            searchFrom = buffer.count
            try more(deadline)
        }
    }

    // MARK: - Writing

    private func head(of response: HTTPResponse, close: Bool) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status) \(reasonPhrase(response.status))\r\n"
        for (name, value) in response.headers {
            // Framing belongs to the server: it writes Content-Length itself.
            let lower = name.lowercased()
            if lower == "content-length" || lower == "transfer-encoding" || lower == "connection" { continue }
            text += "\(name): \(value)\r\n"
        }
        if response.status != 204 && response.status != 304 && response.status >= 200 {
            text += "Content-Length: \(response.body.count)\r\n"
        }
        if close { text += "Connection: close\r\n" }
        // An origin server with a clock sends one (RFC 9110 §6.6.1); clients read clock skew from it (`doctor`).
        if response.headers["Date"] == nil { text += "Date: \(Self.imfDate(time(nil)))\r\n" }
        text += "\r\n"
        return Array(text.utf8)
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
        var bytes = head(of: response, close: close)
        let bodyAllowed = !isHead && response.status != 204 && response.status != 304 && response.status >= 200
        if bodyAllowed { bytes.append(contentsOf: response.body) }
        return sendAll(bytes)
    }

    private func sendAll(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                // Normally one call; the loop only covers a partial write of a large body.
                let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
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

/// Parses "METHOD SP target SP HTTP/1.x" and the header fields. Anything malformed is a 400.
private func parseHead(_ bytes: ArraySlice<UInt8>) throws(ReadFailure) -> ParsedHead {
    var lines: [ArraySlice<UInt8>] = []
    var lineStart = bytes.startIndex
    for i in bytes.indices where bytes[i] == 0x0A {
        var end = i
        if end > lineStart && bytes[end - 1] == 0x0D { end -= 1 }
        lines.append(bytes[lineStart..<end])
        lineStart = i + 1
    }
    // The last collected line is the empty one that ended the head.
    guard lines.count >= 2 else { throw .reject(400, "Bad Request: malformed request line") }
    let requestLine = lines[0]
    guard !requestLine.contains(0x0D) else { throw .reject(400, "Bad Request: a bare CR in the request line") }
    let parts = requestLine.split(separator: 0x20, omittingEmptySubsequences: false)
    guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte),
          !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 != 0x7F })
    else { throw .reject(400, "Bad Request: malformed request line") }
    let version = String(decoding: parts[2], as: UTF8.self)
    guard version == "HTTP/1.1" || version == "HTTP/1.0" else { throw .reject(400, "Bad Request: unsupported HTTP version") }

    var headers = HTTPHeaders()
    var head = ParsedHead(request: HTTPRequest(method: "", target: ""), http11: version == "HTTP/1.1")
    var hosts = 0
    for line in lines[1..<(lines.count - 1)] {
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
        switch name.count {  // cheap pre-filter before lowercasing
        case 4, 6, 10, 14, 17:
            switch name.lowercased() {
            case "host": hosts += 1
            case "transfer-encoding": head.transferEncoding = head.transferEncoding.map { $0 + ", " + valueText } ?? valueText
            case "content-length": head.contentLengths.append(valueText)
            case "connection": head.connection += valueText.lowercased()
            case "expect": head.expectContinue = valueText.lowercased() == "100-continue"
            default: break
            }
        default: break
        }
    }
    // HTTP/1.1 needs exactly one Host (RFC 9112 §3.2); two could be read differently by different hops.
    if hosts > 1 { throw .reject(400, "Bad Request: more than one Host header") }
    if head.http11 && hosts == 0 { throw .reject(400, "Bad Request: an HTTP/1.1 request needs a Host header") }
    head.request = HTTPRequest(method: String(decoding: parts[0], as: UTF8.self),
                               target: String(decoding: parts[1], as: UTF8.self), headers: headers)
    return head
}

/// RFC 9110 token characters (method and header names).
private func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
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

/// Monotonic seconds, for deadlines that do not jump with the wall clock.
private func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
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
