#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A minimal blocking HTTP/1.1 POST over POSIX sockets, for delivering webhooks to loopback listeners.
/// The emulator must not depend on libcurl or CheckoutKit (it is the other side of the wire), and webhooks only
/// ever go to a local `http://` endpoint, so this stays deliberately small: IPv4, one request per connection.
enum WebhookPoster {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Posts `body` and returns the response status code. Throws on a bad URL, connection failure or timeout.
    static func post(url: String, body: Data, headers: [(String, String)], timeout: TimeInterval) throws(Failure) -> Int {
        let target = try parse(url)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))

        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = target.port.bigEndian
        guard inet_pton(AF_INET, target.address, &sin.sin_addr) == 1 else {
            throw Failure(description: "not an IPv4 address: \(target.address)")
        }
        // Loopback connects complete or are refused at once, so a blocking connect cannot hang.
        let connected = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to \(url): \(String(cString: strerror(errno)))") }

        var head = "POST \(target.path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        try sendAll(fd, Data(head.utf8) + body)

        // Read until the peer closes (we asked for Connection: close) so it never sees a reset, then parse the status line.
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while response.count < 65_536 {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 { response.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 { break }
            if errno == EINTR { continue }
            if response.isEmpty { throw Failure(description: "no response from \(url): \(String(cString: strerror(errno)))") }
            break
        }
        guard let lineEnd = response.firstRange(of: Data("\r\n".utf8)) else {
            throw Failure(description: "no status line from \(url)")
        }
        let parts = String(decoding: response[..<lineEnd.lowerBound], as: UTF8.self).split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw Failure(description: "bad status line from \(url)")
        }
        return status
    }

    private static func sendAll(_ fd: Int32, _ data: Data) throws(Failure) {
        var offset = 0
        let bytes = [UInt8](data)
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
    }

    /// `http://host[:port][/path]` where host is an IPv4 literal or `localhost`.
    private static func parse(_ url: String) throws(Failure) -> Target {
        guard url.hasPrefix("http://") else { throw Failure(description: "only http:// webhook URLs are supported: \(url)") }
        let rest = url.dropFirst("http://".count)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        let path = slash == rest.endIndex ? "/" : String(rest[slash...])
        let pieces = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard pieces.count <= 2, let host = pieces.first, !host.isEmpty else { throw Failure(description: "bad webhook URL: \(url)") }
        var port: UInt16 = 80
        if pieces.count == 2 {
            guard let p = UInt16(pieces[1]) else { throw Failure(description: "bad port in webhook URL: \(url)") }
            port = p
        }
        let address = host == "localhost" ? "127.0.0.1" : String(host)
        return Target(address: address, port: port, path: path, hostHeader: String(authority))
    }
}
