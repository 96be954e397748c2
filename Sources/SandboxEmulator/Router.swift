import Foundation
import LoopbackHTTP
import Synchronization
import Threads
import WireTypes

/// What a route handler gets: the raw request, the `:name` path parameters and which attempt this is.
public struct EmulatorRequest: Sendable {
    public let http: HTTPRequest
    /// Path parameters by name (`:id` → `params["id"]`), percent-decoded.
    public let params: [String: String]
    /// 1-based count of requests this route (method + pattern) has received, this one included.
    public let attempt: Int

    public init(http: HTTPRequest, params: [String: String] = [:], attempt: Int = 1) {
        self.http = http
        self.params = params
        self.attempt = attempt
    }

    public var method: String { http.method }
    public var path: String { http.path }
    public var headers: HTTPHeaders { http.headers }
    public var body: Data { http.body }

    /// The body parsed as JSON (any top-level value), or nil when it is empty or not JSON.
    public var json: JSON? {
        guard !http.body.isEmpty else { return nil }
        return try? JSON.parse(http.body)
    }

    /// The body when it is a JSON object.
    public var jsonObject: JSON.Object? { json?.objectValue }
}

/// One endpoint: `pattern` segments starting with `:` capture a path parameter.
public struct Route: Sendable {
    public var method: String
    public var pattern: String
    public var handler: @Sendable (EmulatorRequest) -> HTTPReply

    public init(_ method: String, _ pattern: String, handler: @escaping @Sendable (EmulatorRequest) -> HTTPReply) {
        self.method = method.uppercased()
        self.pattern = pattern
        self.handler = handler
    }
}

/// Dispatches requests to registered routes by method and path. Providers register their routes at startup;
/// registration is thread-safe so it may also happen while serving.
public final class Router: Sendable {
    private struct Entry: Sendable {
        var route: Route
        var segments: [Segment]
        /// Literal segments outrank parameters, so `/orders/new` wins over `/orders/:id`.
        var literalCount: Int
    }
    /// A pattern's segment, held as what a request's path is compared with: its bytes. (Split and compared as
    /// `Character`s, a path cost a fifth of a health request's instructions.)
    private enum Segment: Sendable {
        case literal([UInt8])
        case parameter(String)
    }
    private struct Table {
        var entries: [Entry] = []
        var hits: [Int] = []
        /// Entry indexes by method and segment count: a request is matched against the few routes that can fit it,
        /// not every provider's (the table holds ~100 routes, and the health check is the benchmark's request).
        var candidates: [Shape: [Int]] = [:]
        /// Routes without parameters by method and path (its segments joined by single slashes; the first registered
        /// for each): a request with that very path is that route's, as matching segment by segment would find (no
        /// route outranks one all of whose segments are literal), with one lookup and no split.
        var exact: [Exact: Int] = [:]
    }

    private struct Exact: Hashable {
        var method: String
        var path: String
    }

    private struct Shape: Hashable {
        var method: String
        var segments: Int
    }
    private let table = Locked(Table())

    public init() {}

    public func register(_ routes: [Route]) {
        table.withLock { t in
            for route in routes {
                let raw = Self.segments(of: route.pattern)
                let segments = raw.map { bytes -> Segment in
                    bytes.first == UInt8(ascii: ":")
                        ? .parameter(String(Substring(bytes.dropFirst()))) : .literal(Array(bytes))
                }
                let literals = segments.filter { if case .literal = $0 { true } else { false } }.count
                t.entries.append(Entry(route: route, segments: segments, literalCount: literals))
                t.hits.append(0)
                t.candidates[Shape(method: route.method, segments: segments.count), default: []].append(
                    t.entries.count - 1)
                let path = "/" + raw.map { String(Substring($0)) }.joined(separator: "/")
                if literals == segments.count, t.exact[Exact(method: route.method, path: path)] == nil {
                    t.exact[Exact(method: route.method, path: path)] = t.entries.count - 1
                }
            }
        }
    }

    public func handle(_ request: HTTPRequest) -> HTTPReply {
        let requestPath = request.path
        // HEAD is answered by the GET route (the server drops the body).
        let method = request.method == "HEAD" ? "GET" : request.method
        let found = table.withLock { t -> (Route, [String: String], Int)? in
            let exact = t.exact[Exact(method: method, path: requestPath)].map {
                (index: $0, params: [String: String]())
            }
            guard let best = exact ?? Self.bestMatch(in: t, method: method, path: Self.segments(of: requestPath)) else {
                return nil
            }
            t.hits[best.index] += 1
            return (t.entries[best.index].route, best.params, t.hits[best.index])
        }
        if let (route, params, attempt) = found {
            return route.handler(EmulatorRequest(http: request, params: params, attempt: attempt))
        }
        let path = Self.segments(of: requestPath)
        let allowed = table.withLock { t in
            Set(t.entries.filter { Self.match($0.segments, path) != nil }.map(\.route.method)).sorted()
        }
        if allowed.isEmpty {
            return EmulatorResponse.error(
                404, code: "route_not_found", message: "No route for \(request.method) \(request.path)")
        }
        return EmulatorResponse.error(
            405, code: "method_not_allowed",
            message: "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", "))",
            headers: ["Allow": allowed.joined(separator: ", ")])
    }

    /// The route with the most literal segments (the first registered of equals) that `path` matches, and its
    /// parameters.
    private static func bestMatch(
        in t: Table, method: String, path: [Substring.UTF8View]
    ) -> (index: Int, params: [String: String])? {
        var best: (index: Int, params: [String: String])? = nil
        for i in t.candidates[Shape(method: method, segments: path.count)] ?? [] {
            let entry = t.entries[i]
            if best.map({ entry.literalCount > t.entries[$0.index].literalCount }) ?? true,
                let params = match(entry.segments, path)
            {
                best = (i, params)
            }
        }
        return best
    }

    /// A path's (or a pattern's) non-empty `/`-separated segments, as bytes.
    private static func segments(of path: String) -> [Substring.UTF8View] {
        path.utf8.split(separator: UInt8(ascii: "/"))
    }

    /// Segment-by-segment match; returns the captured parameters.
    private static func match(_ pattern: [Segment], _ path: [Substring.UTF8View]) -> [String: String]? {
        guard pattern.count == path.count else { return nil }
        // Literals first, before any allocation.
        for (p, s) in zip(pattern, path) {
            if case .literal(let bytes) = p, !s.elementsEqual(bytes) { return nil }
        }
        var params: [String: String] = [:]
        for (p, s) in zip(pattern, path) {
            guard case .parameter(let name) = p else { continue }
            let text = String(Substring(s))
            params[name] = s.contains(UInt8(ascii: "%")) ? text.removingPercentEncoding ?? text : text
        }
        return params
    }
}

/// JSON response helpers shared by the built-in routes and the providers.
public enum EmulatorResponse {
    /// A JSON value's bytes, keys sorted, so bodies are byte-stable across runs.
    public static func encode(_ value: JSON) -> Data { value.data }

    public static func json(_ status: Int, _ value: JSON, headers: HTTPHeaders = [:]) -> HTTPReply {
        .respond(.json(status, encode(value), headers: headers))
    }

    /// The emulator's own error shape: `{"error":{"type","code","message"[,"param"]}}`.
    public static func error(
        _ status: Int, type: String = "invalid_request_error", code: String, message: String,
        param: String? = nil, headers: HTTPHeaders = [:]
    ) -> HTTPReply {
        var error: JSON.Object = ["type": .string(type), "code": .string(code), "message": .string(message)]
        if let param { error["param"] = .string(param) }
        return json(status, ["error": .object(error)], headers: headers)
    }
}
