import Foundation
import Synchronization

/// Where a replay first stopped matching its recording: a request the recording lacks, one that differs from the
/// recorded one, or recorded requests the replay never made.
public struct Divergence: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// A request differs from the one in its place.
        case differs
        /// A request past the recording's last.
        case extra
        /// The replay ended before making every recorded request.
        case missing
        /// Every request matched, and a step ended otherwise than recorded.
        case step
    }

    public var kind: Kind
    /// The request's place in the recording, from 1; nil when every request matched and a step ended otherwise.
    public var request: Int?
    /// The step of this run the divergence is in: the one that sent the request (`sentBy`), or the one that ended
    /// otherwise than recorded; nil when this run sent no request there (recorded requests it never made).
    public var step: String?
    /// The step and attempt of this run that sent the request, for a request that differs or is one too many.
    public var sentBy: HTTPClientRequest.Sender?
    public var headline: String
    /// What led there (the recorded answer before), then path by path, redacted.
    public var lines: [String]

    public init(
        kind: Kind, request: Int?, step: String?, sentBy: HTTPClientRequest.Sender? = nil, headline: String,
        lines: [String]
    ) {
        self.kind = kind
        self.request = request
        self.step = step
        self.sentBy = sentBy
        self.headline = headline
        self.lines = lines
    }
}

/// The transport of `flow replay`: answers each request with the recorded answer to the request in its place, once it
/// matches (`ReplayMatch`), and opens no socket. Its listeners take the addresses the recording listened on; a request
/// to one of them goes to its handler, as it went to its socket. The first divergence ends the replay: that request and
/// every later one fail with `invalidRequest`, and `verdict()` says where and how.
public final class ReplayTransport: HTTPClient, Listening {
    public let recording: Recording
    private let redactor: Redactor

    private struct Progress {
        var next = 0
        var divergence: Divergence?
        var handlers: [String: HTTPHandler] = [:]
        var listened = 0
    }

    private let progress = Mutex(Progress())

    public init(recording: Recording, redactor: Redactor) {
        self.recording = recording
        self.redactor = redactor
    }

    /// How many recorded requests the replay made so far.
    public var matched: Int { progress.withLock { $0.next } }

    public func send(_ request: HTTPClientRequest) async throws(TransportError) -> HTTPClientResponse {
        let exchanges = recording.exchanges
        // How the request is named in a divergence; only made for one.
        let redactor = redactor
        func describeSent() -> String {
            ReplayMatch.describe(
                method: request.method, url: redactor.text(request.url),
                body: request.body.map { redactor.body($0, contentType: request.headers["Content-Type"]) })
        }
        let found = progress.withLock { p -> Result<(Recording.Exchange, HTTPHandler?), TransportError> in
            if let earlier = p.divergence {
                return .failure(
                    .invalidRequest(
                        "not replayed: the replay diverged at request \(earlier.request ?? 0) of the recording"))
            }
            let index = p.next
            let sender = request.sender
            // Which recorded answer this run acted on last: what led it to send this request.
            let before = index > 0 ? [Self.ledThere(exchanges, index - 1)] : []
            guard index < exchanges.count else {
                let sent = describeSent()
                p.divergence = Divergence(
                    kind: .extra, request: index + 1, step: sender?.step, sentBy: sender,
                    headline:
                        "sent \(sent), but the recording ends after \(exchanges.count) request\(exchanges.count == 1 ? "" : "s")",
                    lines: before)
                return .failure(.invalidRequest("the recording has no request \(index + 1): \(sent)"))
            }
            let recorded = exchanges[index]
            let differences = ReplayMatch.differences(recorded, request, redactor: redactor)
            guard differences.isEmpty else {
                let sent = describeSent()
                let expected = ReplayMatch.describe(method: recorded.method, url: recorded.url, body: recorded.body)
                let senders =
                    sender.map { $0 == recorded.sender ? "" : ", where the recording's was sent by \(recorded.sender)" }
                    ?? ""
                let headline =
                    expected == sent
                    ? "sent \(sent), which differs from the recorded one\(senders)"
                    : "sent \(sent), but the recording's request \(index + 1) is \(expected), sent by \(recorded.sender)"
                p.divergence = Divergence(
                    kind: .differs, request: index + 1, step: sender?.step, sentBy: sender, headline: headline,
                    lines: before + differences)
                return .failure(.invalidRequest("it differs from the recording's request \(index + 1)"))
            }
            p.next += 1
            return .success((recorded, p.handlers[Self.origin(request.url)]))
        }
        let (recorded, handler) = try found.get()
        // The driver's own listener hears the request, as its socket would have (the recorded answer is its answer).
        if let handler {
            let target = String(request.url.dropFirst(Self.origin(request.url).count))
            _ = handler(
                HTTPRequest(
                    method: request.method, target: target.isEmpty ? "/" : target, headers: request.headers,
                    body: request.body ?? Data()))
        }
        return try recorded.answer.get()
    }

    /// After the run: the first divergence, or the recorded requests it never made; nil when it made them all.
    public func verdict() -> Divergence? {
        progress.withLock { p in
            if let divergence = p.divergence { return divergence }
            let rest = recording.exchanges.dropFirst(p.next)
            guard !rest.isEmpty else { return nil }
            let lines =
                (p.next > 0 ? [Self.ledThere(recording.exchanges, p.next - 1)] : [])
                + rest.prefix(5).enumerated().map { offset, x in
                    "request \(p.next + offset + 1): \(ReplayMatch.describe(method: x.method, url: x.url, body: x.body)), sent by \(x.sender) when recorded"
                } + (rest.count > 5 ? ["… and \(rest.count - 5) more"] : [])
            return Divergence(
                kind: .missing, request: p.next + 1, step: nil,
                headline:
                    "the replay made \(p.next) request\(p.next == 1 ? "" : "s"), and the recording has \(rest.count) more it never made",
                lines: lines)
        }
    }

    /// "after the recorded answer to request 1 (step 'create-intent'): status 500": the answer this run got last.
    static func ledThere(_ exchanges: [Recording.Exchange], _ index: Int) -> String {
        let x = exchanges[index]
        let answer =
            switch x.answer {
            case .success(let response): "status \(response.status)"
            case .failure(let error): "no answer (\(error))"
            }
        return "after the recorded answer to request \(index + 1), sent by \(x.sender): \(answer)"
    }

    // MARK: - Listening

    public var hearsOutside: Bool { false }

    public func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener {
        let listeners = recording.listeners
        return progress.withLock { p in
            // A listener the recording did not have gets an address of its own; the requests that name it will differ.
            let url = p.listened < listeners.count ? listeners[p.listened] : "http://127.0.0.1:\(p.listened + 1)"
            p.listened += 1
            p.handlers[Self.origin(url)] = handler
            return Address(baseURL: url)
        }
    }

    private struct Address: Listener {
        let baseURL: String
        func start() {}
        func stop() {}
    }

    /// `http://host:port` of a URL.
    static func origin(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        return String(url[..<scheme.upperBound] + rest.prefix { $0 != "/" && $0 != "?" })
    }
}
