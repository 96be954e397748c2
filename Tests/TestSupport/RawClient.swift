import Foundation
import Glibc

/// A deliberately dumb blocking TCP client, so tests see exactly what the server put on the wire
/// (including resets, truncation and early closes that a real HTTP client would paper over).
public final class RawClient {
    public let fd: Int32
    private var pending: [UInt8] = []

    public struct Response {
        public var status: Int
        public var headers: [(String, String)]
        public var body: [UInt8]
        /// The body was cut short (fewer bytes than Content-Length before the connection ended).
        public var truncated: Bool
        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public enum Failure: Error, Equatable {
        case reset, closed, timeout
        case malformed(String)
    }

    public init(port: UInt16, receiveTimeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = port.bigEndian
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: deinit runs for a class whose init throws after full initialisation, and a double
        // close could close a descriptor another test (or the server) has just been given.
        if rc != 0 { throw Failure.closed }
        var tv = timeval(
            tv_sec: Int(receiveTimeout), tv_usec: Int((receiveTimeout - receiveTimeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    public func send(_ text: String) { send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Closes the sending side (a FIN), as a client does once it has sent all it will.
    public func closeWriting() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// Reads more bytes; returns how many, or throws reset / timeout. 0 means the server closed.
    private func fill() throws(Failure) -> Int {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == ECONNRESET { throw .reset }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw .timeout }
            throw .closed
        }
        pending.append(contentsOf: chunk[0..<n])
        return n
    }

    /// Reads until the server closes the connection; true when it closed (FIN), throws on reset or timeout.
    public func readToEnd() throws(Failure) -> [UInt8] {
        while try fill() > 0 {}
        defer { pending.removeAll() }
        return pending
    }

    /// Reads one response framed by Content-Length. `headRequest` means no body follows.
    public func readResponse(headRequest: Bool = false) throws(Failure) -> Response {
        var headEnd: Int? = nil
        while headEnd == nil {
            if let r = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                headEnd = r.upperBound
                break
            }
            if try fill() == 0 { throw .closed }
        }
        let head = String(decoding: pending[0..<headEnd!], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusParts = lines.removeFirst().split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw .malformed(head) }
        let headers = lines.map { line -> (String, String) in
            let kv = line.split(separator: ":", maxSplits: 1)
            return (String(kv[0]), kv.count > 1 ? kv[1].trimmingCharacters(in: .whitespaces) : "")
        }
        pending.removeFirst(headEnd!)
        let length = headRequest ? 0 : Int(headers.first { $0.0.lowercased() == "content-length" }?.1 ?? "0") ?? 0
        var truncated = false
        while pending.count < length {
            if try fill() == 0 {
                truncated = true
                break
            }
        }
        let take = min(length, pending.count)
        let body = Array(pending[0..<take])
        pending.removeFirst(take)
        return Response(status: status, headers: headers, body: body, truncated: truncated)
    }

    /// One request on a fresh connection.
    public static func request(port: UInt16, _ raw: String) throws -> Response {
        let client = try RawClient(port: port)
        client.send(raw)
        return try client.readResponse(headRequest: raw.hasPrefix("HEAD "))
    }
}
