import Foundation
import Glibc
import TestSupport
import Testing
@testable import LoopbackHTTP

/// How the server keeps its connections: a cap that closes the longest idle one to make room, no thread per
/// connection, and handlers that block starving no other connection.
extension HTTPServerTests {
    /// At the connection cap the longest idle keep-alive connection makes room: idle sockets cannot lock others out.
    @Test func atTheCapTheLongestIdleConnectionIsClosedToMakeRoom() throws {
        let server = try startServer(ServerLimits(maxConnections: 3))
        defer { server.shutdown() }
        var idle: [RawClient] = []
        for i in 0..<3 {
            let client = try RawClient(port: server.port)
            client.send("GET /warm/\(i) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            idle.append(client)
            usleep(20_000)  // so their idle times differ: idle[0] waits longest
        }
        let newcomer = try RawClient.request(port: server.port, "GET /new HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(newcomer.status == 200 && newcomer.text.hasPrefix("GET /new "), "served, not 503")
        #expect(try idle[0].readToEnd().isEmpty, "the longest idle connection was closed")
        idle[2].send("GET /still HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try idle[2].readResponse().text.hasPrefix("GET /still "), "the others still serve")
    }

    /// A connection busy with a request is never the one closed: with nothing idle, a newcomer gets a 503.
    @Test func atTheCapWithNothingIdleANewcomerGets503() throws {
        let server = try startServer(ServerLimits(maxConnections: 2))
        defer { server.shutdown() }
        let busy = try (0..<2).map { _ in try RawClient(port: server.port) }
        for client in busy { client.send("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc") }  // mid-body
        usleep(50_000)
        #expect(try RawClient.request(port: server.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n").status == 503)
        busy[0].send("defghij")
        #expect(try busy[0].readResponse().text.hasSuffix("body=abcdefghij"))
    }

    /// Idle keep-alive connections and clients half way through a request cost no thread: the workers stay at the
    /// pool's minimum however many sockets are open.
    @Test func openConnectionsCostNoThreads() throws {
        let server = try startServer()
        defer { server.shutdown() }
        var clients: [RawClient] = []
        for i in 0..<200 {
            let client = try RawClient(port: server.port)
            client.send("GET /\(i) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            if i % 2 == 0 { client.send("GET /half-way HTTP/1.1\r\nHo") }
            clients.append(client)
        }
        // Not one thread per connection (200 are open): at the pool's minimum, or one more when the machine held a
        // worker off its core for a whole tick mid-request, which the monitor rightly takes for a blocked handler.
        #expect(server.workerCount <= server.minimumWorkers + 1, "\(server.workerCount) workers for 200 connections")
        clients[1].send("GET /again HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try clients[1].readResponse().text.hasPrefix("GET /again "))
    }

    /// A request taken after an idle spell is not a blocked worker: a short handler (shorter than the monitor's tick)
    /// that a tick falls into, after a tick in which nothing finished because nothing came, starts no worker.
    @Test func aRequestAfterIdlingStartsNoWorker() throws {
        let server = try startServer { _ in
            usleep(5_000)  // a quarter of a tick (20 ms): one falls into a quarter of these handlers
            return .respond(.text(200, "ok"))
        }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        for i in 0..<30 {
            usleep(30_000)  // idle for more than a tick
            client.send("GET /\(i) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        #expect(server.workerCount == server.minimumWorkers)
    }

    /// Handlers that block (an injected latency sleeps) hold a worker each, and the pool starts more: a request that
    /// arrives while more handlers are blocked than there are workers is still answered at once.
    @Test func blockedHandlersStarveNobody() throws {
        let server = try HTTPServer(workers: 2) { request in
            if request.path == "/sleep" { Thread.sleep(forTimeInterval: 2) }
            return .respond(HTTPResponse.text(200, request.path))
        }
        server.start()
        defer { server.shutdown() }
        let sleepers = try (0..<(server.minimumWorkers + 2)).map { _ in try RawClient(port: server.port) }
        for client in sleepers { client.send("GET /sleep HTTP/1.1\r\nHost: t\r\n\r\n") }
        usleep(100_000)
        let started = Date()
        let quick = try RawClient.request(port: server.port, "GET /quick HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(quick.text == "/quick")
        #expect(Date().timeIntervalSince(started) < 1, "answered while every first worker still sleeps")
        #expect(server.workerCount > server.minimumWorkers)
        for client in sleepers { #expect(try client.readResponse().text == "/sleep") }
    }
}
