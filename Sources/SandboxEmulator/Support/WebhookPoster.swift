import Foundation
import Glibc
import Threads

/// A minimal blocking HTTP/1.1 POST over POSIX sockets, for delivering webhooks to loopback listeners.
/// The emulator must not depend on libcurl or CheckoutKit (it is the other side of the wire), and webhooks only
/// ever go to a local `http://` endpoint, so this stays deliberately small: IPv4, `Content-Length` framing.
///
/// Connections are kept alive between posts to the same listener, as a real provider's delivery workers keep theirs:
/// an idle one is taken back only if it is still open (a closed one reads as readable), and a post on a kept
/// connection that gets not one byte back — the listener closed it just then — goes once more on a fresh connection.
/// That repeat is a webhook's ordinary at-least-once delivery (receivers tell events apart by id), not a money call.
enum WebhookPoster {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Idle connections, oldest first, each with its listener (`address:port`). Bounded in all, not per listener: each
    /// run of a batch listens on a port of its own and is gone after it, so a pool by listener would keep a closed
    /// socket for every run a long `sandbox serve` ever delivered to.
    private static let idle = Locked<[(listener: String, fd: Int32)]>([])
    static let idleLimit = 16

    /// Posts `body` and returns the response status code. Throws on a bad URL, connection failure or timeout.
    static func post(url: String, body: Data, headers: [(String, String)], timeout: TimeInterval) throws(Failure) -> Int
    {
        let target = try parse(url)
        var head = "POST \(target.path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        let request = [UInt8](Data(head.utf8) + body)
        if let kept = takeIdle(target),
            let status = try exchangeOnce(request, on: kept, to: target, timeout: timeout, url: url)
        {
            return status
        }
        let fd = try connect(target, timeout: timeout, url: url)
        guard let status = try exchangeOnce(request, on: fd, to: target, timeout: timeout, url: url) else {
            throw Failure(description: "no response from \(url): the connection closed")
        }
        return status
    }

    /// One exchange on `fd`, which is then kept for the next post or closed: the status, or nil when the connection
    /// closed before one byte of an answer.
    private static func exchangeOnce(
        _ request: [UInt8], on fd: Int32, to target: Target, timeout: TimeInterval,
        url: String
    ) throws(Failure) -> Int? {
        switch exchange(fd, request, timeout: timeout, url: url) {
        case .answered(let status, let keep):
            release(fd, to: target, keep: keep)
            return status
        case .nothing:
            close(fd)
            return nil
        case .failed(let failure):
            close(fd)
            throw failure
        }
    }

    private enum Exchange {
        /// The status, and whether the connection may carry the next post.
        case answered(Int, keep: Bool)
        /// The connection closed before one byte of an answer.
        case nothing
        case failed(Failure)
    }

    /// Writes the request and reads one response: its head, then the body its `Content-Length` gives (without one, or
    /// chunked, to the close — and the connection is not kept).
    private static func exchange(_ fd: Int32, _ request: [UInt8], timeout: TimeInterval, url: String) -> Exchange {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        do { try sendAll(fd, request) } catch { return .nothing }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var headEnd: Int?
        var bodyLength: Int?
        var keep = false
        var status = 0
        while response.count < 65_536 {
            if let headEnd, let bodyLength, response.count >= headEnd + bodyLength {
                return .answered(status, keep: keep)
            }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                if response.isEmpty {
                    return n == 0
                        ? .nothing
                        : .failed(Failure(description: "no response from \(url): \(String(cString: strerror(errno)))"))
                }
                break
            }
            response.append(contentsOf: buffer[0..<n])
            if headEnd == nil, let end = findHeadEnd(response) {
                headEnd = end
                guard let parsed = parseHead(response[..<end]) else {
                    return .failed(Failure(description: "bad status line from \(url)"))
                }
                status = parsed.status
                bodyLength = parsed.contentLength
                keep = parsed.keepAlive && parsed.contentLength != nil
            }
        }
        guard headEnd != nil else { return .failed(Failure(description: "no status line from \(url)")) }
        return .answered(status, keep: false)
    }

    private static func findHeadEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 3..<bytes.count
        where bytes[i] == 0x0A && bytes[i - 1] == 0x0D && bytes[i - 2] == 0x0A && bytes[i - 3] == 0x0D {
            return i + 1
        }
        return nil
    }

    /// The status line's code, the body's length (nil when unframed or chunked), and whether the listener keeps the
    /// connection open. Read on bytes: a delivery's answer is a few short lines.
    private static func parseHead(_ head: ArraySlice<UInt8>) -> (status: Int, contentLength: Int?, keepAlive: Bool)? {
        var lines = head.split(separator: 0x0A, omittingEmptySubsequences: true).map { line in
            line.last == 0x0D ? line.dropLast() : line
        }
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: 0x20, maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: "HTTP/1.".utf8), parts[1].count == 3,
            let status = Int(String(decoding: parts[1], as: UTF8.self))
        else { return nil }
        var length: Int? = (status == 204 || status == 304) ? 0 : nil
        var keepAlive = parts[0].elementsEqual("HTTP/1.1".utf8)
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), [10, 14, 17].contains(colon - line.startIndex)
            else { continue }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            let text = String(decoding: value, as: UTF8.self).lowercased()
            switch String(decoding: line[..<colon], as: UTF8.self).lowercased() {
            case "content-length": length = Int(text)
            case "transfer-encoding":
                length = nil
                keepAlive = false
            case "connection" where text.contains("close"): keepAlive = false
            case "connection" where text.contains("keep-alive"): keepAlive = true
            default: break
            }
        }
        return (status, length, keepAlive)
    }

    /// An idle connection to the listener that is still open, if any.
    private static func takeIdle(_ target: Target) -> Int32? {
        while let fd = idle.withLock({ pool -> Int32? in
            guard let i = pool.lastIndex(where: { $0.listener == target.key }) else { return nil }
            return pool.remove(at: i).fd
        }) {
            if isOpen(fd) { return fd }
            close(fd)
        }
        return nil
    }

    /// Nothing is owed on an idle connection: readable means the listener closed it (or sent garbage), so it is of no
    /// use.
    private static func isOpen(_ fd: Int32) -> Bool {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&pfd, 1, 0) == 0
    }

    /// Keeps the connection for the next post to its listener; the ones listeners closed meanwhile, and the oldest
    /// beyond the limit, are closed.
    private static func release(_ fd: Int32, to target: Target, keep: Bool) {
        guard keep else {
            close(fd)
            return
        }
        let dropped = idle.withLock { pool -> [Int32] in
            pool.append((target.key, fd))
            var dropped: [Int32] = []
            pool.removeAll { entry in
                let gone = !isOpen(entry.fd)
                if gone { dropped.append(entry.fd) }
                return gone
            }
            while pool.count > idleLimit { dropped.append(pool.removeFirst().fd) }
            return dropped
        }
        for fd in dropped { close(fd) }
    }

    private static func connect(_ target: Target, timeout: TimeInterval, url: String) throws(Failure) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = target.port.bigEndian
        guard inet_pton(AF_INET, target.address, &sin.sin_addr) == 1 else {
            close(fd)
            throw Failure(description: "not an IPv4 address: \(target.address)")
        }
        // Loopback connects complete or are refused at once, so a blocking connect cannot hang.
        let connected = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect to \(url): \(message)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return fd
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    private struct Target {
        var address: String
        var port: UInt16
        var path: String
        var hostHeader: String
        var key: String { "\(address):\(port)" }
    }

    /// `http://host[:port][/path]` where host is an IPv4 literal or `localhost`.
    private static func parse(_ url: String) throws(Failure) -> Target {
        guard url.hasPrefix("http://") else {
            throw Failure(description: "only http:// webhook URLs are supported: \(url)")
        }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        let pieces = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let host = pieces.first, !host.isEmpty else {
            throw Failure(description: "bad webhook URL: \(url)")
        }
        var port: UInt16 = 80
        if pieces.count == 2 {
            guard let p = UInt16(pieces[1]) else { throw Failure(description: "bad port in webhook URL: \(url)") }
            port = p
        }
        let address = host == "localhost" ? "127.0.0.1" : String(host)
        return Target(address: address, port: port, path: path, hostHeader: String(authority))
    }
}
