import Foundation
import Synchronization

/// Long-lived helpers a run provides to operations (listeners that outlive a single step).
public struct RunServices: Sendable {
    /// The providers' listeners this run started (see `RunServiceRecipe`); an operation finds its own with
    /// `service(_:)`.
    public var started: [any RunService]
    /// The directory the paths of files the run makes for itself (test tokens) name; never created, since the files
    /// are held in memory (`madeFiles`) and go with the run.
    public var scratchDirectory: String?
    /// What the run made for itself under that directory's name, held in memory (see `MadeFiles`).
    public let madeFiles = MadeFiles()
    /// Where a file that a later command needs is kept (a token whose confirm has an unknown outcome).
    public var keepDirectory: String?
    /// Global options that point a later command at this run's environment and state file (`--env`, `--session`),
    /// appended to the commands that settle an unknown outcome.
    public var settleOptions: [String]
    /// Said with those commands when they cannot be complete (the run had `--set` secrets, which are never printed).
    public var settleCaveat: String?
    /// The run talks to an emulator that ends with this process: nothing it did outlives the command.
    public var emulatorEndsWithRun: Bool
    /// `--force`: a money call goes ahead although the state file keeps an earlier one's outcome open (the user settled
    /// it by other means); the open outcomes it passes over are dropped, with a note.
    public var force = false
    /// Whether anything in this run got a well-formed answer: until then a garbled one may be a wrong endpoint URL.
    public let answers = AnswerLog()
    /// Where operations listen for what comes back to the driver (a 3DS return): loopback sockets, or a replay's.
    public var listening: any Listening = LoopbackListening()
    /// The wall clock a service's own timestamps are compared with (a confirm's "call before"): a replay runs at the
    /// time of its recording.
    public var now: @Sendable () -> Date = { Date() }

    public init(
        started: [any RunService] = [], scratchDirectory: String? = nil, keepDirectory: String? = nil,
        settleOptions: [String] = [], emulatorEndsWithRun: Bool = false
    ) {
        self.started = started
        self.scratchDirectory = scratchDirectory
        self.keepDirectory = keepDirectory
        self.settleOptions = settleOptions
        self.settleCaveat = nil
        self.emulatorEndsWithRun = emulatorEndsWithRun
    }

    /// The started service of this type, if the run has one.
    public func service<Service: RunService>(_ type: Service.Type) -> Service? {
        started.lazy.compactMap { $0 as? Service }.first
    }

    /// Stops every started service (at the end of the run).
    public func stop() async {
        for service in started { await service.stop() }
    }
}

/// What a step — a raw request or a provider operation — gets to work with. `send` is the one place where
/// the retry policy, the deadline and the exchange events meet, so every request of every operation is
/// retried, bounded, traced and recorded the same way.
public struct OperationContext: Sendable {
    public let step: String
    public let client: HTTPClient
    public let retry: RetryPolicy
    public let requestTimeout: Double
    public let deadline: Deadline
    public let configuration: Configuration
    public let state: StateStore?
    public let redactor: Redactor
    public let services: RunServices
    let events: FlowEventSink
    let counter: ExchangeCounter

    /// Sends a request, retrying where the retry policy allows. `build` is called once per attempt with the
    /// attempt number (1-based), so per-attempt headers such as a request id are fresh each time while an
    /// idempotency key stays the same.
    public func send(
        _ build: @Sendable (Int) throws(Diagnostic) -> HTTPClientRequest
    ) async throws(Diagnostic) -> HTTPClientResponse {
        try MoneyCall.beforeSending(state)
        let last = try await retry.exchange(
            client: client, deadline: deadline, during: step, build: build,
            attempted: { record in
                counter.record(try? record.outcome.get())
                events(.exchange(record))
            },
            retrying: { attempt, delay, reason in
                events(.retrying(step: step, attempt: attempt, delay: delay, reason: redactor.text(reason)))
            })
        switch last.outcome {
        case .success(let response) where response.status == 429:
            // Rate limited on every attempt: a clear "not now" for the last one — the outcome is open only if an
            // earlier attempt may have taken effect (then a money call reads back).
            var limited = Diagnostic.failure(
                "\(last.request.method) \(redactor.text(last.request.url)): rate limited (429) on \(last.attempts == 1 ? "its attempt" : "all \(last.attempts) attempts")",
                hint:
                    "the service said not now\(response.headers["Retry-After"].map { " (Retry-After: \($0))" } ?? ""), so the last attempt did nothing; wait, then run it again"
            )
            limited.outcomeUncertain = last.outcomeOpen
            limited.rateLimited = true
            throw limited
        case .success(var response):
            response.outcomeOpen = last.outcomeOpen
            services.answers.note(response)
            return response
        case .failure(let error):
            var diagnostic = diagnose(
                error, request: last.request, attempts: last.attempts, deadlineBound: last.deadlineBound)
            if last.outcomeOpen { diagnostic.outcomeUncertain = true }
            throw diagnostic
        }
    }

    /// The hint for an answer that is not what the protocol promises: `endpoint` (check the URL) while nothing in this
    /// run has answered well — a configuration that never worked — and otherwise a service that failed this once.
    public func garbledHint(endpoint: String) -> String {
        services.answers.any
            ? "the service answered well before in this run, so it failed this once; try again later (see the answer with -v)"
            : endpoint
    }

    /// Reports something the user should know (a warning, what a retry did).
    public func note(_ message: String) { events(.note(step: step, message: redactor.text(message))) }

    /// Starts a listener (see `Listening`) and says where it listens (`FlowEvent.listening`): a recording keeps the
    /// address, for a replay to listen on again.
    public func listen(_ what: String, _ handler: @escaping HTTPHandler) throws(Diagnostic) -> any Listener {
        let listener = try services.listening.listen(what, handler)
        events(.listening(step: step, url: listener.baseURL))
        return listener
    }

    /// Shows a link the user must act on (see `FlowEvent.link`) — not in a replay, where the link is the recording's
    /// and nobody can act on it (the recorded answers decide).
    public func offer(_ label: String, url: String) {
        guard services.listening.hearsOutside else {
            note("\(label): the recording's link is not offered; this replay takes the recorded answers")
            return
        }
        events(.link(step: step, label: label, url: redactor.text(url)))
    }

    /// Reports one poll of a wait the operation runs itself (the engine's `until` reports its own).
    func polled(_ poll: Int, _ reason: String) {
        events(.polling(step: step, poll: poll, reason: redactor.text(reason)))
    }

    private func diagnose(
        _ error: TransportError, request: HTTPClientRequest, attempts: Int, deadlineBound: Bool
    ) -> Diagnostic {
        let tries = attempts > 1 ? " after \(attempts) attempts" : ""
        let what = "\(request.method) \(redactor.text(request.url))"
        switch error {
        case .unreachable(let m):
            return .unavailable(
                "\(what): cannot connect\(tries): \(redactor.text(m))",
                hint: "check the base URL and that the service is up (--env local uses the built-in emulator)")
        case .timedOut:
            // The flow's deadline, not --timeout, ended it: the message names the budget that was set.
            if deadline.isSpent || deadlineBound {
                var exceeded = deadline.exceeded(during: step)
                exceeded.outcomeUncertain = true  // the deadline cut an exchange short
                return exceeded
            }
            // Whether the request may have acted is the retry loop's to say (RetryPolicy.leavesOutcomeOpen), for this
            // ending as for every other: `send` marks the diagnostic.
            return .unavailable(
                "\(what): no response within \(FlowRunner.format(request.timeout))s\(tries)",
                hint: "raise --timeout, or check the service with -v")
        case .connectionLost(let m):
            let safe = RetryPolicy.isSafeToRepeat(request)
            return .unavailable(
                "\(what): connection lost\(tries): \(redactor.text(m))",
                hint: safe
                    ? "the service may be failing; try again later"
                    : "the request may have been applied; it was not repeated because it has no idempotency key")
        case .cancelled(let sent):
            var interrupted = Diagnostic.interrupted(during: step)
            interrupted.outcomeUncertain = sent  // the request was on its way
            return interrupted
        case .invalidRequest(let m):
            return .data("\(what): \(redactor.text(m))")
        case .proxyRefused(let m):
            return .unavailable(
                "\(what): the proxy refused it, so it never reached the service: \(redactor.text(m))",
                hint:
                    "check the proxy and the credentials in its variable's URL, as curl takes them (`doctor` shows the proxy each base URL goes through), or exempt the host in no_proxy"
            )
        case .tlsRefused(let m):
            return .unavailable(
                "\(what): the TLS handshake failed, so nothing was sent: \(redactor.text(m))",
                hint:
                    "a certificate signed by a private CA (a company proxy's, a private sandbox's) is trusted with --cacert FILE or \(NetworkOptions.caBundleVariable)"
            )
        }
    }
}

/// Remembers whether a run got any well-formed (JSON) answer. Once it has, the check is one atomic load.
public final class AnswerLog: Sendable {
    private let seen = Atomic<Bool>(false)

    public init() {}

    public var any: Bool { seen.load(ordering: .relaxed) }

    func note(_ response: HTTPClientResponse) {
        guard !any, response.status < 500, response.json != nil else { return }
        seen.store(true, ordering: .relaxed)
    }
}

/// Files a run makes for itself (a test token), kept in memory under the path they would have in its scratch directory:
/// a checkout's token never goes through the disk. Whatever reads a file a flow names reads these first. A file the
/// user names (`--out`) is written as asked, and the token a settle command re-sends is written out when it needs it.
public final class MadeFiles: Sendable {
    private let files = Mutex<[String: Data]>([:])

    public init() {}

    func keep(_ bytes: Data, at path: String) { files.withLock { $0[path] = bytes } }

    /// The run's own file at `path`, else the disk's.
    public func read(_ path: String) -> Result<Data, FileIO.ReadError> {
        if let bytes = files.withLock({ $0[path] }) { return .success(bytes) }
        return FileIO.read(path)
    }
}

/// What a step's requests did, as its context counts them: how many exchanges, the last answer's status and headers,
/// and the step's account of money.
final class ExchangeCounter: @unchecked Sendable {
    // @unchecked: a step runs sequentially in one task; the lock only guards against misuse.
    private let lock = NSLock()
    private var value = 0
    private var status: Int?
    private var headers: HTTPHeaders?
    private var movements: [MoneyMovement] = []
    /// Counts an exchange and remembers its HTTP status and headers (when it got an answer).
    func record(_ response: HTTPClientResponse?) {
        lock.withLock {
            value += 1
            if let response {
                status = response.status
                headers = response.headers
            }
        }
    }
    var count: Int { lock.withLock { value } }
    /// The status of the step's last answered exchange: what a failed step shows.
    var lastStatus: Int? { lock.withLock { status } }
    /// The headers of the step's last answer, for `expect.headers`.
    var lastHeaders: HTTPHeaders? { lock.withLock { headers } }
    /// The step's account of money (`OperationContext.account`).
    func account(_ movement: MoneyMovement) { lock.withLock { movements.append(movement) } }
    var money: [MoneyMovement] { lock.withLock { movements } }
}
