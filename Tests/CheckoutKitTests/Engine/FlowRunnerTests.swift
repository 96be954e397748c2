import Foundation
import Testing

@testable import CheckoutKit

/// The engine against a real loopback server through the real libcurl transport.
@Suite struct FlowRunnerTests {
    @Test func capturesFlowIntoLaterSteps() async throws {
        let server = try TestServer { request, _ in
            switch request.path {
            case "/orders": .json(201, ["order": ["id": "ord_42", "amount": 700]])
            case "/orders/ord_42/pay": .json(200, ["paid": true, "echo": request.json ?? nil])
            default: .json(200, ["seen": .string(request.target)])
            }
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"chain","vars":{"amount":700},"steps":[
              {"name":"create","request":{"method":"POST","url":"${env.BASE}/orders","json":{"amount":"${vars.amount}"}},
               "capture":{"id":"order.id"}},
              {"name":"pay","request":{"method":"POST","url":"${env.BASE}/orders/${vars.id}/pay",
                 "headers":{"Idempotency-Key":"pay-${vars.id}"},
                 "json":{"order":"${vars.id}","amount":"${steps.create.order.amount}","note":"order ${vars.id}"}}},
              {"name":"read","request":{"url":"${env.BASE}/lookup?id=${steps.create.order.id}&paid=${steps.pay.paid}"}}
            ]}
            """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.exitCode == .ok)
        #expect(result.captures == ["id": "ord_42"])
        let create = try #require(server.requests("/orders").first)
        #expect(create.json == ["amount": 700])
        #expect(create.headers["Content-Type"] == "application/json")
        let pay = try #require(server.requests("/orders/ord_42/pay").first)
        #expect(pay.json == ["order": "ord_42", "amount": 700, "note": "order ord_42"])
        #expect(pay.headers["Idempotency-Key"] == "pay-ord_42")
        #expect(try #require(server.requests("/lookup").first).target == "/lookup?id=ord_42&paid=true")
        #expect(result.steps.map(\.outcome) == [.passed, .passed, .passed])
        #expect(result.steps.map(\.requests) == [1, 1, 1])
    }

    @Test func statusExpectationFailureSkipsLaterStepsButRunsFinally() async throws {
        let server = try TestServer { request, _ in
            request.path == "/missing" ? .json(404, ["error": "nope"]) : .json(200, ["ok": true])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[
              {"name":"first","request":{"url":"${env.BASE}/missing"}},
              {"name":"second","request":{"url":"${env.BASE}/second"}}],
             "finally":[{"name":"cleanup","request":{"method":"DELETE","url":"${env.BASE}/cleanup"}}]}
            """#)
        #expect(result.exitCode == .failure)
        let message = try #require(result.failure?.message)
        #expect(message.contains("expected status 2xx, got 404"))
        #expect(message.contains("nope"))
        #expect(result.step("first")?.outcome == .failed)
        #expect(result.step("first")?.status == 404)
        #expect(result.step("second")?.outcome == .skipped)
        #expect(result.step("cleanup")?.outcome == .passed)
        #expect(result.step("cleanup")?.isFinally == true)
        #expect(server.count("/second") == 0)
        #expect(server.requests("/cleanup").map(\.method) == ["DELETE"])
    }

    @Test(arguments: [
        (#""equals":{"order.status":"paid"}"#, "$.order.status", #""pending""#),
        (#""matches":{"order.id":"^ord_"}"#, "$.order.id", #""pi_1""#),
        (#""exists":["order.receipt"]"#, "$.order.receipt", "missing"),
    ])
    func conditionFailuresNameThePathAndTheValueFound(_ expect: String, _ path: String, _ found: String) async throws {
        let server = try TestServer { _, _ in .json(200, ["order": ["status": "pending", "id": "pi_1"]]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"check","request":{"url":"${env.BASE}/o"},"expect":{\#(expect)}},
                                 {"name":"after","request":{"url":"${env.BASE}/after"}}]}
            """#)
        #expect(result.exitCode == .failure)
        let message = try #require(result.failure?.message)
        #expect(message.contains(path))
        #expect(message.contains("found \(found)"))
        #expect(result.step("after")?.outcome == .skipped)
        #expect(server.count("/after") == 0)
    }

    @Test func optionalStepFailureDoesNotFailTheFlow() async throws {
        let server = try TestServer { request, _ in request.path == "/bad" ? .status(500) : .json(200, ["ok": true]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        h.retry = .never
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"maybe","optional":true,"request":{"method":"POST","url":"${env.BASE}/bad"}},
                                 {"name":"next","request":{"url":"${env.BASE}/next"}}]}
            """#)
        #expect(result.passed)
        #expect(result.step("maybe")?.outcome == .failed)
        #expect(result.step("next")?.outcome == .passed)
        #expect(server.count("/next") == 1)
    }

    @Test func getIsRetriedOnTransientStatuses() async throws {
        let server = try TestServer(script: ["/r": [.status(503), .status(503), .json(200, ["ok": true])]])
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(#"{"name":"f","steps":[{"name":"get","request":{"url":"${env.BASE}/r"}}]}"#)
        #expect(result.passed)
        #expect(server.count("/r") == 3)
        #expect(result.step("get")?.requests == 3)
        #expect(h.events.retries.map(\.attempt) == [2, 3])
        #expect(h.events.exchanges.map(\.attempt) == [1, 2, 3])
    }

    @Test func postWithoutIdempotencyKeyIsNotRetried() async throws {
        let server = try TestServer(script: ["/charge": [.status(503), .json(200, ["ok": true])]])
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"{"name":"f","steps":[{"name":"charge","request":{"method":"POST","url":"${env.BASE}/charge","json":{}}}]}"#
        )
        #expect(result.exitCode == .failure)
        #expect(result.failure?.message.contains("got 503") == true)
        #expect(server.count("/charge") == 1)
        #expect(h.events.retries.isEmpty)
    }

    @Test func postWithIdempotencyKeyIsRetriedWithTheSameKey() async throws {
        let server = try TestServer(script: ["/charge": [.status(503), .status(502), .json(200, ["ok": true])]])
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"charge","request":{"method":"POST","url":"${env.BASE}/charge",
              "headers":{"Idempotency-Key":"${uuid}"},"json":{"amount":1}}}]}
            """#)
        #expect(result.passed)
        let keys = server.requests("/charge").compactMap { $0.headers["Idempotency-Key"] }
        #expect(keys.count == 3)
        #expect(Set(keys).count == 1)
        #expect(keys.first?.count == 36)
        #expect(server.requests("/charge").allSatisfy { $0.json == ["amount": 1] })
    }

    @Test func perStepRetryAttemptsAreHonoured() async throws {
        let server = try TestServer(script: ["/five": [.status(503)], "/one": [.status(503)]])
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        h.retry = .never
        let result = try await h.run(
            #"""
            {"name":"f","steps":[
              {"name":"five","optional":true,"request":{"url":"${env.BASE}/five"},"retry":{"attempts":5,"interval":"10ms","backoff":1}},
              {"name":"one","request":{"url":"${env.BASE}/one"}}]}
            """#)
        #expect(server.count("/five") == 5)
        #expect(result.step("five")?.requests == 5)
        #expect(server.count("/one") == 1)
        #expect(result.exitCode == .failure)
    }

    @Test func retryAfterIsHonoured() async throws {
        let server = try TestServer(script: [
            "/limited": [.status(429, headers: ["Retry-After": "1"]), .json(200, ["ok": true])]
        ])
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let started = ContinuousClock.now
        let result = try await h.run(#"{"name":"f","steps":[{"name":"get","request":{"url":"${env.BASE}/limited"}}]}"#)
        let elapsed = (ContinuousClock.now - started).seconds
        #expect(result.passed)
        #expect(server.count("/limited") == 2)
        let retry = try #require(h.events.retries.first)
        #expect(retry.delay == 1)
        #expect(elapsed >= 1)
        let exchanges = h.events.exchanges
        #expect(exchanges.count == 2)
        let gap = exchanges[1].startedAt.timeIntervalSince(exchanges[0].startedAt)
        #expect(gap >= 1 && gap < 1.5, "Retry-After: 1 means one second, not the default backoff or more: \(gap)")
    }

    @Test func untilPollsUntilTheConditionHolds() async throws {
        let server = try TestServer { _, attempt in
            .json(200, ["state": attempt >= 3 ? "done" : "pending", "n": .number(Double(attempt))])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"wait","request":{"url":"${env.BASE}/job"},
              "until":{"path":"state","equals":"done","interval":"20ms","timeout":"5s"},"capture":{"n":"n"}}]}
            """#)
        #expect(result.passed)
        #expect(server.count("/job") == 3)
        #expect(result.step("wait")?.polls == 2)
        #expect(h.events.polls == 2)
        #expect(result.captures["n"] == 3)
    }

    /// Requests go out at about 0, 0.3, 0.6, 0.9, 1.2 and 1.5 s; another at 1.8 s would pass the 1.65 s timeout, so
    /// the step gives up after exactly six, within the timeout. The boundaries sit 150 ms from each request, so neither
    /// a slow machine nor one interval of overshoot can hide.
    @Test func untilThatNeverHoldsFailsWithinItsTimeout() async throws {
        let server = try TestServer { _, _ in .json(200, ["state": "pending"]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let started = ContinuousClock.now
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"wait","request":{"url":"${env.BASE}/job"},
              "until":{"path":"state","equals":"done","interval":"300ms","timeout":"1650ms"}}]}
            """#)
        let elapsed = (ContinuousClock.now - started).seconds
        #expect(result.exitCode == .failure)
        let message = try #require(result.failure?.message)
        #expect(message.contains("$.state"))
        #expect(message.contains(#""pending""#))
        #expect(server.count("/job") == 6)
        #expect(result.step("wait")?.requests == 6)
        #expect(result.step("wait")?.polls == 5)
        #expect(h.events.polls == 5)
        #expect(message.contains("after 6 tries"), "\(message)")
        #expect(elapsed >= 1.45, "the sixth request goes out at about 1.5 s")
        #expect(elapsed < 1.65, "never past the timeout")
    }

    @Test func untilStopsAtTheFirstResponseThatHolds() async throws {
        let server = try TestServer { _, attempt in .json(200, ["state": attempt == 1 ? "done" : "pending"]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"wait","request":{"url":"${env.BASE}/job"},
              "until":{"path":"state","in":["done","failed"],"interval":"5s","timeout":"20s"}}]}
            """#)
        #expect(result.passed)
        #expect(server.count("/job") == 1)
        #expect(result.step("wait")?.polls == 0)
    }

    @Test func deadlineStopsASlowServer() async throws {
        let server = try TestServer { _, _ in
            Thread.sleep(forTimeInterval: 2)
            return .json(200, ["late": true])
        }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        h.deadline = 0.5
        let started = ContinuousClock.now
        let result = try await h.run(#"{"name":"f","steps":[{"name":"slow","request":{"url":"${env.BASE}/slow"}}]}"#)
        let elapsed = (ContinuousClock.now - started).seconds
        #expect(result.exitCode == .unavailable)
        #expect(result.failure?.message.contains("deadline") == true)
        #expect(elapsed < 1.5)
    }

    /// A wait that would end past the deadline is not started: the flow stops at once, not after the wait.
    @Test func aPollWaitThatWouldPassTheDeadlineStopsTheFlowAtOnce() async throws {
        let server = try TestServer { _, _ in .json(200, ["state": "pending"]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        h.deadline = 0.5
        let started = ContinuousClock.now
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"wait","request":{"url":"${env.BASE}/job"},
              "until":{"path":"state","equals":"done","interval":"2s","timeout":"10s"}}]}
            """#)
        let elapsed = (ContinuousClock.now - started).seconds
        #expect(result.exitCode == .unavailable)
        #expect(
            result.failure?.message.contains("deadline of 0.5s passed during step 'wait'") == true,
            "\(String(describing: result.failure))")
        #expect(server.count("/job") == 1)
        #expect(elapsed < 0.4, "stopped before sleeping, not after")
    }

    /// `${ref|fallback}` needs nothing to exist: neither the configuration variable nor the flow variable.
    @Test func fallbacksSatisfyThePreflightCheck() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"a","request":{"url":"${env.BASE}/a?who=${vars.who|anyone}&key=${env.NOT_CONFIGURED|none}",
              "headers":{"X-State":"${state.nothing.here|empty}"}}}]}
            """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        let request = try #require(server.requests("/a").first)
        #expect(request.target == "/a?who=anyone&key=none")
        #expect(request.headers["X-State"] == "empty")
    }

    @Test func preflightStopsOnAMissingConfigurationVariable() async throws {
        let server = try TestServer { _, _ in .json(200, [:]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","steps":[{"name":"first","request":{"url":"${env.BASE}/first"}},
                                 {"name":"second","request":{"url":"${env.BASE}/x","headers":{"Api-Key":"${env.MISSING}"}}}]}
            """#)
        #expect(result.exitCode == .configuration)
        #expect(result.failure?.message.contains("MISSING") == true)
        #expect(result.steps.isEmpty)
        #expect(server.requests.isEmpty)
    }

    /// A flow built in code (a command's steps) gets the argument check a flow file gets when it is read: an argument
    /// the operation does not declare, or a missing or wrongly typed one, stops the run before its first request.
    @Test(arguments: [
        (#"{"url": "URL", "cuont": 1}"#, "test.fetch has no argument 'cuont'; did you mean 'count'? (at $.cuont)"),
        (#"{"count": 1}"#, "test.fetch needs argument 'url'"),
        (#"{"url": "URL", "count": "many"}"#, "expected integer, found a string (at $.count)"),
    ])
    func preflightChecksTheArgumentsOfAFlowBuiltInCode(arguments: String, message: String) async throws {
        let server = try TestServer { _, _ in .json(200, [:]) }
        var h = Harness()
        h.registry.register(fetchOperation)
        let with = try JSON.parse(Data(arguments.replacingOccurrences(of: "URL", with: server.baseURL + "/a").utf8))
        let flow = Flow(
            name: "built", steps: [Step(name: "fetch", action: .operation(name: "test.fetch", arguments: with))])
        let result = await h.runner().run(flow)
        #expect(result.exitCode == .dataError, "\(String(describing: result.failure))")
        #expect(result.failure?.message == "step 'fetch': \(message)", "\(String(describing: result.failure))")
        #expect(server.requests.isEmpty)
    }

    @Test func preflightStopsOnAnUnknownVariable() async throws {
        let server = try TestServer { _, _ in .json(200, [:]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        let flow = #"{"name":"f","steps":[{"name":"a","request":{"url":"${env.BASE}/a/${vars.who}"}}]}"#
        let result = try await h.run(flow)
        #expect(result.exitCode == .dataError)
        #expect(result.failure?.message.contains("${vars.who}") == true)
        #expect(server.requests.isEmpty)
        // The same flow runs once the variable is passed in.
        let second = try await h.run(flow, vars: ["who": "me"])
        #expect(second.passed)
        #expect(server.requests.map(\.target) == ["/a/me"])
    }

    @Test func operationsRunThroughContextSend() async throws {
        let server = try TestServer(script: ["/op": [.status(503), .json(200, ["value": 7])]])
        var h = Harness()
        h.registry = OperationRegistry([fetchOperation])
        h.env = ["BASE": server.baseURL]
        let result = try await h.run(
            #"""
            {"name":"f","vars":{"n":3},"steps":[{"name":"op","use":"test.fetch",
              "with":{"url":"${env.BASE}/op","count":"${vars.n}","tag":"t-${vars.n}"},
              "expect":{"equals":{"value":7}},"capture":{"v":"value"}}]}
            """#)
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.captures["v"] == 7)
        #expect(server.count("/op") == 2)
        #expect(server.requests("/op").allSatisfy { $0.headers["X-Count"] == "3" && $0.headers["X-Tag"] == "t-3" })
        let exchanges = h.events.exchanges
        #expect(exchanges.map(\.step) == ["op", "op"])
        #expect(exchanges.map { (try? $0.outcome.get())?.status } == [503, 200])
        #expect(result.step("op")?.requests == 2)
    }

    @Test func eventsArriveInOrder() async throws {
        let server = try TestServer { _, _ in .json(200, ["ok": true]) }
        var h = Harness()
        h.env = ["BASE": server.baseURL]
        _ = try await h.run(#"{"name":"f","steps":[{"name":"a","request":{"url":"${env.BASE}/a"}}]}"#)
        let kinds = h.events.all.map { event -> String in
            switch event {
            case .flowStarted: "flowStarted"
            case .stepStarted: "stepStarted"
            case .exchange: "exchange"
            case .retrying: "retrying"
            case .polling: "polling"
            case .note: "note"
            case .money: "money"
            case .link: "link"
            case .listening: "listening"
            case .stepFinished: "stepFinished"
            case .flowFinished: "flowFinished"
            }
        }
        #expect(kinds == ["flowStarted", "stepStarted", "exchange", "stepFinished", "flowFinished"])
    }

    @Test func builtinFlowPassesAgainstTheEmulator() async throws {
        let emulator = try SandboxEmulatorHandle()
        var h = Harness()
        h.env = ["EMULATOR_URL": emulator.baseURL]
        let entry = try #require(BuiltinFlows.named("emulator-orders"))
        let flow = try BuiltinFlows.load(entry, registry: h.registry)
        let result = await h.runner().run(flow)
        #expect(result.passed, "\(String(describing: result.failure))")
        // `pay` marks the order paid, so the first poll already sees it.
        #expect(result.captures["polls"] == 1)
        #expect(result.captures["order_id"]?.stringValue?.hasPrefix("ord_") == true)
    }
}

@Suite struct FlowRunnerEmulatorFaultTests {
    func run(faults: String) async throws -> (FlowResult, SandboxEmulatorHandle) {
        let emulator = try SandboxEmulatorHandle(faults: faults)
        var h = Harness()
        h.env = ["EMULATOR_URL": emulator.baseURL]
        let flow = try BuiltinFlows.load(try #require(BuiltinFlows.named("emulator-orders")), registry: h.registry)
        return (await h.runner().run(flow), emulator)
    }

    @Test func transientStatusesAreRetried() async throws {
        let (result, _) = try await run(faults: "GET /_sandbox/health => status=503 @1-2")
        #expect(result.passed, "\(String(describing: result.failure))")
        #expect(result.step("health")?.requests == 3)
    }

    @Test func aDroppedKeyedPayIsRepeatedWithTheSameKeyAndChargedOnce() async throws {
        let (result, emulator) = try await run(faults: "POST /_sandbox/orders/*/pay => drop @1")
        #expect(result.passed, "\(String(describing: result.failure))")
        let pays = emulator.emulator.receivedRequests().filter { $0.path.hasSuffix("/pay") }
        #expect(pays.count == 2)
        #expect(Set(pays.compactMap { $0.headers["Idempotency-Key"] }).count == 1)
        #expect(emulator.emulator.ledger.entries().map(\.kind) == [.authorization, .capture])
    }

    @Test func aDroppedUnkeyedPostIsNeverRepeated() async throws {
        let (result, emulator) = try await run(faults: "POST /_sandbox/orders => drop @1")
        #expect(result.exitCode == .unavailable)
        #expect(result.failure?.message.contains("connection lost") == true)
        #expect(result.failure?.hint?.contains("not repeated") == true)
        #expect(result.step("create-order")?.requests == 1)
        #expect(
            emulator.emulator.receivedRequests().filter { $0.method == "POST" && $0.path == "/_sandbox/orders" }.count
                == 1)
        #expect(result.step("pay")?.outcome == .skipped)
        #expect(emulator.emulator.ledger.entries().isEmpty)
    }
}
