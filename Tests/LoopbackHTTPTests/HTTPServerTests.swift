import Foundation
import Glibc
import TestSupport
import Testing

@testable import LoopbackHTTP

/// Echoes what the server parsed, so each test can check parsing and connection bookkeeping over the wire.
let echo: HTTPHandler = { request in
    switch request.path {
    case "/reset":
        return .reset
    case "/truncate":
        return .truncate(HTTPResponse.text(200, String(repeating: "x", count: 100)), bodyBytes: 10)
    case "/close":
        return .respond(HTTPResponse(status: 200, headers: ["Connection": "close"], body: Data("bye".utf8)))
    default:
        let text =
            "\(request.method) \(request.target) conn=\(request.connectionID) idx=\(request.indexOnConnection) "
            + "body=\(String(decoding: request.body, as: UTF8.self))"
        return .respond(HTTPResponse.text(200, text))
    }
}

func startServer(_ limits: ServerLimits = .init(), handler: @escaping HTTPHandler = echo) throws -> HTTPServer {
    let server = try HTTPServer(limits: limits, handler: handler)
    server.start()
    return server
}

/// Runs `body` on a thread of its own; false when it has not returned within the time limit (a hang fails the
/// test instead of stalling the suite).
func within(seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    return done.wait(timeout: .now() + seconds) == .success
}

/// "conn=N" from an echo body.
func connectionID(_ response: RawClient.Response) -> String? {
    response.text.split(separator: " ").first { $0.hasPrefix("conn=") }.map(String.init)
}

@Suite struct HTTPServerTests {
    @Test func keepAliveReusesTheConnection() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = try client.readResponse()
        client.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
        let second = try client.readResponse()
        #expect(first.status == 200 && second.status == 200)
        #expect(first.text.contains("GET /a") && first.text.contains("idx=0"))
        #expect(second.text.contains("GET /b") && second.text.contains("idx=1"))
        #expect(connectionID(first) != nil && connectionID(first) == connectionID(second))
        #expect(first.header("Connection") == nil)
    }

    /// Every answer carries the server's clock as an IMF-fixdate (what `doctor` reads clock skew from); a handler's own
    /// Date is kept.
    @Test func answersCarryADate() throws {
        let server = try startServer { request in
            request.path == "/own"
                ? .respond(HTTPResponse(status: 200, headers: ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"], body: Data()))
                : .respond(HTTPResponse.text(200, "ok"))
        }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
        let date = try #require(try client.readResponse().header("Date"))
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        formatter.timeZone = TimeZone(identifier: "GMT")
        let parsed = try #require(formatter.date(from: date), "\(date)")
        #expect(abs(parsed.timeIntervalSinceNow) < 5)
        client.send("GET /own HTTP/1.1\r\nHost: x\r\n\r\n")
        let own = try client.readResponse()
        #expect(own.header("Date") == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(own.headers.filter { $0.0.lowercased() == "date" }.count == 1)
    }

    @Test func separateConnectionsGetDifferentIDs() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let a = try RawClient.request(port: server.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        let b = try RawClient.request(port: server.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(connectionID(a) != connectionID(b))
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        // Three requests in one segment, one with a body, with bare-LF line endings on the last one.
        client.send(
            "GET /1 HTTP/1.1\r\nHost: t\r\n\r\nPOST /2 HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabcGET /3 HTTP/1.1\nHost: t\n\n"
        )
        let r1 = try client.readResponse()
        let r2 = try client.readResponse()
        let r3 = try client.readResponse()
        #expect(r1.text.hasPrefix("GET /1 ") && r1.text.contains("idx=0"))
        #expect(r2.text.hasPrefix("POST /2 ") && r2.text.hasSuffix("body=abc") && r2.text.contains("idx=1"))
        #expect(r3.text.hasPrefix("GET /3 ") && r3.text.contains("idx=2"))
    }

    @Test func contentLengthBody() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        // Sent in two pieces so the server must wait for the rest of the body.
        client.send("POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 11\r\n\r\nhello")
        usleep(20_000)
        client.send(" world")
        let response = try client.readResponse()
        #expect(response.text.hasSuffix("body=hello world"))
    }

    @Test func chunkedBodyIsDechunked() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send(
            "POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n")
        usleep(20_000)
        client.send("0\r\nX-Trailer: yes\r\n\r\nGET /after HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.text.hasSuffix("body=hello world"))
        // The trailer was consumed exactly: the next request on the connection parses.
        let after = try client.readResponse()
        #expect(after.text.hasPrefix("GET /after "))
    }

    @Test func oversizedHeaderIs431() throws {
        let server = try startServer(ServerLimits(maxHeaderBytes: 1024))
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 2000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(response.header("Connection") == "close")
        #expect(try client.readToEnd().isEmpty)
    }

    /// The limit holds while the head is still arriving: a client that never ends its head gets 431 as soon as it
    /// passes the limit, not a 408 once the request timeout runs out.
    @Test func anEndlessHeadIs431AsSoonAsItPassesTheLimit() throws {
        let server = try startServer(ServerLimits(maxHeaderBytes: 1024, requestTimeout: 3))
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let started = ContinuousClock.now
        client.send("GET / HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 600))")
        usleep(50_000)
        client.send(String(repeating: "b", count: 600))  // past 1 KiB, and still no blank line
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect((ContinuousClock.now - started) < .seconds(1))
        #expect(try client.readToEnd().isEmpty)
    }

    /// A chunk size too long to be a size is refused (it would overflow), and the server goes on serving.
    @Test(arguments: ["10000000000000000", "ffffffffffffffffffffffff", "0000000000001"])
    func anOverlongChunkSizeIs400AndTheServerKeepsServing(size: String) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("POST /c HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabc\r\n0\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.text.contains("invalid chunk size"))
        let after = try RawClient.request(port: server.port, "GET /after HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(after.status == 200 && after.text.hasPrefix("GET /after "))
    }

    /// A chunk size that is a size, but a huge one, is only as big as the body limit allows.
    @Test func aHugeButWellFormedChunkSizeIs413() throws {
        let server = try startServer(ServerLimits(maxBodyBytes: 1000))
        defer { server.shutdown() }
        let response = try RawClient.request(
            port: server.port, "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\nabc")
        #expect(response.status == 413)
    }

    @Test func oversizedBodyIs413() throws {
        let server = try startServer(ServerLimits(maxBodyBytes: 100))
        defer { server.shutdown() }
        // Content-Length is checked before any body byte is read.
        let declared = try RawClient.request(
            port: server.port, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n")
        #expect(declared.status == 413)
        // Chunked bodies are checked on their running size.
        let chunk = String(repeating: "z", count: 60)
        let chunked = try RawClient.request(
            port: server.port,
            "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3c\r\n\(chunk)\r\n3c\r\n\(chunk)\r\n0\r\n\r\n"
        )
        #expect(chunked.status == 413)
        // Exactly at the limit is fine.
        let ok = try RawClient.request(
            port: server.port,
            "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n\(String(repeating: "k", count: 100))")
        #expect(ok.status == 200)
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET /\r\n\r\n",
        "GET / HTTP/1.1 extra\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n",
        "G(T / HTTP/1.1\r\nHost: t\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nNo colon here\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nBad Name: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nX: a\r\n folded\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 12abc\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nX-Nul: a\u{0}b\r\n\r\n",
        // RFC 9112: a bare CR, a missing or repeated Host, Transfer-Encoding on HTTP/1.0.
        "GET / HTTP/1.1\r\nHost: t\r\nX-A: a\rInjected: b\r\n\r\n",
        "GET / HTTP/1.1\rX\r\nHost: t\r\n\r\n",
        "GET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: t\r\nX-Nul: \u{0}\r\n\r\n",
    ])
    func malformedRequestsAre400AndClose(raw: String) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send(raw)
        let response = try client.readResponse()
        #expect(response.status == 400, "for \(raw.debugDescription)")
        #expect(response.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(try client.readToEnd().isEmpty)
    }

    /// Chunked is the only transfer coding this server decodes; any other is "not implemented", not "bad".
    @Test(arguments: ["gzip", "gzip, chunked", "chunked, chunked", "identity"])
    func anotherTransferCodingIs501(coding: String) throws {
        let server = try startServer()
        defer { server.shutdown() }
        let response = try RawClient.request(
            port: server.port, "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: \(coding)\r\n\r\n0\r\n\r\n")
        #expect(response.status == 501, "\(coding)")
        #expect(response.header("Connection") == "close")
    }

    /// A request that arrives a few bytes at a time — its blank line split across reads — is read whole.
    @Test func aRequestArrivingInPiecesIsReadWhole() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let raw = Array("POST /pieces HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello".utf8)
        var pieces = [Array(raw[0..<3]), Array(raw[3..<4]), Array(raw[4..<34]), Array(raw[34..<49])]
        pieces += raw[49...].map { [$0] }  // the blank line and the body, a byte at a time
        for piece in pieces {
            client.send(piece)
            usleep(10_000)
        }
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text.hasPrefix("POST /pieces ") && response.text.hasSuffix("idx=0 body=hello"))
    }

    @Test func slowClientGets408AndIsClosed() throws {
        let server = try startServer(ServerLimits(requestTimeout: 0.3))
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let started = Date()
        // Trickle a request that never completes.
        client.send("GET / HT")
        let response = try client.readResponse()
        let elapsed = Date().timeIntervalSince(started)
        #expect(response.status == 408)
        #expect(elapsed >= 0.25 && elapsed < 1, "at the 0.3 s request timeout")
        #expect(try client.readToEnd().isEmpty)
    }

    @Test func byteByByteClientIsCutOffAtTheRequestDeadline() throws {
        // Each byte arrives well within any per-read timeout, but the whole request takes too long.
        let server = try startServer(ServerLimits(requestTimeout: 0.4))
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let started = Date()
        var got408 = false
        for byte in "GET /slow HTTP/1.1\r\nHost: loris\r\nX-A: bbbbbbbbbbbbbbbbbbbbbbbb\r\n\r\n".utf8 {
            client.send([byte])
            usleep(20_000)
            if Date().timeIntervalSince(started) > 0.6 { break }
        }
        if let response = try? client.readResponse() { got408 = response.status == 408 }
        #expect(got408)
    }

    @Test func idleConnectionIsClosed() throws {
        let server = try startServer(ServerLimits(idleTimeout: 0.3))
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        let started = Date()
        // Nothing more is sent: the server closes without a response.
        #expect(try client.readToEnd().isEmpty)
        let idle = Date().timeIntervalSince(started)
        #expect(idle >= 0.25 && idle < 1, "at the 0.3 s idle timeout")
    }

    @Test func connectionCloseAndHTTP10Close() throws {
        let server = try startServer()
        defer { server.shutdown() }
        for raw in [
            "GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", "GET / HTTP/1.0\r\n\r\n",
            "GET /close HTTP/1.1\r\nHost: t\r\n\r\n",
        ] {
            let client = try RawClient(port: server.port)
            client.send(raw)
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(try client.readToEnd().isEmpty)
        }
        // HTTP/1.0 with keep-alive asked stays open.
        let client = try RawClient(port: server.port)
        client.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        _ = try client.readResponse()
        client.send("GET /b HTTP/1.0\r\n\r\n")
        #expect(try client.readResponse().text.contains("idx=1"))
    }

    /// Header names are read whatever their case, and a body that arrives in parts after `100 Continue` gets one:
    /// what the request under way has done is kept between reads.
    @Test func headerNamesInAnyCaseAndOneContinueForABodyInParts() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send(
            "POST /up HTTP/1.1\r\nhOsT: t\r\nEXPECT: 100-Continue\r\ncontent-LENGTH: 6\r\nconnection: Keep-Alive, CLOSE\r\n\r\n"
        )
        #expect(try client.readResponse().status == 100)
        client.send("abc")
        // The first part is read on its own (most often): the request stays under way.
        Thread.sleep(forTimeInterval: 0.05)
        client.send("def")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text.hasSuffix("body=abcdef"))
        #expect(response.header("Connection") == "close")
        #expect(try client.readToEnd().isEmpty)
    }

    @Test func manyConcurrentClients() throws {
        let server = try startServer()
        defer { server.shutdown() }
        // All 256 connections are open at once before any is answered-and-read.
        var clients: [RawClient] = []
        for _ in 0..<256 { clients.append(try RawClient(port: server.port)) }
        for (i, client) in clients.enumerated() { client.send("GET /n/\(i) HTTP/1.1\r\nHost: t\r\n\r\n") }
        var ids = Set<String>()
        for (i, client) in clients.enumerated() {
            let response = try client.readResponse()
            #expect(response.status == 200 && response.text.hasPrefix("GET /n/\(i) "))
            if let id = connectionID(response) { ids.insert(id) }
        }
        #expect(ids.count == 256)
    }

    @Test func resetIsSeenAsConnectionReset() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /reset HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(throws: RawClient.Failure.reset) { try client.readResponse() }
    }

    @Test func truncateDeliversFewerBytesThanContentLength() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /truncate HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.header("Content-Length") == "100")
        #expect(response.body.count == 10)
        #expect(response.truncated)
    }

    @Test func headHasNoBody() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("HEAD /h HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try client.readResponse(headRequest: true)
        #expect(head.status == 200)
        #expect(Int(head.header("Content-Length") ?? "") ?? 0 > 0)
        // If any body bytes had been sent they would corrupt this next response.
        client.send("GET /next HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().text.hasPrefix("GET /next "))
    }

    @Test func shutdownClosesEverythingAndIsIdempotent() throws {
        let server = try startServer()
        let client = try RawClient(port: server.port)
        client.send("GET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        let waiterDone = DispatchSemaphore(value: 0)
        Thread {
            server.waitUntilShutdown()
            waiterDone.signal()
        }.start()
        server.shutdown()
        #expect(waiterDone.wait(timeout: .now() + 2) == .success, "waitUntilShutdown returns once the server is down")
        // The open keep-alive connection was closed by the server.
        #expect(try client.readToEnd().isEmpty)
        // The listener is gone.
        #expect(throws: RawClient.Failure.closed) { _ = try RawClient(port: server.port) }
        // A second shutdown and a late wait return at once.
        #expect(
            within(seconds: 2) {
                server.shutdown()
                server.waitUntilShutdown()
            })
    }

    @Test func shutdownBeforeStartAndConcurrentShutdowns() throws {
        let idle = try HTTPServer(handler: echo)
        #expect(
            within(seconds: 2) {
                idle.shutdown()
                idle.waitUntilShutdown()
            })
        #expect(throws: RawClient.Failure.closed) { _ = try RawClient(port: idle.port) }
        let server = try startServer()
        #expect(try RawClient.request(port: server.port, "GET / HTTP/1.1\r\nHost: t\r\n\r\n").status == 200)
        #expect(
            within(seconds: 2) {
                DispatchQueue.concurrentPerform(iterations: 4) { _ in server.shutdown() }
                server.waitUntilShutdown()
            })
        #expect(throws: RawClient.Failure.closed) { _ = try RawClient(port: server.port) }
    }

    @Test func busyPortIsADescriptiveError() throws {
        let server = try HTTPServer(handler: echo)
        defer { server.shutdown() }
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
        let error = #expect(throws: HTTPServerError.self) { try HTTPServer(port: server.port, handler: echo) }
        #expect(error?.description.contains("port \(server.port) is already in use") == true)
    }

    @Test func curlInterop() throws {
        let server = try startServer()
        defer { server.shutdown() }
        // A body large enough that curl asks for `100 Continue` first.
        let body = String(repeating: "q", count: 2_000_000)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("loopback-\(UUID().uuidString)")
        try Data(body.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try runTool(
            "/usr/bin/curl",
            [
                "-sS", "--max-time", "5", "--data-binary", "@\(file.path)", "-H", "Expect: 100-continue",
                "\(server.baseURL)/up", "\(server.baseURL)/again",
            ])
        #expect(status == 0)
        #expect(output.hasPrefix("POST /up conn="))
        #expect(output.contains("POST /again"))
        #expect(output.count > 2 * body.count)
    }
}
