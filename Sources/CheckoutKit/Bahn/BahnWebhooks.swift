import Crypto
import Foundation
import Synchronization

/// One webhook event as received.
public struct BahnWebhookEvent: Sendable {
    public var id: String
    public var type: String
    public var intentID: String?
    public var status: String?
    public var receivedAt: Date
    /// The parsed body (reporters redact it before showing it).
    public var body: JSON

    /// The event a delivery's body is, nil when it is not a Bahn event (no id or type).
    public init?(body: JSON, receivedAt: Date = Date()) {
        guard let id = body["id"]?.stringValue, let type = body["type"]?.stringValue else { return nil }
        let intent = body["data"]?["payment_intent"]
        self.id = id
        self.type = type
        self.intentID = intent?["id"]?.stringValue
        self.status = intent?["status"]?.stringValue
        self.receivedAt = receivedAt
        self.body = body
    }
}

/// Webhook signatures (DECISION in BahnProtocol): `Bn-Signature: t=<unix>,v1=<hex HMAC-SHA256>` over
/// "<t>.<raw body>", checked over the raw bytes before any JSON parsing, within a tolerance.
public enum BahnWebhookSignature {
    /// nil when valid, else why not.
    public static func problem(
        body: Data, header: String?, secret: String, now: Date = Date(),
        tolerance: TimeInterval = BahnProtocol.signatureTolerance
    ) -> String? {
        guard let header, !header.isEmpty else { return "missing \(BahnProtocol.signatureHeader) header" }
        var timestamp: Int?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
            guard kv.count == 2 else { continue }
            if kv[0] == "t" { timestamp = Int(kv[1]) } else if kv[0] == "v1" { signatures.append(kv[1].lowercased()) }
        }
        guard let timestamp else {
            return "malformed \(BahnProtocol.signatureHeader) header: no t=<unix seconds> timestamp"
        }
        guard !signatures.isEmpty else {
            return "malformed \(BahnProtocol.signatureHeader) header: no v1=<hex> signature"
        }
        // Past and future are told apart: one is a replay or a long delay, the other a clock that is off.
        let age = now.timeIntervalSince1970 - Double(timestamp)
        if age > tolerance {
            return
                "stale signature: signed \(Int(age)) s ago, beyond the \(Int(tolerance)) s tolerance (a replayed or long-delayed delivery)"
        }
        if -age > tolerance {
            return
                "signature dated \(Int(-age)) s in the future, beyond the \(Int(tolerance)) s tolerance (the sender's clock or this machine's is off)"
        }
        let expected = sign(body: body, timestamp: timestamp, secret: secret)
        // Compare in constant time: the signature is a secret-derived value.
        let matches = signatures.contains { candidate in
            candidate.utf8.count == expected.utf8.count
                && zip(candidate.utf8, expected.utf8).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
        return matches ? nil : "signature does not match (wrong BAHN_WEBHOOK_SECRET, or the body was altered)"
    }

    public static func sign(body: Data, timestamp: Int, secret: String) -> String {
        HMAC.sha256(key: Data(secret.utf8), message: Data("\(timestamp).".utf8) + body).hexString
    }
}

/// A webhook receiver on the loopback server: verifies each delivery, drops duplicates by event id, keeps
/// the events for `bahn.awaitWebhook`, reports each new one, and optionally forwards the raw delivery.
public final class BahnWebhookInbox: Sendable {
    private let server: HTTPServer
    /// What it received, for the steps that wait for an event.
    public let events: BahnWebhookEvents

    public var url: String { server.baseURL + "/webhooks/bahn" }
    public var port: UInt16 { server.port }

    /// - Parameters:
    ///   - onEvent: called once per new event (not for duplicates or rejected deliveries).
    ///   - onDuplicate: called for a verified delivery of an event already received (a retry, a resend).
    ///   - onRejected: called with the reason for each delivery refused with 400.
    ///   - onForwarded: called with the result of passing each delivery on to `forwardTo`.
    public init(
        secret: String, host: String = "127.0.0.1", port: UInt16 = 0, forwardTo: String? = nil,
        onEvent: @escaping @Sendable (BahnWebhookEvent) -> Void = { _ in },
        onDuplicate: @escaping @Sendable (BahnWebhookEvent) -> Void = { _ in },
        onRejected: @escaping @Sendable (String) -> Void = { _ in },
        onForwarded: @escaping @Sendable (BahnForwardResult) -> Void = { _ in }
    ) throws(Diagnostic) {
        let events = BahnWebhookEvents()
        self.events = events
        let forwarder = forwardTo.map { Forwarder(url: $0, onResult: onForwarded) }
        do {
            server = try HTTPServer(host: host, port: port) { request in
                guard request.method == "POST" else { return .respond(.text(405, "POST webhooks here\n")) }
                if let problem = BahnWebhookSignature.problem(
                    body: request.body, header: request.headers[BahnProtocol.signatureHeader],
                    secret: secret)
                {
                    onRejected(problem)
                    return .respond(.json(400, JSON.object(["error": .string(problem)]).data))
                }
                guard let event = (try? JSON.parse(request.body)).flatMap({ BahnWebhookEvent(body: $0) }) else {
                    onRejected("body is not a Bahn event")
                    return .respond(.json(400, JSON.object(["error": "body is not a Bahn event"]).data))
                }
                let isNew = events.add(event)
                if isNew {
                    onEvent(event)
                    forwarder?.forward(request, eventID: event.id)
                } else {
                    onDuplicate(event)
                }
                return .respond(.json(200, JSON.object(["received": true, "duplicate": .bool(!isNew)]).data))
            }
        } catch {
            throw .unavailable(
                "cannot listen for webhooks on \(host):\(port): \(error)",
                hint: "pick another --port, or 0 for any free port")
        }
    }

    public func start() { server.start() }
    public func shutdown() { server.shutdown() }
    public func waitUntilShutdown() { server.waitUntilShutdown() }

    public var received: [BahnWebhookEvent] { events.received }
}

/// The events a listener received, without duplicates, for the steps that wait for one. A replay fills one from its
/// recording instead of a socket. The runs of a batch share one (see `BahnInboxes`), so an event is found by its id and
/// its intent without going through all of them.
public final class BahnWebhookEvents: Sendable {
    private struct Received {
        var list: [BahnWebhookEvent] = []
        var ids: Set<String> = []
        /// Positions in `list`, by the intent the event is about.
        var byIntent: [String: [Int]] = [:]
    }
    private let state = Mutex(Received())
    /// No event comes but these (a replay's): a wait for another ends at once.
    private let complete: Bool

    public init(_ events: [BahnWebhookEvent] = [], complete: Bool = false) {
        self.complete = complete
        for event in events { add(event) }
    }

    public var received: [BahnWebhookEvent] { state.withLock { $0.list } }

    /// How many events came so far: where a run that starts now begins to look (`wait(…, from:)`).
    public var count: Int { state.withLock { $0.list.count } }

    /// Keeps the event unless one with its id came before; whether it was new.
    @discardableResult
    public func add(_ event: BahnWebhookEvent) -> Bool {
        state.withLock { state -> Bool in
            guard state.ids.insert(event.id).inserted else { return false }
            if let intent = event.intentID { state.byIntent[intent, default: []].append(state.list.count) }
            state.list.append(event)
            return true
        }
    }

    /// The first event of `type` received (for `intent`, when given) at position `start` or later.
    func first(_ type: String, intent: String?, from start: Int = 0) -> BahnWebhookEvent? {
        state.withLock { state in
            guard let intent else { return state.list[min(start, state.list.count)...].first { $0.type == type } }
            for position in state.byIntent[intent] ?? [] where position >= start && state.list[position].type == type {
                return state.list[position]
            }
            return nil
        }
    }

    /// Waits for an event of `type` (for `intent`, when given), up to `timeout` seconds; nil when none came, or
    /// when the waiting task was cancelled (an interrupted run). Only events from position `start` on count: a run
    /// sharing its batch's inbox looks at what came since it started, never at an earlier run's events.
    public func wait(for type: String, intent: String?, timeout: Double, from start: Int = 0) async -> BahnWebhookEvent?
    {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            if let found = first(type, intent: intent, from: start) { return found }
            if complete || ContinuousClock.now >= deadline { return nil }
            do { try await Task.sleep(for: .milliseconds(25)) } catch { return nil }
        }
    }
}

/// What passing one delivery on did: the status it was answered with, or why it failed.
public struct BahnForwardResult: Sendable {
    public var eventID: String
    public var url: String
    public var status: Int?
    public var failure: String?

    /// A delivery answered with a 2xx.
    public var delivered: Bool { status.map { (200..<300).contains($0) } ?? false }

    /// One line for a person when it did not go through; nil when it did.
    public var problem: String? {
        if let failure { return "forwarding \(eventID) to \(url) failed: \(failure)" }
        if let status, !delivered { return "forwarding \(eventID) to \(url): it answered \(status)" }
        return nil
    }
}

/// Sends each verified delivery on, unchanged (body and signature), to another URL.
private struct Forwarder: Sendable {
    let url: String
    let onResult: @Sendable (BahnForwardResult) -> Void
    // The forward target is the developer's own server, reached directly.
    let transport = CurlTransport(options: .direct)

    func forward(_ request: HTTPRequest, eventID: String) {
        var headers: HTTPHeaders = ["Content-Type": request.headers["Content-Type"] ?? "application/json"]
        if let signature = request.headers[BahnProtocol.signatureHeader] {
            headers[BahnProtocol.signatureHeader] = signature
        }
        let outgoing = HTTPClientRequest(method: "POST", url: url, headers: headers, body: request.body, timeout: 10)
        Task { [transport, url, onResult] in
            do {
                let response = try await transport.send(outgoing)
                onResult(BahnForwardResult(eventID: eventID, url: url, status: response.status))
            } catch {
                onResult(BahnForwardResult(eventID: eventID, url: url, failure: "\(error)"))
            }
        }
    }
}
