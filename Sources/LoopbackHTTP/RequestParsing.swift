import Foundation
import WireTypes

/// Why reading a request stopped short of a request.
enum ReadFailure: Error {
    /// The request is bad or too big: answer with this status, then close.
    case reject(Int, String)
}

/// A request whose head has been parsed, and how far its body has arrived. Framing (RFC 9112 §6): chunked or
/// Content-Length, never both (a request-smuggling signal); no Transfer-Encoding on HTTP/1.0, which has none; and
/// chunked is the only transfer coding this server decodes.
struct PendingRequest {
    var head: ParsedHead
    let bodyStart: Int
    /// Where the request ends in the buffer (known once it is complete).
    private(set) var end: Int
    private var framing: Framing
    private let maxBody: Int
    /// The head asked for `100 Continue` and its body has not all arrived: send it once.
    var sendContinue = false
    var continueSent = false

    private enum Framing {
        case length(Int)
        case chunked(ChunkedBody)
    }

    init(head: ParsedHead, bodyStart: Int, limits: ServerLimits) throws(ReadFailure) {
        self.head = head
        self.bodyStart = bodyStart
        self.end = bodyStart
        self.maxBody = limits.maxBodyBytes
        let lengths = head.contentLengths
        if let transferEncoding = head.transferEncoding {
            guard head.http11 else { throw .reject(400, "Bad Request: Transfer-Encoding in an HTTP/1.0 request") }
            guard lengths.isEmpty else { throw .reject(400, "Bad Request: both Transfer-Encoding and Content-Length") }
            guard transferEncoding.trimmingCharacters(in: .whitespaces).lowercased() == "chunked" else {
                throw .reject(501, "Not Implemented: the only transfer coding accepted is chunked")
            }
            framing = .chunked(ChunkedBody(cursor: bodyStart))
        } else if let first = lengths.first {
            guard lengths.allSatisfy({ $0 == first }), let length = parseDecimal(first) else {
                throw .reject(400, "Bad Request: invalid Content-Length")
            }
            guard length <= limits.maxBodyBytes else { throw .reject(413, "Content Too Large") }
            framing = .length(length)
        } else {
            framing = .length(0)
        }
    }

    /// Reads on in `buffer`; true once the request is whole.
    mutating func advance(_ buffer: [UInt8]) throws(ReadFailure) -> Bool {
        let complete: Bool
        switch framing {
        case .length(let length):
            complete = buffer.count - bodyStart >= length
            if complete { end = bodyStart + length }
        case .chunked(var body):
            complete = try body.advance(buffer, maxBody: maxBody)
            if complete { end = body.cursor }
            framing = .chunked(body)
        }
        if !complete && head.expectContinue && !continueSent { sendContinue = true }
        return complete
    }

    /// The body of a whole request.
    func body(in buffer: [UInt8]) -> [UInt8] {
        switch framing {
        case .length(let length): Array(buffer[bodyStart..<(bodyStart + length)])
        case .chunked(let body): body.data
        }
    }
}

/// A chunked body decoded as its bytes arrive, enforcing the body limit on the running size. Trailers are read and
/// ignored.
struct ChunkedBody {
    /// The first byte not decoded yet.
    var cursor: Int
    var data: [UInt8] = []
    private var phase = Phase.size

    private enum Phase {
        case size
        case data(Int)
        case dataEnd
        case trailers
    }

    init(cursor: Int) { self.cursor = cursor }

    /// Decodes what `buffer` holds past `cursor`; true once the last chunk and the trailers are in.
    mutating func advance(_ buffer: [UInt8], maxBody: Int) throws(ReadFailure) -> Bool {
        while true {
            switch phase {
            case .size:
                guard let line = try line(in: buffer) else { return false }
                // chunk-size [; extensions]
                let sizePart = line.split(separator: UInt8(ascii: ";"), maxSplits: 1, omittingEmptySubsequences: false)[
                    0]
                guard let size = parseHex(trimmed(sizePart)) else {
                    throw .reject(400, "Bad Request: invalid chunk size")
                }
                if size == 0 {
                    phase = .trailers
                } else {
                    guard data.count + size <= maxBody else { throw .reject(413, "Content Too Large") }
                    phase = .data(size)
                }
            case .data(let size):
                guard buffer.count - cursor >= size else { return false }
                data.append(contentsOf: buffer[cursor..<(cursor + size)])
                cursor += size
                phase = .dataEnd
            case .dataEnd:
                guard let line = try line(in: buffer) else { return false }
                guard line.isEmpty else { throw .reject(400, "Bad Request: chunk data longer than its size") }
                phase = .size
            case .trailers:
                // Trailer fields until an empty line.
                guard let line = try line(in: buffer) else { return false }
                if line.isEmpty { return true }
            }
        }
    }

    /// The next whole line (without CRLF / LF), or nil until it has arrived. Lines are short in chunked framing.
    private mutating func line(in buffer: [UInt8]) throws(ReadFailure) -> ArraySlice<UInt8>? {
        guard let newline = buffer[cursor...].firstIndex(of: 0x0A) else {
            if buffer.count - cursor > 4096 { throw .reject(400, "Bad Request: chunk line too long") }
            return nil
        }
        var end = newline
        if end > cursor && buffer[end - 1] == 0x0D { end -= 1 }
        let line = buffer[cursor..<end]
        cursor = newline + 1
        return line
    }
}

// MARK: - Parsing helpers (pure functions on bytes)

struct ParsedHead {
    var request: HTTPRequest
    var http11: Bool
    // The headers the server itself acts on, picked out while parsing (avoids case-insensitive Foundation
    // string compares per lookup on the hot path).
    var transferEncoding: String? = nil
    var contentLengths: [String] = []
    var connection = ""
    var expectContinue = false
}

private let http11Version = Array("HTTP/1.1".utf8)
private let http10Version = Array("HTTP/1.0".utf8)

/// Parses "METHOD SP target SP HTTP/1.x" and the header fields. Anything malformed is a 400. One pass over the bytes,
/// line by line, with no array of lines.
func parseHead(_ bytes: ArraySlice<UInt8>) throws(ReadFailure) -> ParsedHead {
    /// Where the line starting at `start` lies (without CRLF / LF) and where the next one starts; nil past the last
    /// line. Positions, not a slice: an optional tuple holding a slice is copied and destroyed through the runtime's
    /// generic witnesses, 3.4k instructions a request.
    func line(from start: Int) -> (range: Range<Int>, next: Int)? {
        guard start < bytes.endIndex, let newline = bytes[start...].firstIndex(of: 0x0A) else { return nil }
        var end = newline
        if end > start && bytes[end - 1] == 0x0D { end -= 1 }
        return (start..<end, newline + 1)
    }
    // The head ends with an empty line, so a request line alone is not a request.
    guard let (requestRange, afterRequestLine) = line(from: bytes.startIndex), !requestRange.isEmpty,
        afterRequestLine < bytes.endIndex
    else { throw .reject(400, "Bad Request: malformed request line") }
    let requestLine = bytes[requestRange]
    guard !requestLine.contains(0x0D) else { throw .reject(400, "Bad Request: a bare CR in the request line") }
    guard let firstSpace = requestLine.firstIndex(of: 0x20),
        let secondSpace = requestLine[(firstSpace + 1)...].firstIndex(of: 0x20),
        !requestLine[(secondSpace + 1)...].contains(0x20)
    else { throw .reject(400, "Bad Request: malformed request line") }
    let method = requestLine[requestLine.startIndex..<firstSpace]
    let target = requestLine[(firstSpace + 1)..<secondSpace]
    let versionBytes = requestLine[(secondSpace + 1)...]
    guard !method.isEmpty, method.allSatisfy(isTokenByte), !target.isEmpty,
        target.allSatisfy({ $0 > 0x20 && $0 != 0x7F })
    else { throw .reject(400, "Bad Request: malformed request line") }
    // Compared with bytes, not a string's UTF-8 view: walking the view cost 460 instructions a request.
    let http11 = versionBytes.elementsEqual(http11Version)
    guard http11 || versionBytes.elementsEqual(http10Version) else {
        throw .reject(400, "Bad Request: unsupported HTTP version")
    }

    var headers = HTTPHeaders()
    // The fields the server acts on, gathered before the head is made once: a head made empty and filled in was
    // copied and destroyed again for every request.
    var transferEncoding: String?
    var contentLengths: [String] = []
    var connection = ""
    var expectContinue = false
    var hosts = 0
    var next = afterRequestLine
    while let (range, after) = line(from: next), !range.isEmpty {
        next = after
        let line = bytes[range]
        // A CR that does not end its line (RFC 9112 §2.2) could be read as a line end by one parser and not another.
        guard !line.contains(0x0D) else { throw .reject(400, "Bad Request: a bare CR in the header section") }
        // Obsolete line folding and names with whitespace before the colon are rejected (RFC 9112 §5).
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[line.startIndex..<colon].allSatisfy(isTokenByte)
        else { throw .reject(400, "Bad Request: malformed header field") }
        let value = trimmed(line[(colon + 1)...])
        guard !value.contains(0) else { throw .reject(400, "Bad Request: malformed header field") }
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
        let valueText = String(decoding: value, as: UTF8.self)
        headers.add(name, valueText)
        // The name's length picks the one it may be; its bytes, compared without case, tell (no lowercased copy).
        func named(_ known: String) -> Bool { HTTPHeaders.sameName(name, known) }
        switch colon - line.startIndex {
        case 4 where named("Host"): hosts += 1
        case 17 where named("Transfer-Encoding"):
            transferEncoding = transferEncoding.map { $0 + ", " + valueText } ?? valueText
        case 14 where named("Content-Length"): contentLengths.append(valueText)
        case 10 where named("Connection"): connection += valueText.lowercased()
        case 6 where named("Expect"): expectContinue = valueText.lowercased() == "100-continue"
        default: break
        }
    }
    // HTTP/1.1 needs exactly one Host (RFC 9112 §3.2); two could be read differently by different hops.
    if hosts > 1 { throw .reject(400, "Bad Request: more than one Host header") }
    if http11 && hosts == 0 { throw .reject(400, "Bad Request: an HTTP/1.1 request needs a Host header") }
    let request = HTTPRequest(
        method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
        headers: headers)
    return ParsedHead(
        request: request, http11: http11, transferEncoding: transferEncoding, contentLengths: contentLengths,
        connection: connection, expectContinue: expectContinue)
}

/// RFC 9110 token characters (method and header names): asked of every byte of every name.
let tokenBytes = ByteSet { b in
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
    default:
        "!#$%&'*+-.^_`|~".utf8.contains(b)
    }
}

func isTokenByte(_ b: UInt8) -> Bool { tokenBytes.contains(b) }

/// Whether `word` occurs in `text`, compared as bytes (the Connection header's lowercased values). Foundation's
/// `contains` cost each request a thousand instructions even with no such header.
func occurs(_ word: String, in text: String) -> Bool {
    !text.isEmpty && text.utf8.firstRange(of: word.utf8) != nil
}

func trimmed(_ s: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
    var s = s
    while let f = s.first, f == 0x20 || f == 0x09 { s.removeFirst() }
    while let l = s.last, l == 0x20 || l == 0x09 { s.removeLast() }
    return s
}

/// Digits only (no sign, no spaces), and small enough not to overflow.
func parseDecimal(_ s: String) -> Int? {
    guard !s.isEmpty, s.utf8.count <= 15, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int(s)
}

func parseHex(_ s: ArraySlice<UInt8>) -> Int? {
    guard !s.isEmpty, s.count <= 12 else { return nil }
    var value = 0
    for b in s {
        switch b {
        case 0x30...0x39: value = value * 16 + Int(b - 0x30)
        case 0x41...0x46: value = value * 16 + Int(b - 0x41 + 10)
        case 0x61...0x66: value = value * 16 + Int(b - 0x61 + 10)
        default: return nil
        }
    }
    return value
}

public func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 100: "Continue"
    case 200: "OK"
    case 201: "Created"
    case 202: "Accepted"
    case 204: "No Content"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 304: "Not Modified"
    case 307: "Temporary Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 402: "Payment Required"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 408: "Request Timeout"
    case 409: "Conflict"
    case 410: "Gone"
    case 413: "Content Too Large"
    case 415: "Unsupported Media Type"
    case 422: "Unprocessable Content"
    case 425: "Too Early"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    case 504: "Gateway Timeout"
    default: "Status \(status)"
    }
}
