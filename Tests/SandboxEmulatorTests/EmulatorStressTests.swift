import Foundation
import Glibc
import TestSupport
import Testing

@testable import SandboxEmulator

/// The emulator as a hostile or careless crowd meets it: many connections at once, slow clients, long pipelines,
/// oversized input and request-smuggling shapes. Each gets a clear status (or its answer), nothing crashes, and a
/// request hidden behind a refused one is never served.
@Suite struct EmulatorStressTests {
    private func started() throws -> Emulator {
        let emulator = try Emulator()
        emulator.start()
        return emulator
    }

    /// A Bahn intent read, as a merchant backend sends it.
    private func intentRead(_ id: String) -> String {
        "GET /api/payment_intents/\(id) HTTP/1.1\r\nHost: t\r\nBn-Api-Key: \(TestCredentials.bahnAPIKey)\r\nBn-Request-Id: \(UUID().uuidString.lowercased())\r\n\r\n"
    }

    @Test func aThousandConnectionsAtOnceAreEachAnswered() throws {
        let emulator = try started()
        defer { emulator.shutdown() }
        let intent = try BahnTestClient(port: emulator.port).createIntent(amount: 1200)
        // Both ends of 1,000 connections live in this process: make room for them where the soft limit is the usual
        // 1,024.
        var files = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        if files.rlim_cur < 4096 {
            files.rlim_cur = min(4096, files.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &files)
        }
        // Every connection is open, and has sent its request, before any answer is read.
        var clients: [RawClient] = []
        for _ in 0..<1000 { clients.append(try RawClient(port: emulator.port, receiveTimeout: 20)) }
        for (i, client) in clients.enumerated() {
            switch i % 3 {
            case 0: client.send("GET /_sandbox/health HTTP/1.1\r\nHost: t\r\n\r\n")
            case 1: client.send(intentRead(intent))
            default: client.send("GET /no/such/route/\(i) HTTP/1.1\r\nHost: t\r\n\r\n")
            }
        }
        var statuses: [Int: Int] = [:]
        for (i, client) in clients.enumerated() {
            let response = try client.readResponse()
            statuses[response.status, default: 0] += 1
            if i % 3 == 1 { #expect(response.text.contains(intent)) }
        }
        #expect(statuses == [200: 667, 404: 333])
    }

    @Test func slowClientsHoldUpNobodyElse() throws {
        let emulator = try started()
        defer { emulator.shutdown() }
        // A hundred clients that began a request and stopped half way through its head.
        var slow: [RawClient] = []
        for _ in 0..<100 {
            let client = try RawClient(port: emulator.port)
            client.send("GET /_sandbox/health HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            slow.append(client)
        }
        let started = Date()
        for _ in 0..<200 {
            #expect(
                try RawClient.request(
                    port: emulator.port, "GET /_sandbox/health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
                ).status == 200)
        }
        #expect(Date().timeIntervalSince(started) < 10)
        // The slow ones are still waiting for their own deadline, not answered with someone else's bytes.
        for client in slow.prefix(3) {
            client.send("finally\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
    }

    @Test func aLongPipelineIsAnsweredInOrder() throws {
        let emulator = try started()
        defer { emulator.shutdown() }
        let intent = try BahnTestClient(port: emulator.port).createIntent(amount: 1300)
        let client = try RawClient(port: emulator.port)
        var expected: [Int] = []
        var raw = ""
        for i in 0..<300 {
            switch i % 3 {
            case 0:
                raw += "GET /_sandbox/health HTTP/1.1\r\nHost: t\r\n\r\n"
                expected.append(200)
            case 1:
                raw += intentRead(intent)
                expected.append(200)
            default:
                raw += "GET /nothing/\(i) HTTP/1.1\r\nHost: t\r\n\r\n"
                expected.append(404)
            }
        }
        client.send(raw)
        var seen: [Int] = []
        for i in 0..<300 {
            let response = try client.readResponse()
            seen.append(response.status)
            if i % 3 == 2 { #expect(response.text.contains("/nothing/\(i)")) }
        }
        #expect(seen == expected)
    }

    /// The shapes a proxy and a server may read differently. Each is refused with a status and the connection
    /// closed, so the request smuggled behind it is never served: nothing more comes back.
    @Test(
        arguments: [
            // Content-Length and Transfer-Encoding together (RFC 9112 §6.3: a server may reject; this one does).
            (
                "POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                400
            ),
            (
                "POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n",
                400
            ),
            // Two lengths that disagree, and a list of them.
            ("POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nContent-Length: 44\r\n\r\n", 400),
            ("POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nContent-Length: 0, 44\r\n\r\n", 400),
            // A chunk size past any integer, and one past the body limit.
            (
                "POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffffffff\r\n",
                400
            ),
            ("POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n", 413),
            // A transfer coding this server does not decode, and chunked hidden behind a space or a tab.
            ("POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
            ("POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400),
            (
                "POST /_sandbox/health HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:\tchunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
                400
            ),
        ] as [(String, Int)])
    func smugglingShapesAreRefusedAndWhatHidesBehindThemIsNeverServed(shape: String, status: Int) throws {
        let emulator = try started()
        defer { emulator.shutdown() }
        let client = try RawClient(port: emulator.port)
        client.send(shape + "GET /_sandbox/ledger HTTP/1.1\r\nHost: t\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == status, "\(shape.debugDescription)")
        #expect(response.header("Connection") == "close")
        #expect(try client.readToEnd().isEmpty, "a second answer after \(shape.debugDescription)")
    }

    @Test func oversizedAndMalformedInputGetsAStatusEach() throws {
        let emulator = try started()
        defer { emulator.shutdown() }
        let huge = "GET /_sandbox/health HTTP/1.1\r\nHost: t\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n"
        #expect(try RawClient.request(port: emulator.port, huge).status == 431)
        // The length alone is refused: the 9 MB never have to be sent.
        #expect(
            try RawClient.request(
                port: emulator.port, "POST /centra/graphql HTTP/1.1\r\nHost: t\r\nContent-Length: 9437184\r\n\r\n"
            ).status == 413)
        var garbage = [UInt8](repeating: 0, count: 4096)
        for i in garbage.indices { garbage[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 7) }
        let client = try RawClient(port: emulator.port)
        // (Without a line end it is a request line still arriving, which waits for its deadline.)
        client.send(garbage + Array("\r\n\r\n".utf8))
        #expect(try client.readResponse().status == 400)
        // And the emulator still serves.
        #expect(
            try RawClient.request(port: emulator.port, "GET /_sandbox/health HTTP/1.1\r\nHost: t\r\n\r\n").status == 200
        )
    }
}
