import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import LoopbackHTTP

/// Connections are registered edge-triggered: one worker at a time holds each, a report that comes while it is held
/// makes the holder read again, and a report taken before its connection closed is ignored.
@Suite struct ConnectionSlotsTests {
    private func connection(_ server: HTTPServer, _ token: UInt64) -> Connection {
        Connection(fd: -1, server: server, token: token)
    }

    @Test func oneHolderAtATimeAndAReportWhileHeldMeansReadAgain() throws {
        let server = try HTTPServer { _ in .respond(.text(200, "")) }
        let slots = ConnectionSlots(capacity: 4)
        let filled = try #require(slots.fill { connection(server, $0) })
        #expect(filled.token >= 1 << 32, "never the pool's own tokens (1 and 2)")
        #expect(slots.claim(filled.token) === filled)
        #expect(slots.claim(filled.token) == nil, "held: the second report is left to the holder")
        #expect(slots.release(filled.token) == .readAgain(hungUp: false), "the holder reads once more")
        #expect(slots.release(filled.token) == .released, "nothing new: let go")
        #expect(slots.claim(filled.token) === filled, "free again for the next report")
        #expect(slots.claim(filled.token | ConnectionSlots.hangupBit) == nil, "a close reported while held")
        #expect(slots.release(filled.token) == .readAgain(hungUp: true), "the holder reads on to the close")
        #expect(slots.release(filled.token) == .released)
    }

    @Test func aReportOfAClosedConnectionIsIgnoredEvenWhenItsSlotServesAnother() throws {
        let server = try HTTPServer { _ in .respond(.text(200, "")) }
        let slots = ConnectionSlots(capacity: 1)
        let first = try #require(slots.fill { connection(server, $0) })
        #expect(slots.claim(first.token) === first)
        slots.empty(first.token)
        #expect(slots.claim(first.token) == nil)
        let second = try #require(slots.fill { connection(server, $0) })
        #expect(second.token & 0xFFFF_FFFF == first.token & 0xFFFF_FFFF, "the same slot")
        #expect(second.token != first.token, "a new generation")
        #expect(slots.claim(first.token) == nil)
        #expect(slots.claim(second.token) === second)
    }

    @Test func aFullTableRefusesUntilASlotIsEmptied() throws {
        let server = try HTTPServer { _ in .respond(.text(200, "")) }
        let slots = ConnectionSlots(capacity: 2)
        let taken = try (0..<2).map { _ in try #require(slots.fill { connection(server, $0) }) }
        #expect(slots.fill { connection(server, $0) } == nil)
        slots.empty(taken[0].token)
        #expect(slots.fill { connection(server, $0) } != nil)
    }

    /// A slot keeps its connection and a connection its server: shut down with connections open, the server still
    /// goes (its slots emptied), however many runs' listeners a long batch starts and stops.
    @Test func aServerShutDownWithOpenConnectionsIsReleased() throws {
        weak var released: HTTPServer?
        let client: RawClient
        do {
            let server = try startServer()
            released = server
            client = try RawClient(port: server.port, receiveTimeout: 3)
            client.send("GET /kept HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            server.shutdown()
        }
        #expect(released == nil)
        #expect(try client.readToEnd().isEmpty, "closed at shutdown")
    }

    /// A worker reads a socket in pieces of its buffer's size; a request longer than one piece arrives whole before
    /// the first read, so no further report comes for the rest: the holder reads on while its reads come back full.
    @Test func aRequestLongerThanOneReadIsReadWhole() throws {
        let server = try HTTPServer(
            host: "127.0.0.1", port: 0, limits: .init(), workers: 1, readSize: 16, handler: echo)
        server.start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port, receiveTimeout: 3)
        let body = String(repeating: "b", count: 500)
        client.send(
            "POST /long HTTP/1.1\r\nHost: t\r\nContent-Length: 500\r\n\r\n\(body)GET /next HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().text.hasSuffix("body=\(body)"))
        #expect(try client.readResponse().text.hasPrefix("GET /next "), "the pipelined request after it too")
    }

    /// A close that comes with the last bytes is reported once, with them: the holder reads on to the close and closes
    /// at once — a whole request answered, a half one dropped — not at the idle timeout or with a 408 ten seconds on.
    @Test func aCloseThatComesWithTheLastBytesIsSeen() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let whole = try RawClient(port: server.port, receiveTimeout: 3)
        whole.send("GET /last HTTP/1.1\r\nHost: t\r\n\r\n")
        whole.closeWriting()
        let started = monotonicSeconds()
        #expect(try whole.readResponse().text.hasPrefix("GET /last "))
        #expect(try whole.readToEnd().isEmpty)
        let half = try RawClient(port: server.port, receiveTimeout: 3)
        half.send("GET /half HTTP/1.1\r\nHo")
        half.closeWriting()
        #expect(try half.readToEnd().isEmpty, "closed without an answer")
        #expect(monotonicSeconds() - started < 2, "closed when the client closed, not at a timeout")
    }

    /// Bytes that arrive while a handler runs are reported to another worker, which leaves them to the holder: once
    /// the handler returns, the holder reads them instead of letting go.
    @Test func bytesThatArriveWhileAHandlerRunsAreRead() throws {
        let gate = DispatchSemaphore(value: 0)
        let server = try HTTPServer(workers: 2) { request in
            if request.path == "/wait" { gate.wait() }
            return .respond(.text(200, request.path))
        }
        server.start()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port, receiveTimeout: 3)
        client.send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(100_000)  // the first handler is running
        client.send("GET /after HTTP/1.1\r\nHost: t\r\n\r\n")
        client.closeWriting()
        usleep(100_000)  // the other worker took the report (bytes and the close) and left it to the holder
        gate.signal()
        #expect(try client.readResponse().text == "/wait")
        #expect(try client.readResponse().text == "/after")
        #expect(try client.readToEnd().isEmpty, "and the close after them")
    }
}
