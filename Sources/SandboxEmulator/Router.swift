import Foundation
import Threads
import LoopbackHTTP
import WireTypes
import Synchronization

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
    public var jsonObject: [String: JSON]? { json?.objectValue }
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
        var segments: [Substring]
        /// Literal segments outrank parameters, so `/orders/new` wins over `/orders/:id`.
        var literalCount: Int
    }
    private struct Table {
        var entries: [Entry] = []
        var hits: [Int] = []
        /// Entry indexes by method and segment count: a request is matched against the few routes that can fit it,
        /// not every provider's (the table holds ~100 routes, and the health check is the benchmark's request).
        var candidates: [Shape: [Int]] = [:]
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
                let segments = route.pattern.split(separator: "/")
                t.entries.append(Entry(route: route, segments: segments, literalCount: segments.filter { !$0.hasPrefix(":") }.count))
                t.hits.append(0)
                t.candidates[Shape(method: route.method, segments: segments.count), default: []].append(t.entries.count - 1)
            }
        }
    }

    public func handle(_ request: HTTPRequest) -> HTTPReply {
        let path = request.path.split(separator: "/")
        // HEAD is answered by the GET route (the server drops the body).
        let method = request.method == "HEAD" ? "GET" : request.method
        let found = table.withLock { t -> (Route, [String: String], Int)? in
            var best: (index: Int, params: [String: String])? = nil
            for i in t.candidates[Shape(method: method, segments: path.count)] ?? [] {
                let entry = t.entries[i]
                if best.map({ entry.literalCount > t.entries[$0.index].literalCount }) ?? true, let params = Self.match(entry.segments, path) {
                    best = (i, params)
                }
            }
            guard let best else { return nil }
            t.hits[best.index] += 1
            return (t.entries[best.index].route, best.params, t.hits[best.index])
        }
        if let (route, params, attempt) = found {
            return route.handler(EmulatorRequest(http: request, params: params, attempt: attempt))
        }
        let allowed = table.withLock { t in
            Set(t.entries.filter { Self.match($0.segments, path) != nil }.map(\.route.method)).sorted()
        }
        if allowed.isEmpty {
            return EmulatorResponse.error(404, code: "route_not_found", message: "No route for \(request.method) \(request.path)")
        }
        return EmulatorResponse.error(405, code: "method_not_allowed",
                                      message: "\(request.method) is not allowed on \(request.path); use \(allowed.joined(separator: ", "))",
                                      headers: ["Allow": allowed.joined(separator: ", ")])
    }

    /// Segment-by-segment match; returns the captured parameters.
    private static func match(_ pattern: [Substring], _ path: [Substring]) -> [String: String]? {
        guard pattern.count == path.count,
              zip(pattern, path).allSatisfy({ p, s in p.hasPrefix(":") || p == s }) else { return nil }  // before any allocation
        var params: [String: String] = [:]
        for (p, s) in zip(pattern, path) {
            if p.hasPrefix(":") {
                params[String(p.dropFirst())] = String(s).removingPercentEncoding ?? String(s)
            } else if p != s {
                return nil
            }
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
    public static func error(_ status: Int, type: String = "invalid_request_error", code: String, message: String,
                             param: String? = nil, headers: HTTPHeaders = [:]) -> HTTPReply {
        var error: [String: JSON] = ["type": .string(type), "code": .string(code), "message": .string(message)]
        if let param { error["param"] = .string(param) }
        return json(status, ["error": .object(error)], headers: headers)
    }
}
