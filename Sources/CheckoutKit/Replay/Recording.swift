import Foundation

/// A HAR file that `--record` wrote, read back for `flow replay`: its exchanges in order, and `log._run` — the flow
/// that ran (name and definition), its variables, the environment and the non-secret configuration, the state it
/// started from, where it listened, and each step's outcome and output. Everything in it was redacted when written.
public struct Recording: Sendable {
    public struct Exchange: Sendable {
        public var step: String
        /// Which attempt of its step's exchange it was (1 unless the run repeated it).
        public var attempt: Int
        /// The step and attempt that sent it when it was recorded.
        public var sender: HTTPClientRequest.Sender { .init(step: step, attempt: attempt) }
        public var method: String
        /// As recorded: redacted, the recording's hosts.
        public var url: String
        public var contentType: String?
        /// The request body as recorded (`postData.text`, redacted); nil when there was none.
        public var body: String?
        public var answer: Result<HTTPClientResponse, TransportError>
    }

    public struct Step: Sendable {
        public var name: String
        public var outcome: StepResult.Outcome
        public var isFinally: Bool
        public var output: JSON?
    }

    public var exchanges: [Exchange]
    public var flow: String
    /// The flow as a flow file (`FlowEncoder`); nil in a recording of an older driver.
    public var definition: JSON?
    public var vars: JSON.Object
    public var environment: String
    public var kind: Configuration.Kind
    /// The configuration's non-secret values (base URLs): a replay's requests go to the same places.
    public var configuration: [String: String]
    /// The sections of the state file the run started from (a single step's chain).
    public var state: JSON?
    /// Where the run listened (a 3DS return), in order.
    public var listeners: [String]
    public var steps: [Step]
    public var startedAt: Date?
    public var driverVersion: String

    public static func read(path: String) throws(Diagnostic) -> Recording {
        switch FileIO.read(path) {
        case .success(let data): return try parse(data, source: path)
        case .failure(let error):
            throw .data(
                "cannot read the recording \(path): \(error.reason)", hint: "give the HAR file that --record wrote")
        }
    }

    public static func parse(_ data: Data, source: String) throws(Diagnostic) -> Recording {
        let hint = "give a HAR file that checkout-driver's --record wrote (a browser's HAR has no log._run to replay)"
        let document: JSON
        do { document = try JSON.parse(data) } catch {
            throw .data(
                "\(source) is not JSON, so not a HAR file: \(error)",
                hint: "a recording cut short (a run killed while writing it) cannot be replayed; " + hint)
        }
        guard let log = document["log"]?.objectValue, let entries = log["entries"]?.arrayValue else {
            throw .data("\(source) is not a HAR file: it has no log.entries", hint: hint)
        }
        guard let run = log["_run"]?.objectValue, let flow = run["flow"]?.stringValue else {
            throw .data(
                "\(source) has no log._run: it was not written by checkout-driver's --record (or by an earlier version, which did not record the run)",
                hint: hint)
        }
        var exchanges: [Exchange] = []
        for (index, entry) in entries.enumerated() {
            exchanges.append(try exchange(entry, at: "\(source): $.log.entries[\(index)]"))
        }
        let kindName = run["kind"]?.stringValue ?? (run["environment"]?.stringValue == "local" ? "local" : "sandbox")
        guard let kind = Configuration.Kind(rawValue: kindName) else {
            throw .data("\(source): $.log._run.kind: '\(kindName)' is neither local nor sandbox", hint: hint)
        }
        let steps = (run["steps"]?.arrayValue ?? []).compactMap { step -> Step? in
            guard let name = step["name"]?.stringValue,
                let outcome = step["outcome"]?.stringValue.flatMap(StepResult.Outcome.init)
            else { return nil }
            return Step(
                name: name, outcome: outcome, isFinally: step["finally"]?.boolValue ?? false, output: step["output"])
        }
        return Recording(
            exchanges: exchanges, flow: flow, definition: run["definition"], vars: run["vars"]?.objectValue ?? [:],
            environment: run["environment"]?.stringValue ?? "local", kind: kind,
            configuration: (run["configuration"]?.objectValue ?? [:]).compactMapValues(\.stringValue),
            state: run["state"],
            listeners: (run["listeners"]?.arrayValue ?? []).compactMap(\.stringValue), steps: steps,
            startedAt: entries.first?["startedDateTime"]?.stringValue.flatMap(Timestamp.parse),
            driverVersion: log["creator"]?["version"]?.stringValue ?? "?")
    }

    private static func exchange(_ entry: JSON, at path: String) throws(Diagnostic) -> Exchange {
        guard let request = entry["request"], let method = request["method"]?.stringValue,
            let url = request["url"]?.stringValue,
            let response = entry["response"], let status = response["status"]?.intValue
        else {
            throw .data(
                "\(path): an entry needs request.method, request.url and response.status",
                hint: "the file was changed by hand or cut short; record the run again")
        }
        let answer: Result<HTTPClientResponse, TransportError>
        if status == 0 {
            answer = .failure(failure(response["_error"]?.stringValue ?? ""))
        } else {
            var headers = HTTPHeaders()
            for header in response["headers"]?.arrayValue ?? [] {
                if let name = header["name"]?.stringValue, let value = header["value"]?.stringValue {
                    headers.add(name, value)
                }
            }
            let text = response["content"]?["text"]?.stringValue ?? ""
            answer = .success(
                HTTPClientResponse(
                    status: status, headers: headers, body: Data(text.utf8),
                    httpVersion: response["httpVersion"]?.stringValue ?? "HTTP/1.1"))
        }
        return Exchange(
            step: entry["_step"]?.stringValue ?? "?", attempt: entry["_attempt"]?.intValue ?? 1, method: method,
            url: url,
            contentType: request["postData"]?["mimeType"]?.stringValue, body: request["postData"]?["text"]?.stringValue,
            answer: answer)
    }

    /// The transport error a recorded `_error` (`TransportError.description`) names; a lost connection when it names
    /// none (the request went out and no answer came: what a replay must treat as open, as the run did).
    static func failure(_ text: String) -> TransportError {
        let kinds: [(String, (String) -> TransportError)] = [
            ("unreachable: ", TransportError.unreachable), ("timed out: ", TransportError.timedOut),
            ("connection lost: ", TransportError.connectionLost), ("invalid request: ", TransportError.invalidRequest),
        ]
        for (prefix, make) in kinds where text.hasPrefix(prefix) { return make(String(text.dropFirst(prefix.count))) }
        if text.hasPrefix("cancelled") { return .cancelled(sent: true) }
        return .connectionLost(text.isEmpty ? "no answer recorded" : text)
    }
}
