import Foundation
import WireTypes

/// Header fields in arrival order with case-insensitive lookup (RFC 9110 §5.1).
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }
    public init(dictionaryLiteral elements: (String, String)...) { fields = elements.map { ($0.0, $0.1) } }

    /// The first value of `name`, compared case-insensitively.
    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            fields.removeAll { Self.sameName($0.name, name) }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether two field names are one: a name is a token of ASCII characters, compared with ASCII case folded
    /// (RFC 9110 §5.1) — on bytes, since Foundation's case-insensitive comparison goes through `NSString` and cost a
    /// few percent of a checkout's instructions in header lookups alone.
    public static func sameName(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                for i in x.indices where x[i] != y[i] {
                    // Only letters differ by case, by the 0x20 bit alone.
                    guard x[i] | 0x20 == y[i] | 0x20, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(x[i] | 0x20)
                    else { return false }
                }
                return true
            }
        }
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (a: HTTPHeaders, b: HTTPHeaders) -> Bool {
        a.fields.count == b.fields.count
            && zip(a.fields, b.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A request as the server parsed it off the wire.
public struct HTTPRequest: Sendable {
    public var method: String
    /// The raw request target, e.g. `/api/payment_intents?limit=3`.
    public var target: String
    public var headers: HTTPHeaders
    /// The body exactly as received (chunked bodies already de-chunked).
    public var body: Data
    /// Zero-based index of this request on its connection (keep-alive reuse is observable through it).
    public var indexOnConnection: Int
    /// A process-unique number for the connection the request came in on.
    public var connectionID: Int

    public init(
        method: String, target: String, headers: HTTPHeaders = [:], body: Data = Data(),
        indexOnConnection: Int = 0, connectionID: Int = 0
    ) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.indexOnConnection = indexOnConnection
        self.connectionID = connectionID
    }

    /// The path part of the target, without the query.
    public var path: String {
        // Searched as a buffer: the string's UTF-8 view, walked index by index, cost 500 instructions a request.
        var target = target
        return target.withUTF8 { bytes in
            bytes.firstIndex(of: UInt8(ascii: "?")).map {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self)
            }
        } ?? target
    }

    /// Decoded query parameters (later duplicates win), read as a form is (`FormEncoding`).
    public var query: [String: String] {
        guard let q = target.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
        return Dictionary(FormEncoding.decode(Data(q.utf8)), uniquingKeysWith: { _, later in later })
    }
}

/// A response to write back.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: Data

    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func json(_ status: Int, _ body: Data, headers: HTTPHeaders = [:]) -> HTTPResponse {
        var h = headers
        h["Content-Type"] = "application/json"
        return HTTPResponse(status: status, headers: h, body: body)
    }

    public static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Data(text.utf8))
    }
}

/// What a handler asks the server to do with a request. Faults are first-class so that the
/// emulator can simulate networks that fail in the ways real ones do.
public enum HTTPReply: Sendable {
    /// Write the response (one write, `Content-Length` framing).
    case respond(HTTPResponse)
    /// Close the connection with a TCP reset, writing nothing.
    case reset
    /// Write the head (with the full `Content-Length`) and only the first `bodyBytes` bytes of the body, then close.
    case truncate(HTTPResponse, bodyBytes: Int)
}

public typealias HTTPHandler = @Sendable (HTTPRequest) -> HTTPReply
