import Foundation
import Glibc
import LoopbackHTTP
import SandboxEmulator

@testable import CheckoutKit

/// A real loopback HTTP server for tests: it records every request, counts them per path, and hands the
/// handler the 1-based attempt number of the request on its path, so tests can script "503, 503, then 200".
final class TestServer: Sendable {
    typealias Handler = @Sendable (_ request: HTTPRequest, _ attempt: Int) -> HTTPReply

    private let server: HTTPServer
    private let log: Box<[HTTPRequest]>

    var baseURL: String { server.baseURL }
    var port: UInt16 { server.port }

    init(_ handler: @escaping Handler) throws {
        let log = Box<[HTTPRequest]>([])
        self.log = log
        server = try HTTPServer { request in
            let attempt = log.withLock { entries -> Int in
                entries.append(request)
                return entries.filter { $0.path == request.path }.count
            }
            return handler(request, attempt)
        }
        server.start()
    }

    /// Answers each path from a script: the n-th request on a path gets the n-th reply, the last one repeating.
    /// Paths not in the script get a 404.
    convenience init(script: [String: [HTTPReply]]) throws {
        try self.init { request, attempt in
            guard let replies = script[request.path], !replies.isEmpty else {
                return .respond(.text(404, "no script for \(request.path)"))
            }
            return replies[min(attempt, replies.count) - 1]
        }
    }

    func url(_ path: String) -> String { baseURL + path }

    var requests: [HTTPRequest] { log.withLock { $0 } }
    func requests(_ path: String) -> [HTTPRequest] { requests.filter { $0.path == path } }
    func count(_ path: String) -> Int { requests(path).count }

    /// Shuts down off the caller's thread: shutdown joins handler threads (some tests' handlers sleep), and a
    /// blocked cooperative thread would stall every other test's continuations on a 2-core machine.
    deinit {
        let server = self.server
        Thread.detachNewThread { server.shutdown() }
    }
}

extension HTTPReply {
    static func json(_ status: Int, _ value: JSON, headers: HTTPHeaders = [:]) -> HTTPReply {
        .respond(.json(status, value.data, headers: headers))
    }

    static func status(_ status: Int, headers: HTTPHeaders = [:]) -> HTTPReply {
        .respond(HTTPResponse(status: status, headers: headers))
    }
}

extension HTTPRequest {
    var json: JSON? { body.isEmpty ? nil : try? JSON.parse(body) }
}

/// A loopback port on which nothing listens: the socket is bound (so no other server can take the port) but
/// never listens, so a connect is refused for as long as the value lives.
final class ClosedPort {
    let port: UInt16
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = 0
        sin.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw HTTPServerError("bind failed") }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close(fd) }
}

/// A value behind a lock, shareable with server handler threads.
final class Box<Value>: @unchecked Sendable {
    // @unchecked: `value` is only reachable inside `withLock`, under the lock.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Collects a runner's events for assertions.
final class EventLog: Sendable {
    private let events = Box<[FlowEvent]>([])

    var sink: FlowEventSink { { [self] event in events.withLock { $0.append(event) } } }
    var all: [FlowEvent] { events.withLock { $0 } }

    var exchanges: [ExchangeRecord] {
        all.compactMap { if case .exchange(let x) = $0 { x } else { nil } }
    }

    var retries: [(step: String, attempt: Int, delay: Double)] {
        all.compactMap { if case .retrying(let s, let a, let d, _) = $0 { (s, a, d) } else { nil } }
    }

    var polls: Int {
        all.filter { if case .polling = $0 { true } else { false } }.count
    }
}

/// Builds what a flow test needs: a runner over a real `CurlTransport`, with fast deterministic retries.
struct Harness {
    var registry = OperationRegistry()
    var env: [String: String] = [:]
    var deadline: Double? = nil
    var requestTimeout: Double = 5
    var retry = RetryPolicy(attempts: 3, interval: 0.05, backoff: 1, jitter: 0)
    var state: StateStore? = nil
    let events = EventLog()

    func runner() -> FlowRunner {
        let configuration = Configuration(environment: "test", kind: .local, values: env)
        return FlowRunner(
            client: CurlTransport(options: .direct), registry: registry,
            settings: RunSettings(
                environment: "test", requestTimeout: requestTimeout, deadline: deadline, retry: retry),
            configuration: configuration, state: state, redactor: Redactor(secrets: configuration.secretValues),
            events: events.sink)
    }

    func flow(_ json: String) throws -> Flow {
        try FlowFile.decode(Data(json.utf8), source: "test.json", registry: registry)
    }

    func run(_ json: String, vars: JSON.Object = [:]) async throws -> FlowResult {
        await runner().run(try flow(json), vars: vars)
    }
}

extension FlowResult {
    func step(_ name: String) -> StepResult? { steps.first { $0.name == name } }
}

/// Runs a throwing(Diagnostic) body and returns the diagnostic it threw, or nil.
func diagnostic<T>(_ body: () throws(Diagnostic) -> T) -> Diagnostic? {
    do {
        _ = try body()
        return nil
    } catch { return error }
}

/// A provider-style operation for tests: GETs `url` through `context.send`, so the engine's retries and
/// exchange events apply, and returns the response document.
let fetchOperation = FlowOperation(name: "test.fetch", summary: "GET a URL", arguments: FetchArguments.self) {
    (arguments: FetchArguments, context: OperationContext) async throws(Diagnostic) -> StepOutput in
    let url = arguments.url
    var headers: HTTPHeaders = [:]
    if let count = arguments.count { headers["X-Count"] = String(count) }
    if let tag = arguments.tag { headers["X-Tag"] = tag }
    let sent = headers
    let response = try await context.send { (_: Int) throws(Diagnostic) -> HTTPClientRequest in
        HTTPClientRequest(method: "GET", url: url, headers: sent, timeout: context.requestTimeout)
    }
    return StepOutput(document: response.json ?? .null, status: response.status)
}

struct FetchArguments: OperationArguments {
    var url = ""
    var count: Int?
    var tag: String?

    static let arguments: [Argument<FetchArguments>] = [
        .string("url", \.url), .integer("count", \.count), .string("tag", \.tag),
    ]
}

/// The sandbox emulator started for one test and shut down with it.
final class SandboxEmulatorHandle: Sendable {
    let emulator: Emulator
    var baseURL: String { emulator.baseURL }

    init(faults: String = "") throws {
        emulator = try Emulator(faults: try FaultSpec(parsing: faults))
        emulator.start()
    }

    deinit {
        let emulator = self.emulator
        Thread.detachNewThread { emulator.shutdown() }
    }
}
