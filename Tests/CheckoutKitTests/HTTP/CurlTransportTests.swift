import Foundation
import Synchronization
import Testing

@testable import CheckoutKit

@Suite struct CurlTransportTests {
    func send(
        _ transport: CurlTransport, _ method: String, _ url: String, headers: HTTPHeaders = [:],
        body: Data? = nil, timeout: Double = 5
    ) async -> Result<HTTPClientResponse, TransportError> {
        do {
            return .success(
                try await transport.send(
                    HTTPClientRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)))
        } catch { return .failure(error) }
    }

    @Test func keepAliveReusesTheConnection() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        let transport = CurlTransport(options: .direct)
        let first = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/a")))
        let second = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/b")))
        #expect(first.status == 200)
        #expect(second.status == 200)
        #expect(second.reusedConnection)
        let seen = server.requests
        #expect(seen.count == 2)
        #expect(seen[0].connectionID == seen[1].connectionID)
        #expect(seen[1].indexOnConnection == 1)
    }

    /// A batch worker lends its thread to the transport its runs share: the runs' steps prefer it, and the transport
    /// leaves it running when it goes (the worker stops it, after its last run).
    @Test func aLentThreadIsPreferredAndOutlivesTheTransport() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        let thread = WorkerThread(name: "test.lent")
        defer { thread.stop() }
        var transport: CurlTransport? = CurlTransport(options: .direct, on: thread)
        #expect(transport?.preferredExecutor as AnyObject? === thread)
        let status = try await withTaskExecutorPreference(thread) { () async throws -> Int in
            #expect(thread.isCurrent)
            return try await transport!.send(HTTPClientRequest(method: "GET", url: server.url("/a"))).status
        }
        #expect(status == 200)
        transport = nil
        #expect(!thread.isStopped)
        let ranThere = await withCheckedContinuation { continuation in
            thread.submit { continuation.resume(returning: thread.isCurrent) }
        }
        #expect(ranThere)
    }

    /// Work given a worker after it stopped still runs, on a thread of its own: a task that waits for it never hangs.
    @Test func workGivenAStoppedWorkerStillRuns() async {
        let thread = WorkerThread(name: "test.stopped")
        thread.stop()
        #expect(thread.isStopped)
        // Polled, not awaited: a job dropped would leave an await hanging.
        let ran = Mutex(false)
        thread.submit { ran.withLock { $0 = true } }
        let deadline = ContinuousClock.now + .seconds(10)
        while !ran.withLock({ $0 }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
        #expect(ran.withLock { $0 })
        // The thread it had goes back to SpareThreads, where other work may run on it: it is the worker's no more.
        while thread.hasThread, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        #expect(!thread.hasThread)
    }

    @Test func headersAndBinaryBodyArriveExactly() async throws {
        let server = try TestServer { request, _ in
            .respond(
                HTTPResponse(
                    status: 201, headers: ["X-Reply": "yes", "Content-Type": "application/octet-stream"],
                    body: request.body))
        }
        let transport = CurlTransport(options: .direct)
        let body = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) } + [0, 0, 255, 13, 10])
        let response = try await transport.send(
            HTTPClientRequest(
                method: "POST", url: server.url("/upload?x=1"),
                headers: [
                    "X-Custom": "value with spaces", "Content-Type": "application/x-test", "Idempotency-Key": "k-1",
                ],
                body: body))
        let received = try #require(server.requests.first)
        #expect(received.method == "POST")
        #expect(received.target == "/upload?x=1")
        #expect(received.body == body)
        #expect(received.headers["X-Custom"] == "value with spaces")
        #expect(received.headers["Content-Type"] == "application/x-test")
        #expect(received.headers["Idempotency-Key"] == "k-1")
        #expect(received.headers["Expect"] == nil)
        #expect(response.status == 201)
        #expect(response.body == body)
        #expect(response.headers["x-reply"] == "yes")
        #expect(response.httpVersion == "HTTP/1.1")
    }

    @Test func postWithoutBodyAndOtherMethods() async throws {
        let server = try TestServer { request, _ in
            .json(200, ["method": .string(request.method), "length": .number(Double(request.body.count))])
        }
        let transport = CurlTransport(options: .direct)
        for method in ["POST", "PUT", "PATCH", "DELETE", "GET"] {
            let response = try await transport.send(HTTPClientRequest(method: method, url: server.url("/m")))
            #expect(response.json == ["method": .string(method), "length": 0])
        }
        let posted = try #require(server.requests.first)
        #expect(posted.headers["Content-Type"] == nil)
        let head = try await transport.send(HTTPClientRequest(method: "HEAD", url: server.url("/m")))
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
    }

    @Test func timingsAreConsistent() async throws {
        let server = try TestServer { _, _ in
            Thread.sleep(forTimeInterval: 0.05)
            return .json(200, ["ok": true])
        }
        let transport = CurlTransport(options: .direct)
        let response = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/t")))
        let t = response.timings
        for phase in [t.dns, t.connect, t.tls, t.send, t.wait, t.receive, t.total] { #expect(phase >= 0) }
        #expect(t.total >= t.wait)
        #expect(t.wait >= 0.04)
        #expect(t.total < 5)
    }

    @Test func connectionRefusedIsUnreachable() async throws {
        let closed = try ClosedPort()
        let result = await send(CurlTransport(options: .direct), "GET", "http://127.0.0.1:\(closed.port)/x")
        guard case .failure(.unreachable) = result else {
            Issue.record("expected unreachable, got \(result)")
            return
        }
        #expect(TransportError.unreachable("").requestNeverSent)
    }

    @Test func resetIsConnectionLost() async throws {
        let server = try TestServer { _, _ in .reset }
        let result = await send(CurlTransport(options: .direct), "GET", server.url("/reset"))
        guard case .failure(.connectionLost) = result else {
            Issue.record("expected connectionLost, got \(result)")
            return
        }
    }

    @Test func truncatedBodyIsConnectionLost() async throws {
        let server = try TestServer { _, _ in .truncate(.text(200, String(repeating: "x", count: 1000)), bodyBytes: 10)
        }
        let result = await send(CurlTransport(options: .direct), "GET", server.url("/short"))
        guard case .failure(.connectionLost) = result else {
            Issue.record("expected connectionLost, got \(result)")
            return
        }
    }

    /// A POST that the server acted on and then lost must not be sent again behind the engine's back, even on a
    /// reused connection (libcurl silently resends a request on a reused connection that returned nothing).
    @Test func aLostPostOnAReusedConnectionIsNotResent() async throws {
        let server = try TestServer { request, attempt in
            request.path == "/charge" && attempt == 1 ? .reset : .json(200, ["ok": true])
        }
        let transport = CurlTransport(options: .direct)
        _ = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/warm")))
        let result = await send(transport, "POST", server.url("/charge"), body: Data("{}".utf8))
        guard case .failure(.connectionLost) = result else {
            Issue.record("expected connectionLost, got \(result)")
            return
        }
        #expect(server.count("/charge") == 1)
    }

    /// Reads and keyed writes ride the kept connection; a write without an idempotency key gets a fresh one
    /// (`RetryPolicy.mayReuseConnection`).
    @Test func keyedWritesAndReadsReuseTheConnectionAndOtherWritesDoNot() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        let transport = CurlTransport(options: .direct)
        _ = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/warm")))
        let keyed = try await transport.send(
            HTTPClientRequest(
                method: "POST", url: server.url("/keyed"),
                headers: ["Bn-Idempotency-Key": "k-1"], body: Data("{}".utf8)))
        let query = try await transport.send(
            HTTPClientRequest(
                method: "POST", url: server.url("/graphql"), body: Data("{}".utf8),
                readOnly: true))
        let mutation = try await transport.send(
            HTTPClientRequest(method: "POST", url: server.url("/graphql"), body: Data("{}".utf8)))
        #expect(keyed.reusedConnection && query.reusedConnection)
        #expect(!mutation.reusedConnection)
        let seen = server.requests
        #expect(seen.count == 4)
        #expect(
            Set(seen[0..<3].map(\.connectionID)).count == 1,
            "the read, the keyed write and the query share one connection")
        #expect(seen[3].connectionID != seen[0].connectionID, "the unkeyed mutation has a connection of its own")
    }

    /// libcurl would send a request again, unseen, when the kept connection it went out on died before any answer byte;
    /// that resend is refused, so the engine sees the loss (and repeats a keyed write itself, counted, or not).
    @Test(arguments: [("POST", true), ("GET", false)])
    func aRequestLostOnTheKeptConnectionIsNotResentByLibcurl(method: String, keyed: Bool) async throws {
        let server = try TestServer { request, attempt in
            request.path == "/charge" && attempt == 1 ? .reset : .json(200, ["ok": true])
        }
        let transport = CurlTransport(options: .direct)
        _ = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/warm")))
        let result = await send(
            transport, method, server.url("/charge"), headers: keyed ? ["Idempotency-Key": "k-1"] : [:],
            body: keyed ? Data("{}".utf8) : nil)
        guard case .failure(.connectionLost) = result else {
            Issue.record("expected connectionLost, got \(result)")
            return
        }
        #expect(server.count("/charge") == 1)
        #expect(server.requests.map(\.connectionID).count == 2)
        #expect(Set(server.requests.map(\.connectionID)).count == 1, "the lost request went out on the kept connection")
        // The transport is still of use: the next request goes out on a fresh connection.
        let next = try await transport.send(HTTPClientRequest(method: "GET", url: server.url("/after")))
        #expect(next.status == 200)
    }

    @Test func slowServerTimesOut() async throws {
        let server = try TestServer { _, _ in
            Thread.sleep(forTimeInterval: 2)
            return .json(200, [:])
        }
        let started = ContinuousClock.now
        let result = await send(CurlTransport(options: .direct), "GET", server.url("/slow"), timeout: 0.3)
        guard case .failure(.timedOut) = result else {
            Issue.record("expected timedOut, got \(result)")
            return
        }
        // Well before the server would have answered (a loaded 2-core machine delays the resumption a little).
        #expect((ContinuousClock.now - started).seconds < 1.5)
    }

    @Test func malformedURLIsInvalidRequest() async {
        let result = await send(CurlTransport(options: .direct), "GET", "htp:/nonsense")
        guard case .failure(let error) = result else {
            Issue.record("a malformed URL succeeded")
            return
        }
        #expect(!error.requestNeverSent)
    }

    @Test func parallelTransportsAllSucceed() async throws {
        let server = try TestServer { request, _ in .json(200, ["path": .string(request.path)]) }
        let results = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    let transport = CurlTransport(options: .direct)
                    for j in 0..<5 {
                        guard
                            let r = try? await transport.send(
                                HTTPClientRequest(method: "GET", url: server.url("/p\(i)-\(j)"))),
                            r.status == 200, r.json == ["path": .string("/p\(i)-\(j)")]
                        else { return false }
                    }
                    return true
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 16)
        #expect(results.allSatisfy { $0 })
        #expect(server.requests.count == 80)
    }
}
