import Foundation
import SandboxEmulator

#if canImport(Glibc)
    import Glibc
#endif

/// Request bytes as a client sends them, to the emulator: the loopback server's parser (request line, headers,
/// lengths, chunks, pipelining, limits), the router and every handler behind it. The bytes go down one end of a
/// socketpair and the server serves the other end on this thread, exactly as it serves an accepted connection, so a
/// million inputs do not cost a million threads. Each answer must be an HTTP/1.1 response, and the server must be done
/// once the client's bytes end.
enum HTTPTarget {
    static let emulator: Emulator = {
        do { return try Emulator() } catch { preconditionFailure("cannot make the emulator: \(error)") }
    }()

    static func request(_ bytes: [UInt8]) {
        var ends: [Int32] = [0, 0]
        precondition(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0, "cannot make a socketpair")
        let (client, server) = (ends[0], ends[1])
        defer { close(client) }
        // Room for the whole input and every answer (as far as the system allows), so that neither side waits for the
        // other; a send on either side that would still block gives up after a second instead of hanging the fuzzer.
        var room: Int32 = 4 * 1024 * 1024
        setsockopt(client, SOL_SOCKET, SO_SNDBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(server, SOL_SOCKET, SO_SNDBUF, &room, socklen_t(MemoryLayout<Int32>.size))
        var second = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(server, SOL_SOCKET, SO_SNDTIMEO, &second, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &second, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            precondition(n > 0, "cannot hand the input to the server: \(String(cString: strerror(errno)))")
            sent += n
        }
        shutdown(client, Int32(SHUT_WR))
        emulator.serve(connected: server)
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n <= 0 { break }
            answer.append(contentsOf: buffer[0..<n])
        }
        guard !answer.isEmpty else { return }
        let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        precondition(
            answer.starts(with: Array("HTTP/1.1 ".utf8)) && answer.count >= 12
                && answer[9...11].allSatisfy(digits.contains),
            "an answer that is not an HTTP/1.1 status line: \(String(decoding: answer.prefix(60), as: UTF8.self))")
    }
}
