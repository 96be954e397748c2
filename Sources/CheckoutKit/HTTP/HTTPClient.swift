import Foundation
@_exported import LoopbackHTTP
import Synchronization

/// A request as the driver sends it.
public struct HTTPClientRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: HTTPHeaders
    public var body: Data?
    /// Seconds for the whole exchange; the engine lowers it to what is left of the flow's deadline.
    public var timeout: Double
    /// The request only reads, whatever its method (a GraphQL query is a POST): safe to repeat.
    public var readOnly: Bool
    /// The service documents the request as idempotent on something in its body (Afterpay's capture on its checkout
    /// token, Cash App's `idempotency_key`): a repeat is answered with the first outcome, so it is safe to repeat.
    public var idempotent: Bool
    /// The step and attempt that sent it, set by the retry loop every request goes through: a replay names them when
    /// the request is not the recorded one.
    public var sender: Sender?

    public struct Sender: Sendable, Equatable, CustomStringConvertible {
        public var step: String
        public var attempt: Int
        public init(step: String, attempt: Int) {
            self.step = step
            self.attempt = attempt
        }
        /// "step 'confirm'", "step 'create-intent' (attempt 2)".
        public var description: String { "step '\(step)'" + (attempt > 1 ? " (attempt \(attempt))" : "") }
    }

    public init(
        method: String, url: String, headers: HTTPHeaders = [:], body: Data? = nil, timeout: Double = 30,
        readOnly: Bool = false, idempotent: Bool = false
    ) {
        self.method = method.uppercased()
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.readOnly = readOnly
        self.idempotent = idempotent
    }
}

/// How long each phase of an exchange took, in seconds (libcurl's `CURLINFO_*_TIME_T`), kept for HAR.
public struct PhaseTimings: Sendable, Equatable, Codable {
    public var dns: Double = 0
    public var connect: Double = 0
    public var tls: Double = 0
    public var send: Double = 0
    /// Time to first byte after the request was sent.
    public var wait: Double = 0
    public var receive: Double = 0
    public var total: Double = 0
    public init() {}
}

public struct HTTPClientResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data { didSet { parsed = ParsedBody() } }
    public var httpVersion: String
    public var timings: PhaseTimings
    /// Whether this exchange reused an already open connection.
    public var reusedConnection: Bool
    /// What the request did is open: an earlier attempt may have taken effect and this answer does not settle it,
    /// or this answer itself does not say (any 5xx). See `RetryPolicy.leavesOutcomeOpen`.
    public var outcomeOpen = false

    public init(
        status: Int, headers: HTTPHeaders = [:], body: Data = Data(), httpVersion: String = "HTTP/1.1",
        timings: PhaseTimings = .init(), reusedConnection: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.timings = timings
        self.reusedConnection = reusedConnection
    }

    /// The body as JSON, parsed once for this response and every copy of it: a read's answer is parsed to tell a
    /// garbled one (`RetryPolicy.isGarbledRead`) before its reader parses it.
    private var parsed = ParsedBody()

    public func parsedBody() -> Result<JSON, JSON.ParseError> { parsed.result(of: body) }

    public var json: JSON? { body.isEmpty ? nil : try? parsedBody().get() }
}

/// A response body's parse, kept by the first that asks.
final class ParsedBody: Sendable {
    private let result = Mutex<Result<JSON, JSON.ParseError>?>(nil)

    func result(of body: Data) -> Result<JSON, JSON.ParseError> {
        if let done = result.withLock({ $0 }) { return done }
        let parsed = Result { () throws(JSON.ParseError) in try JSON.parse(body) }
        result.withLock { $0 = parsed }
        return parsed
    }
}

/// Why an exchange produced no response.
public enum TransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing was sent: the host could not be resolved or refused the connection.
    case unreachable(String)
    /// The exchange exceeded its timeout; the server may or may not have acted on it.
    case timedOut(String)
    /// The connection broke after the request went out; the server may or may not have acted on it.
    case connectionLost(String)
    /// The run was interrupted: before the request went out (`sent` false), or while it was under way (then the
    /// server may or may not have acted on it).
    case cancelled(sent: Bool)
    case invalidRequest(String)
    /// The proxy refused the request (407, a CONNECT it would not open): it never reached the service.
    case proxyRefused(String)
    /// The TLS handshake failed (a certificate that does not verify, a protocol error): nothing was sent.
    case tlsRefused(String)

    public var description: String {
        switch self {
        case .unreachable(let m): "unreachable: \(m)"
        case .timedOut(let m): "timed out: \(m)"
        case .connectionLost(let m): "connection lost: \(m)"
        case .cancelled: "cancelled: the run was interrupted"
        case .invalidRequest(let m): "invalid request: \(m)"
        case .proxyRefused(let m): "the proxy refused it: \(m)"
        case .tlsRefused(let m): "TLS: \(m)"
        }
    }

    /// A request that provably never reached the server can be retried whatever its method.
    public var requestNeverSent: Bool {
        switch self {
        case .unreachable, .cancelled(sent: false), .proxyRefused, .tlsRefused: true
        default: false
        }
    }
}

/// The one seam between the driver and the network: libcurl in production, a recording in replay.
public protocol HTTPClient: Sendable {
    func send(_ request: HTTPClientRequest) async throws(TransportError) -> HTTPClientResponse
    /// Where a flow using this client should run its steps, when the client has a preference.
    var preferredExecutor: (any TaskExecutor)? { get }
}

extension HTTPClient {
    public var preferredExecutor: (any TaskExecutor)? { nil }
}

extension HTTPClientResponse {
    /// The body as JSON (null when empty). A body that is not JSON is no answer to trust: what the request did is
    /// unknown (a call that moves money reads back), so it is `uncertain`, naming the service and what to check.
    public func jsonDocument(service: String, hint: String) throws(Diagnostic) -> JSON {
        guard !body.isEmpty else { return .null }
        do { return try JSON.parse(body) } catch {
            throw .uncertain("\(service) answered \(status) with a body that is not JSON: \(error)", hint: hint)
        }
    }
}
