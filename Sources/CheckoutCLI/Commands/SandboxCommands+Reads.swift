import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver sandbox ledger | requests | events | trigger`, and `<provider> events resend`: a running emulator
/// read and driven from the command line, instead of curl against its `/_sandbox/` routes — the webhook commands for
/// every provider whose emulator sends webhooks (`EmulatedProvider.eventTypes`, `WebhookRoutes`).
extension SandboxCommands {
    /// A command's input that takes `--url`, the emulator to ask.
    protocol EmulatorInput: CommandInput {
        var url: String? { get set }
    }

    /// `--url`, declared once for every command that asks the running emulator.
    static func urlInput<Root: EmulatorInput>() -> Input<Root> {
        .url(
            "url", \.url, help: "The emulator's base URL [default: the running sandbox serve, or EMULATOR_URL].",
            schemes: ["http"])
    }

    /// `sandbox ledger` and `requests`: only the emulator to ask.
    struct ReadInput: EmulatorInput {
        var url: String?

        static let inputs: [Input<ReadInput>] = [urlInput()]
    }

    static let ledger = CommandSpec(
        name: "ledger", abstract: "Every authorisation, capture and void the running emulator recorded.",
        input: ReadInput.self
    ) { input, invocation throws(Diagnostic) in
        try await show(
            input, invocation, path: "/_sandbox/ledger", member: "entries", empty: "no money moved",
            header: ["id", "provider", "kind", "reference", "amount", "at"]
        ) { entry in
            let money = MoneyMovement(
                provider: "", kind: .charge, amount: entry["amount"]?.intValue, currency: entry["currency"]?.stringValue
            ).money
            return [entry["id"], entry["provider"], entry["kind"], entry["reference"]].map {
                $0?.interpolationText ?? ""
            }
                + [money, entry["at"]?.interpolationText ?? ""]
        }
    }

    static let requests = CommandSpec(
        name: "requests", abstract: "The requests the running emulator received (the latest it keeps).",
        input: ReadInput.self
    ) { input, invocation throws(Diagnostic) in
        try await show(
            input, invocation, path: "/_sandbox/requests", member: "requests", empty: "no requests",
            header: ["received", "method", "target", "status", "body", "connection"]
        ) { request in
            // The status it was answered, or how a fault cut the connection, or nothing yet (still being answered).
            let status = [request["status"]?.intValue.map(String.init), request["cut"]?.stringValue].compactMap { $0 }
                .joined(separator: ", ")
            return [
                request["receivedAt"]?.stringValue ?? "", request["method"]?.interpolationText ?? "",
                request["target"]?.interpolationText ?? "",
                status.isEmpty ? "—" : status, "\(request["bodyLength"]?.interpolationText ?? "0") bytes",
                request["connectionID"]?.interpolationText ?? "?",
            ]
        }
    }

    /// The providers whose emulators send webhook events, each with the types it sends (`EmulatedProvider.eventTypes`).
    static var eventSenders: [(name: String, types: [String])] {
        Emulator.providers.compactMap { $0.eventTypes.isEmpty ? nil : ($0.name, $0.eventTypes) }
    }

    /// `--provider NAME`, one of the providers whose emulators send webhooks.
    static func providerInput<Root: EmulatorInput>(
        _ path: WritableKeyPath<Root, String?> & Sendable, help: String
    ) -> Input<Root> {
        .value("provider", path, value: "NAME", help: help, choices: eventSenders.map(\.name))
    }

    /// `sandbox events`: whose events, and the emulator to ask.
    struct EventsInput: EmulatorInput {
        var provider: String?
        var url: String?

        static let inputs: [Input<EventsInput>] = [
            providerInput(
                \.provider, help: "Only this provider's events [default: every provider that sends webhooks]."),
            urlInput(),
        ]
    }

    static let events = CommandSpec(
        name: "events", abstract: "The webhook events the running emulator emitted, with their deliveries.",
        input: EventsInput.self
    ) { input, invocation throws(Diagnostic) in
        var events: [JSON] = []
        for provider in input.provider.map({ [$0] }) ?? eventSenders.map(\.name) {
            for event in try await items(input, invocation, path: "/_sandbox/\(provider)/events", member: "events") {
                events.append(.object((event.objectValue ?? [:]).merging(["provider": .string(provider)]) { $1 }))
            }
        }
        return try present(
            invocation, events, member: "events", empty: "no events",
            header: ["provider", "id", "type", "subject", "status", "deliveries"]
        ) { event in
            let deliveries = (event["deliveries"]?.arrayValue ?? []).map { d in
                let attempts = d["attempts"]?.arrayValue?.count ?? 0
                return
                    "\(d["target"]?.interpolationText ?? "?"): \(d["status"]?.interpolationText ?? "?") (\(attempts) attempt\(attempts == 1 ? "" : "s"))"
            }
            return [event["provider"], event["id"], event["type"], event["subject"], event["status"]].map {
                $0?.interpolationText ?? ""
            }
                + [deliveries.isEmpty ? "no target" : deliveries.joined(separator: ", ")]
        }
    }

    static let trigger = CommandSpec(
        name: "trigger", abstract: "Have the running emulator send a webhook event, as `stripe trigger` does.",
        discussion: """
            The event goes to every registered target (a listener such as `bahn listen`, a run awaiting webhooks,
            --webhook-url), signed and retried like any other. Without --subject it is about an object made up for it,
            in the state its type announces. Types: \(eventSenders.map { "\($0.types.joined(separator: ", ")) (\($0.name))" }.joined(separator: "; ")).
            """,
        input: TriggerInput.self
    ) { input, invocation throws(Diagnostic) in
        let type = input.event!
        let senders = eventSenders.filter { input.provider == nil || $0.name == input.provider }
        let types = senders.flatMap(\.types)
        guard let sender = senders.first(where: { $0.types.contains(type) }) else {
            let suggestion = Suggest.closest(to: type, in: types).map { "; did you mean '\($0)'?" } ?? ""
            throw invocation.usage("no event type '\(type)'\(suggestion) (types: \(types.joined(separator: ", ")))")
        }
        if input.subject != nil && input.intent != nil {
            throw invocation.usage("give --subject ID or --intent ID (its name for a Bahn event), not both")
        }
        var body: JSON.Object = ["type": .string(type)]
        if let subject = input.subject ?? input.intent { body["subject"] = .string(subject) }
        let answer = CheckoutDriver.redactor.json(
            try await call(
                input, invocation, method: "POST", path: "/_sandbox/\(sender.name)/events", body: .object(body)))
        try say(
            invocation, answer,
            "sent \(answer["id"]?.interpolationText ?? "?") \(type) for \(answer["subject"]?.interpolationText ?? "?") to \(targets(answer, provider: sender.name))"
        )
        return .ok
    }

    /// `sandbox trigger`: the event type, whose emulator sends it, what it is about, and the emulator to ask.
    struct TriggerInput: EmulatorInput {
        /// The `EVENT` argument, which the parser requires.
        var event: String?
        var provider: String?
        var subject: String?
        /// Bahn's name for the subject, which the command took before it took other providers' events.
        var intent: String?
        var url: String?

        static let inputs: [Input<TriggerInput>] = [
            .argument("EVENT", \.event, help: "The event type, e.g. payment_intent.status.succeeded."),
            providerInput(\.provider, help: "The provider whose emulator sends it [default: the one that has EVENT]."),
            .identifier(
                "subject", \.subject,
                help:
                    "What the event is about, an object of the emulator's (a Bahn payment intent) [default: a new one]."
            ),
            .identifier("intent", \.intent, help: "For a Bahn event, the same as --subject: the payment intent."),
            urlInput(),
        ]
    }

    /// `<provider> events resend ID`: an event the provider's emulator sent, delivered again.
    static func resend(provider: String) -> CommandSpec {
        CommandSpec(
            name: "resend",
            abstract: "Have the running emulator deliver a webhook event again, as `stripe events resend` does.",
            discussion: """
                The same event (its id and bytes), signed afresh, to every target registered now. The provider's own API
                has no such call: this asks the emulator (the running sandbox serve, --url, or EMULATOR_URL). `sandbox
                events` lists the ids.
                """,
            input: ResendInput.self
        ) { input, invocation throws(Diagnostic) in
            let id = input.id!
            guard id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw invocation.usage("'\(id)' is not an event id (evt_…)")
            }
            let answer = try await call(
                input, invocation, method: "POST", path: "/_sandbox/\(provider)/events/\(id)/resend",
                body: .object([:]))
            try say(invocation, answer, "resent \(id) to \(targets(answer, provider: provider))")
            return .ok
        }
    }

    /// `<provider> events resend`: the event to deliver again, and the emulator to ask.
    struct ResendInput: EmulatorInput {
        /// The `ID` argument, which the parser requires.
        var id: String?
        var url: String?

        static let inputs: [Input<ResendInput>] = [
            .argument("ID", \.id, help: "The event's id (evt_…)."),
            urlInput(),
        ]
    }

    private static func targets(_ answer: JSON, provider: String) -> String {
        let count = answer["targets"]?.intValue ?? 0
        return count == 0
            ? "no target (start `checkout-driver \(provider) listen` to receive it)"
            : count == 1 ? "1 target" : "\(count) targets"
    }

    private static func say(_ invocation: Invocation, _ answer: JSON, _ line: String) throws(Diagnostic) {
        let settings = try GlobalSettings(invocation)
        Console.shared.out(
            settings.output.format == .text ? line : answer.serialized(pretty: settings.output.format == .json))
    }

    /// A list of the emulator's as a table (text), one document (json) or a line per item (jsonl).
    private static func show(
        _ input: some EmulatorInput, _ invocation: Invocation, path: String, member: String, empty: String,
        header: [String],
        row: (JSON) -> [String]
    ) async throws(Diagnostic) -> ExitCode {
        try present(
            invocation, try await items(input, invocation, path: path, member: member), member: member, empty: empty,
            header: header, row: row)
    }

    /// `items` as a table (text), one document under `member` (json) or a line per item (jsonl).
    private static func present(
        _ invocation: Invocation, _ items: [JSON], member: String, empty: String, header: [String],
        row: (JSON) -> [String]
    ) throws(Diagnostic) -> ExitCode {
        let settings = try GlobalSettings(invocation)
        // What the emulator recorded holds credentials (headers, tokens, client secrets): masked like any output.
        let redactor = CheckoutDriver.redactor
        let answer = redactor.json(.object([member: .array(items.map { masked($0, redactor: redactor) })]))
        let items = answer[member]?.arrayValue ?? []
        switch settings.output.format {
        case .json: Console.shared.out(answer.serialized(pretty: true))
        case .jsonl: for item in items { Console.shared.out(item.serialized()) }
        case .text:
            if items.isEmpty {
                Console.shared.out(empty)
            } else {
                for line in FlowCommands.table([header] + items.map(row), indent: 0) { Console.shared.out(line) }
            }
        }
        return .ok
    }

    /// Every item of a list route, page by page (`ListPage`: `?limit=`, `?since=` the last id, `hasMore`).
    private static func items(
        _ input: some EmulatorInput, _ invocation: Invocation, path: String, member: String
    ) async throws(Diagnostic) -> [JSON] {
        var all: [JSON] = []
        var since: String?
        while true {
            let page = try await call(
                input, invocation, method: "GET",
                path: path + "?limit=\(ListPage.maxLimit)" + (since.map { "&since=\($0)" } ?? ""), body: nil)
            let items = page[member]?.arrayValue ?? []
            all += items
            guard page["hasMore"]?.boolValue == true, let last = items.last?["id"]?.stringValue else { return all }
            since = last
        }
    }

    /// A recorded request's headers (name–value pairs) and body, masked as the HAR masks them.
    private static func masked(_ item: JSON, redactor: Redactor) -> JSON {
        guard case .object(var o) = item, let pairs = o["headers"]?.arrayValue else { return item }
        let headers = HTTPHeaders(
            pairs.compactMap { pair in
                pair.arrayValue.flatMap { $0.count == 2 ? ($0[0].stringValue ?? "", $0[1].stringValue ?? "") : nil }
            })
        o["headers"] = .array(redactor.headers(headers).map { [.string($0.name), .string($0.value)] })
        if o["bodyEncoding"] == "utf8", let body = o["body"]?.stringValue {
            o["body"] = .string(redactor.body(Data(body.utf8), contentType: headers["Content-Type"]))
        }
        return .object(o)
    }

    /// The emulator to ask: --url, else the running `sandbox serve` (under --env local), else EMULATOR_URL. The
    /// environment's secrets (under --env local, the emulator's test credentials) are taught to the redactor.
    static func emulatorURL(_ input: some EmulatorInput, _ invocation: Invocation) throws(Diagnostic) -> String {
        let settings = try GlobalSettings(invocation)
        let configuration = try ConfigurationLoader().load(
            environmentFlag: settings.config.environment, configPath: settings.config.configPath,
            envFile: settings.config.envFile, flagValues: settings.config.configurationFlags
        ) { _ in
            LocalEnvironment.values(baseURL: "http://127.0.0.1:0")
        }
        for secret in configuration.secretValues { CheckoutDriver.redactor.register(secret) }
        if let url = input.url { return url }
        if configuration.kind != .local, let url = configuration.value("EMULATOR_URL") { return url }
        if let running = LocalEmulatorFile.running(processEnvironment: ProcessInfo.processInfo.environment) {
            return running.url
        }
        throw .unavailable(
            "no running emulator to ask: no sandbox serve is announced"
                + (configuration.kind == .local ? "" : " and EMULATOR_URL is not set"),
            hint:
                "start one (`checkout-driver sandbox serve &`), or give --url URL; an embedded emulator ends with its command"
        )
    }

    private static func call(
        _ input: some EmulatorInput, _ invocation: Invocation, method: String, path: String, body: JSON?
    ) async throws(Diagnostic) -> JSON {
        let base = try emulatorURL(input, invocation)
        let request = HTTPClientRequest(
            method: method, url: base + path, headers: body == nil ? [:] : ["Content-Type": "application/json"],
            body: body?.data, timeout: 5, readOnly: method == "GET")
        let response: HTTPClientResponse
        do { response = try await CurlTransport(options: .direct).send(request) } catch {
            throw .unavailable(
                "the emulator at \(base) does not answer: \(error.description)",
                hint: "is sandbox serve still running? `checkout-driver doctor` says")
        }
        let document = (try? JSON.parse(response.body)) ?? .null
        guard (200..<300).contains(response.status) else {
            let message = document["error"]?["message"]?.stringValue ?? "HTTP \(response.status)"
            // An id the emulator does not have is a failure, as Bahn's 404 is; a request it cannot take is a usage
            // error.
            switch response.status {
            case 404:
                throw .failure(
                    message,
                    hint:
                        "`checkout-driver sandbox events` lists the events, `sandbox ledger` what moved money"
                )
            case 400: throw .usage(message, hint: "`checkout-driver sandbox trigger --help` says what it takes")
            default: throw .unavailable("the emulator at \(base) answered \(response.status): \(message)")
            }
        }
        return document
    }
}
