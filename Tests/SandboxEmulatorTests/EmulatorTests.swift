import Foundation
import LoopbackHTTP
import TestSupport
import Testing

@testable import SandboxEmulator

/// Starts an emulator for one test; callers `defer { emulator.shutdown() }`.
func startEmulator(_ faults: String = "") throws -> Emulator {
    let emulator = try Emulator(faults: try FaultSpec(parsing: faults))
    emulator.start()
    return emulator
}

/// One request on a fresh connection, as raw bytes on the wire.
func call(
    _ emulator: Emulator, _ method: String, _ path: String, json: String? = nil,
    headers: [String: String] = [:]
) throws -> RawClient.Response {
    var raw = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for (name, value) in headers { raw += "\(name): \(value)\r\n" }
    if let json {
        raw += "Content-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
    } else {
        raw += "\r\n"
    }
    return try RawClient.request(port: emulator.port, raw)
}

func object(_ response: RawClient.Response) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
}

func errorCode(_ response: RawClient.Response) -> String? {
    (object(response)["error"] as? [String: Any])?["code"] as? String
}

func order(_ response: RawClient.Response) -> [String: Any] {
    object(response)["order"] as? [String: Any] ?? [:]
}

@Suite struct BuiltinRouteTests {
    @Test func health() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        let response = try call(emulator, "GET", "/_sandbox/health")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json")
        #expect(object(response)["status"] as? String == "ok")
        #expect(object(response)["service"] as? String == "checkout-driver sandbox emulator")
    }

    @Test func echoReportsWhatWasSent() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        let response = try call(
            emulator, "POST", "/_sandbox/echo?q=1", json: #"{"a":[1,2]}"#, headers: ["X-Trace": "t1"])
        let body = object(response)
        #expect(body["method"] as? String == "POST")
        #expect(body["path"] as? String == "/_sandbox/echo")
        #expect((body["headers"] as? [String: String])?["x-trace"] == "t1")
        #expect(((body["json"] as? [String: Any])?["a"] as? [Int]) == [1, 2])
        #expect(body["body"] as? String == #"{"a":[1,2]}"#)
        let plain = try call(emulator, "POST", "/_sandbox/echo", json: "not json")
        #expect(object(plain)["json"] is NSNull)
    }

    @Test func ordersPollingAndIdempotentPay() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        let created = try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount": 1250, "currency": "eur"}"#)
        #expect(created.status == 201)
        let id = try #require(order(created)["id"] as? String)
        #expect(id.hasPrefix("ord_") && id.count == 20)
        #expect(order(created)["status"] as? String == "pending" && order(created)["currency"] as? String == "EUR")

        // The third GET finds it paid.
        let polls = try (1...3).map { _ in try call(emulator, "GET", "/_sandbox/orders/\(id)") }
        #expect(polls.map { order($0)["status"] as? String } == ["pending", "pending", "paid"])
        #expect(polls.map { order($0)["polls"] as? Int } == [1, 2, 3])

        // A second order, paid with an idempotency key, twice: one charge, same response.
        let second = try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount": 500, "currency": "USD"}"#)
        let secondID = try #require(order(second)["id"] as? String)
        let pay1 = try call(emulator, "POST", "/_sandbox/orders/\(secondID)/pay", headers: ["Idempotency-Key": "k1"])
        let pay2 = try call(emulator, "POST", "/_sandbox/orders/\(secondID)/pay", headers: ["Idempotency-Key": "k1"])
        #expect(pay1.status == 200 && pay2.status == 200)
        #expect(pay1.body == pay2.body)
        #expect(pay2.header("Idempotent-Replayed") == "true")
        #expect(emulator.ledger.entries().map(\.kind) == [.authorization, .capture])
        #expect(
            emulator.ledger.entries().allSatisfy {
                $0.reference == secondID && $0.amount == 500 && $0.currency == "USD"
            })

        // Without a key, a repeat is a conflict and charges nothing.
        let pay3 = try call(emulator, "POST", "/_sandbox/orders/\(secondID)/pay")
        #expect(pay3.status == 409 && errorCode(pay3) == "order_already_paid")
        #expect(emulator.ledger.entries().count == 2)

        let unknown = try call(emulator, "GET", "/_sandbox/orders/ord_nope")
        #expect(unknown.status == 404 && errorCode(unknown) == "resource_missing")
        #expect(try call(emulator, "POST", "/_sandbox/orders/ord_nope/pay").status == 404)
    }

    @Test(arguments: [
        (#"{"currency":"EUR"}"#, "parameter_missing", "amount"),
        (#"{"amount":100}"#, "parameter_missing", "currency"),
        (#"{"amount":"100","currency":"EUR"}"#, "parameter_invalid", "amount"),
        (#"{"amount":true,"currency":"EUR"}"#, "parameter_invalid", "amount"),
        (#"{"amount":12.5,"currency":"EUR"}"#, "parameter_invalid", "amount"),
        (#"{"amount":-1,"currency":"EUR"}"#, "parameter_invalid", "amount"),
        (#"{"amount":100,"currency":"EURO"}"#, "parameter_invalid", "currency"),
        ("nope", "invalid_json", nil),
    ])
    func invalidOrders(json: String, code: String, param: String?) throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        let response = try call(emulator, "POST", "/_sandbox/orders", json: json)
        let error = object(response)["error"] as? [String: Any]
        #expect(response.status == 400)
        #expect(error?["type"] as? String == "invalid_request_error")
        #expect(error?["code"] as? String == code)
        #expect(error?["param"] as? String == param)
    }

    /// The ledger is read page by page, as real services page their lists: a read returns at most its page, whatever
    /// the ledger holds.
    @Test func theLedgerIsReadInPages() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        for n in 1...250 {
            emulator.ledger.append(provider: "bahn", kind: .capture, reference: "pi_\(n)", amount: n, currency: "EUR")
        }
        func page(_ query: String) throws -> (ids: [String], hasMore: Bool?) {
            let body = object(try call(emulator, "GET", "/_sandbox/ledger" + query))
            return (
                ((body["entries"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String },
                body["hasMore"] as? Bool
            )
        }
        let first = try page("")
        #expect(
            first.ids.count == 100 && first.ids.first == "le_000001" && first.ids.last == "le_000100"
                && first.hasMore == true)
        let second = try page("?since=le_000100")
        #expect(second.ids.first == "le_000101" && second.ids.count == 100 && second.hasMore == true)
        let last = try page("?since=le_000200&limit=1000")
        #expect(last.ids == (201...250).map { String(format: "le_%06d", $0) } && last.hasMore == false)
        #expect(try page("?limit=1").ids == ["le_000001"])
        #expect(try page("?since=le_000250") == ([], false), "past the end: an empty last page")
        for bad in ["?limit=0", "?limit=1001", "?limit=ten"] {
            let refused = try call(emulator, "GET", "/_sandbox/ledger" + bad)
            #expect(
                refused.status == 400
                    && ((object(refused)["error"] as? [String: Any])?["code"] as? String) == "invalid_limit", "\(bad)")
        }
        for bad in ["?since=pi_1", "?since=le_x", "?since=le_000000"] {
            let refused = try call(emulator, "GET", "/_sandbox/ledger" + bad)
            #expect(
                refused.status == 400
                    && ((object(refused)["error"] as? [String: Any])?["code"] as? String) == "invalid_since", "\(bad)")
        }
    }

    @Test func ledgerEndpointMatchesTheLedger() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        emulator.ledger.append(provider: "bahn", kind: .authorization, reference: "pi_1", amount: 999, currency: "EUR")
        emulator.ledger.append(provider: "bahn", kind: .refund, reference: "pi_1", amount: 100, currency: "EUR")
        let response = try call(emulator, "GET", "/_sandbox/ledger")
        struct Body: Decodable { var entries: [Ledger.Entry] }
        let decoded = try JSONDecoder().decode(Body.self, from: Data(response.body))
        #expect(decoded.entries == emulator.ledger.entries())
        #expect(decoded.entries.map(\.kind) == [.authorization, .refund])
        // Dates are ISO 8601 text on the wire.
        let raw = try #require(((object(response)["entries"] as? [[String: Any]])?.first?["at"]) as? String)
        #expect(raw.hasSuffix("Z") && raw.contains("T"))
    }

    @Test func receivedRequestsAreRecordedExactly() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        #expect(
            try call(emulator, "POST", "/_sandbox/echo?x=1", json: #"{"k":"v"}"#, headers: ["X-One": "1"]).status == 200
        )
        let recorded = emulator.receivedRequests()
        #expect(recorded.count == 1)
        #expect(recorded[0].method == "POST" && recorded[0].target == "/_sandbox/echo?x=1")
        #expect(recorded[0].headers["X-One"] == "1")
        #expect(recorded[0].body == Data(#"{"k":"v"}"#.utf8))
        // Binary bodies come back as base64 through the endpoint.
        let client = try RawClient(port: emulator.port)
        client.send(Array("POST /nowhere HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n".utf8) + [0xFF, 0xFE])
        #expect(try client.readResponse().status == 404)
        let listed = object(try call(emulator, "GET", "/_sandbox/requests"))["requests"] as? [[String: Any]] ?? []
        #expect(listed.count == 3)
        #expect(
            listed[0]["target"] as? String == "/_sandbox/echo?x=1" && listed[0]["bodyEncoding"] as? String == "utf8")
        #expect(listed[1]["body"] as? String == "//4=" && listed[1]["bodyEncoding"] as? String == "base64")
    }

    /// The request log is read in pages as the ledger is: its ids are places in everything received, and a reader
    /// that pages on from one reads what came after it (its own page requests among them).
    @Test func theRequestLogIsReadInPages() throws {
        let emulator = try startEmulator()
        defer { emulator.shutdown() }
        for _ in 1...150 { #expect(try call(emulator, "GET", "/_sandbox/health").status == 200) }
        func page(_ query: String) throws -> (ids: [String], hasMore: Bool?) {
            let body = object(try call(emulator, "GET", "/_sandbox/requests" + query))
            return (
                ((body["requests"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String },
                body["hasMore"] as? Bool
            )
        }
        let first = try page("")
        #expect(first.ids == (1...100).map { String(format: "rq_%06d", $0) } && first.hasMore == true)
        // 150 health checks, then this read and the one before: 101…152.
        let second = try page("?since=rq_000100")
        #expect(second.ids == (101...152).map { String(format: "rq_%06d", $0) } && second.hasMore == false)
        #expect(try page("?since=rq_000140&limit=5").ids == (141...145).map { String(format: "rq_%06d", $0) })
        for bad in ["?since=le_000001", "?since=rq_", "?since=rq_000000"] {
            let refused = try call(emulator, "GET", "/_sandbox/requests" + bad)
            #expect(
                refused.status == 400
                    && ((object(refused)["error"] as? [String: Any])?["code"] as? String) == "invalid_since", "\(bad)")
        }
        #expect(try call(emulator, "GET", "/_sandbox/requests?limit=1001").status == 400)
    }

    /// Paging on from a request the bounded log has dropped starts at the oldest it keeps, and stops at the newest.
    @Test func aPageAfterADroppedRequestStartsAtTheOldestKept() throws {
        let recorder = RequestRecorder(limit: 10)
        for i in 0..<35 { recorder.record(HTTPRequest(method: "GET", target: "/\(i)")) }
        let page = try #require(recorder.page(ListPage(limit: 4, since: "rq_000003")))
        #expect(page.entries.map(\.request.target) == ["/25", "/26", "/27", "/28"] && page.hasMore)
        let last = try #require(recorder.page(ListPage(limit: 4, since: "rq_000032")))
        #expect(last.entries.map(\.request.target) == ["/32", "/33", "/34"] && !last.hasMore)
    }

    @Test func recorderIsBounded() {
        let recorder = RequestRecorder(limit: 10)
        for i in 0..<35 { recorder.record(HTTPRequest(method: "GET", target: "/\(i)")) }
        #expect(recorder.all().map(\.target) == (25..<35).map { "/\($0)" })
    }
}

@Suite struct FaultSpecTests {
    @Test func parsesTheDocumentedExample() throws {
        let spec = try FaultSpec(
            parsing:
                "POST /api/payment_intents/*/confirm => drop @1; GET /_sandbox/health => status=503 @1-2; ** => latency=50ms @*"
        )
        #expect(
            spec.rules == [
                .init(
                    method: "POST", pattern: "/api/payment_intents/*/confirm", actions: [.drop],
                    attempts: .only([1...1])),
                .init(
                    method: "GET", pattern: "/_sandbox/health", actions: [.status(503, headers: [:])],
                    attempts: .only([1...2])),
                .init(pattern: "**", actions: [.latency(milliseconds: 50)], attempts: .all),
            ])
        #expect(
            spec.description
                == "POST /api/payment_intents/*/confirm => drop @1; GET /_sandbox/health => status=503 @1-2; ** => latency=50ms @*"
        )
    }

    @Test func parsesEveryActionAndAttemptForm() throws {
        let spec = try FaultSpec(
            parsing: """
                /a => status=429:Retry-After=1:X-Why=busy, latency=5ms @2,4 ;
                /b/** => truncate=10 ; /c/:id => malformed @1-2,5 ; /d => reset@*;;
                """)
        #expect(spec.rules.count == 4)
        #expect(
            spec.rules[0].actions == [
                .status(429, headers: ["Retry-After": "1", "X-Why": "busy"]), .latency(milliseconds: 5),
            ])
        #expect(spec.rules[0].attempts == .only([2...2, 4...4]))
        #expect(spec.rules[1].actions == [.truncate(bytes: 10)] && spec.rules[1].attempts == .only([1...1]))
        #expect(spec.rules[2].attempts == .only([1...2, 5...5]))
        #expect(spec.rules[3].actions == [.reset] && spec.rules[3].attempts == .all)
        #expect(try FaultSpec(parsing: "  ").rules.isEmpty)
        #expect(spec.rules[1].matches(method: "GET", path: "/b/x/y"))
        #expect(!spec.rules[1].matches(method: "GET", path: "/bx"))
        #expect(
            spec.rules[2].matches(method: "PUT", path: "/c/42")
                && !spec.rules[2].matches(method: "PUT", path: "/c/42/z"))
        #expect(FaultSpec.help.contains("status=<code>[:Header=Value]"))
    }

    @Test(arguments: [
        ("/a drop", "missing '=>'"),
        ("=> drop", "missing path pattern"),
        ("GET POST /a => drop", "bad target"),
        ("G3T /a => drop", "bad method"),
        ("a/b => drop", "must start with '/'"),
        ("/a/**/b => drop", "'**' may only end"),
        ("/a =>", "missing action"),
        ("/a => explode", "unknown action"),
        ("/a => latency=50", "bad latency"),
        ("/a => latency=xms", "bad latency"),
        ("/a => status=99", "bad status"),
        ("/a => status=abc", "bad status"),
        ("/a => status=429:Retry-After", "bad header"),
        ("/a => truncate=-1", "bad truncate"),
        ("/a => reset,drop", "at most one action"),
        ("/a => drop @0", "bad attempts"),
        ("/a => drop @3-1", "bad attempts"),
        ("/a => drop @x", "bad attempts"),
        ("/a => drop @1,", "bad attempts"),
    ])
    func rejectsBadRules(rule: String, why: String) {
        let error = #expect(throws: FaultSpecError.self) { try FaultSpec(parsing: "/ok => reset; \(rule)") }
        let message = error?.message ?? ""
        #expect(message.contains("\"\(rule)\""), "\(message)")
        #expect(message.contains(why), "\(message)")
        #expect(message.contains("expected \"[METHOD ] PATH => action"))
        #expect(!message.contains("\n"))
    }
}

@Suite struct FaultInjectionOverTheWireTests {
    /// Shutting down never waits for an injected latency: the held request ends with the server.
    @Test func shutdownEndsInjectedLatenciesAtOnce() throws {
        let emulator = try startEmulator("GET /_sandbox/health => latency=5000ms @*")
        let client = try RawClient(port: emulator.port)
        client.send("GET /_sandbox/health HTTP/1.1\r\nHost: t\r\n\r\n")
        usleep(100_000)  // the request is in, sleeping in its latency
        #expect(
            emulator.receivedRequests().map(\.path) == ["/_sandbox/health"], "the request was taken and is being held")
        let started = ContinuousClock.now
        emulator.shutdown()
        #expect(ContinuousClock.now - started < .seconds(1), "not the 5 s the latency asked for")
    }

    @Test func latencyDelays() throws {
        let emulator = try startEmulator("GET /_sandbox/health => latency=1500ms @*")
        defer { emulator.shutdown() }
        let started = Date()
        #expect(try call(emulator, "GET", "/_sandbox/health").status == 200)
        let delayed = Date().timeIntervalSince(started)
        #expect(delayed >= 1.5 && delayed < 2.5, "1.5 s of latency, not more: \(delayed)")
        // Other routes are not delayed (a wide margin: a loaded machine must not make this flaky).
        let other = Date()
        #expect(try call(emulator, "GET", "/_sandbox/ledger").status == 200)
        #expect(Date().timeIntervalSince(other) < 1.0)
    }

    @Test func statusWithRetryAfterThenSuccess() throws {
        let emulator = try startEmulator("GET /_sandbox/health => status=429:Retry-After=1 @1-2")
        defer { emulator.shutdown() }
        let first = try call(emulator, "GET", "/_sandbox/health")
        let second = try call(emulator, "GET", "/_sandbox/health")
        let third = try call(emulator, "GET", "/_sandbox/health")
        #expect(first.status == 429 && first.header("Retry-After") == "1")
        #expect(errorCode(first) == "injected_fault")
        #expect(second.status == 429)
        #expect(third.status == 200 && object(third)["status"] as? String == "ok")
    }

    @Test func statusDoesNotRunTheHandler() throws {
        let emulator = try startEmulator("POST /_sandbox/orders/*/pay => status=503")
        defer { emulator.shutdown() }
        let id = try #require(
            order(try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount":1,"currency":"EUR"}"#))["id"]
                as? String)
        #expect(try call(emulator, "POST", "/_sandbox/orders/\(id)/pay").status == 503)
        #expect(emulator.ledger.entries().isEmpty)
    }

    @Test func resetHappensBeforeTheOperation() throws {
        let emulator = try startEmulator("POST /_sandbox/orders/*/pay => reset @1")
        defer { emulator.shutdown() }
        let id = try #require(
            order(try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount":700,"currency":"EUR"}"#))["id"]
                as? String)
        #expect(throws: RawClient.Failure.reset) {
            try call(emulator, "POST", "/_sandbox/orders/\(id)/pay", headers: ["Idempotency-Key": "a"])
        }
        #expect(emulator.ledger.entries().isEmpty)
        // The retry (attempt 2) goes through and charges once.
        #expect(
            try call(emulator, "POST", "/_sandbox/orders/\(id)/pay", headers: ["Idempotency-Key": "a"]).status == 200)
        #expect(emulator.ledger.entries().count == 2)
    }

    @Test func dropCommitsThenLosesTheResponse() throws {
        let emulator = try startEmulator("POST /_sandbox/orders/*/pay => drop")
        defer { emulator.shutdown() }
        let id = try #require(
            order(try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount":700,"currency":"EUR"}"#))["id"]
                as? String)
        #expect(throws: RawClient.Failure.reset) {
            try call(emulator, "POST", "/_sandbox/orders/\(id)/pay", headers: ["Idempotency-Key": "k"])
        }
        // The operation happened although the client heard nothing.
        #expect(emulator.ledger.entries().map(\.kind) == [.authorization, .capture])
        // A retry with the same key replays instead of charging twice.
        let retry = try call(emulator, "POST", "/_sandbox/orders/\(id)/pay", headers: ["Idempotency-Key": "k"])
        #expect(retry.status == 200 && retry.header("Idempotent-Replayed") == "true")
        #expect(emulator.ledger.entries().count == 2)
    }

    @Test func truncateSendsFewerBodyBytes() throws {
        let emulator = try startEmulator("GET /_sandbox/health => truncate=5")
        defer { emulator.shutdown() }
        let response = try call(emulator, "GET", "/_sandbox/health")
        #expect(response.truncated)
        #expect(response.text == #"{"ser"#)
        #expect(Int(response.header("Content-Length") ?? "") ?? 0 > 5)
    }

    @Test func malformedReplacesTheBody() throws {
        let emulator = try startEmulator("POST /_sandbox/orders => malformed")
        defer { emulator.shutdown() }
        let response = try call(emulator, "POST", "/_sandbox/orders", json: #"{"amount":1,"currency":"EUR"}"#)
        #expect(response.status == 201)
        #expect((try? JSONSerialization.jsonObject(with: Data(response.body))) == nil)
        // The handler ran: the next GET of any order would exist; the request was recorded as sent.
        #expect(emulator.receivedRequests().count == 1)
    }

    @Test func attemptSelectionCountsPerRule() throws {
        let emulator = try startEmulator(
            "GET /_sandbox/health => status=503 @1-2; GET /_sandbox/ledger => status=500 @2,4")
        defer { emulator.shutdown() }
        let health = try (1...3).map { _ in try call(emulator, "GET", "/_sandbox/health").status }
        let ledger = try (1...5).map { _ in try call(emulator, "GET", "/_sandbox/ledger").status }
        #expect(health == [503, 503, 200])
        #expect(ledger == [200, 500, 200, 500, 200])
    }

    @Test func latencyCombinesWithTheFirstDecisiveRule() {
        let injector = FaultInjector(try! FaultSpec(parsing: "/a => status=503; ** => latency=10ms @*; /a => reset @*"))
        let request = HTTPRequest(method: "GET", target: "/a")
        #expect(injector.decide(request) == .init(latencyMilliseconds: 10, action: .status(503, headers: [:])))
        #expect(injector.decide(request) == .init(latencyMilliseconds: 10, action: .reset))
        #expect(
            injector.decide(HTTPRequest(method: "GET", target: "/b")) == .init(latencyMilliseconds: 10, action: nil))
    }
}

/// The emulator stays small however it is abused: its request log and idempotency store are bounded.
@Suite struct EmulatorBoundsTests {
    @Test func theRequestLogIsBoundedInCountBytesAndBodySize() {
        let recorder = RequestRecorder(limit: 5, bodyLimit: 10, byteLimit: 100)
        for i in 0..<8 {
            recorder.record(HTTPRequest(method: "POST", target: "/r/\(i)", body: Data(repeating: 0x41, count: 50)))
        }
        let kept = recorder.entries()
        #expect(kept.count <= 5)
        #expect(kept.map(\.request.target).last == "/r/7", "the newest is kept, the oldest went first")
        #expect(kept.allSatisfy { $0.request.body.count == 10 && $0.bodyLength == 50 })
        #expect(kept.reduce(0) { $0 + $1.bytes } <= 100)
        // A single entry larger than the byte budget still shows the latest request.
        recorder.record(HTTPRequest(method: "GET", target: "/" + String(repeating: "x", count: 200)))
        #expect(recorder.entries().count == 1)
    }

    @Test func idempotencyRecordsAreBoundedAndExpireButNeverWhileInProgress() {
        let store = BahnIdempotency(capacity: 3)
        let response = HTTPResponse(status: 200)
        guard case .proceed = store.begin(key: "running", fingerprint: "f") else {
            Issue.record("first use must proceed")
            return
        }
        for i in 0..<5 {
            _ = store.begin(key: "k\(i)", fingerprint: "f")
            store.finish(key: "k\(i)", fingerprint: "f", response: response)
        }
        #expect(store.count <= 4, "capacity 3, plus the record still in progress")
        if case .replay = store.begin(key: "k4", fingerprint: "f") {} else { Issue.record("the newest record replays") }
        if case .reject = store.begin(key: "running", fingerprint: "f") {
        } else {
            Issue.record("a record in progress is never dropped")
        }
        // A day later, everything finished has expired; new keys sweep it away.
        _ = store.begin(key: "later", fingerprint: "f", now: Date().addingTimeInterval(25 * 3600))
        #expect(store.count == 2, "the one in progress and the new one")
    }
}
