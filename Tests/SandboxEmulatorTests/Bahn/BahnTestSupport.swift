import Crypto
import Foundation
import LoopbackHTTP
import SandboxEmulator

#if canImport(Glibc)
    import Glibc
#endif

/// A response as the test client read it off the socket.
struct RawResponse {
    var status: Int
    var headers: HTTPHeaders
    var body: Data

    var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: body)) as? [String: Any]) ?? [:] }
    var error: [String: Any] { json["error"] as? [String: Any] ?? [:] }
    var errorCode: String? { error["code"] as? String }
    var intent: [String: Any] { json["payment_intent"] as? [String: Any] ?? [:] }
}

/// A tiny blocking HTTP/1.1 client over a socket: one request per connection (`Connection: close`).
func rawRequest(
    port: UInt16, method: String, path: String, headers: [(String, String)] = [], body: Data = Data()
) throws -> RawResponse {
    struct Failure: Error { var what: String }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(what: "socket") }
    defer { close(fd) }
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var sin = sockaddr_in()
    sin.sin_family = sa_family_t(AF_INET)
    sin.sin_port = port.bigEndian
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr)
    let ok = withUnsafePointer(to: &sin) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard ok == 0 else { throw Failure(what: "connect") }
    var head =
        "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    let request = [UInt8](Data((head + "\r\n").utf8) + body)
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n > 0 else { throw Failure(what: "send") }
        sent += n
    }
    var raw = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = recv(fd, &buffer, buffer.count, 0)
        if n <= 0 { break }
        raw.append(contentsOf: buffer[0..<n])
    }
    guard let split = raw.firstRange(of: Data("\r\n\r\n".utf8)) else { throw Failure(what: "no response head") }
    let lines = String(decoding: raw[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    let status = Int(lines[0].split(separator: " ")[1]) ?? 0
    var parsed = HTTPHeaders()
    for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { continue }
        parsed.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    var bodyData = Data(raw[split.upperBound...])
    if let length = parsed["Content-Length"].flatMap(Int.init) { bodyData = bodyData.prefix(length) }
    return RawResponse(status: status, headers: parsed, body: bodyData)
}

/// The client side of Bahn requests, as a merchant backend would send them.
struct BahnTestClient {
    let port: UInt16
    static let key: P256PrivateKey = try! P256PrivateKey(pem: TestCredentials.bahnClientPrivateKeyPEM)

    /// Compact JWS (ES256, 64-byte R‖S) of `payload` with the registered client key.
    static func jws(
        _ payload: Data, header: String = #"{"alg":"ES256","kid":"emulator-client-key-1"}"#,
        key: P256PrivateKey = key
    ) -> String {
        let input = Data(header.utf8).base64URLEncodedString() + "." + payload.base64URLEncodedString()
        return input + "." + key.signES256(Data(input.utf8)).base64URLEncodedString()
    }

    static func standardHeaders(post: Bool) -> [(String, String)] {
        var h = [("Bn-Api-Key", TestCredentials.bahnAPIKey), ("Bn-Request-Id", UUID().uuidString.lowercased())]
        if post { h += [("Content-Type", "application/jose"), ("Bn-Jose-Method", "jws")] }
        return h
    }

    func post(_ path: String, _ object: [String: Any], idempotencyKey: String? = nil) throws -> RawResponse {
        let payload = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        var headers = Self.standardHeaders(post: true)
        if let idempotencyKey { headers.append(("Bn-Idempotency-Key", idempotencyKey)) }
        return try rawRequest(
            port: port, method: "POST", path: path, headers: headers, body: Data(Self.jws(payload).utf8))
    }

    func get(_ path: String) throws -> RawResponse {
        try rawRequest(port: port, method: "GET", path: path, headers: Self.standardHeaders(post: false))
    }

    func createIntent(amount: Int, currency: String = "704") throws -> String {
        let response = try post(
            "/api/payment_intents",
            [
                "amount": amount, "currency": currency, "description": "Order #1234",
                "metadata": ["order_id": "1234"],
            ])
        guard let id = response.intent["id"] as? String else { throw CocoaError(.coderInvalidValue) }
        return id
    }

    func confirm(
        _ id: String, token: String, key: String = UUID().uuidString, manual: Bool = false
    ) throws -> RawResponse {
        var body: [String: Any] = ["payment_method_data": ["apple_pay": ["token": token]]]
        if manual { body["capture_method"] = "manual" }
        return try post("/api/payment_intents/\(id)/confirm", body, idempotencyKey: key)
    }
}

/// Runs `body` against a started emulator and shuts it down afterwards.
func withEmulator<T>(webhookURL: String? = nil, _ body: (Emulator, BahnTestClient) throws -> T) throws -> T {
    let emulator = try Emulator(webhookURL: webhookURL)
    emulator.start()
    defer { emulator.shutdown() }
    return try body(emulator, BahnTestClient(port: emulator.port))
}
