import CheckoutKit
import Foundation
import LoopbackHTTP
import WireTypes

/// `checkout-driver monitor FLOW… --every DURATION [--listen HOST:PORT]`: flows on a schedule, as a smoke monitor of
/// sandbox endpoints, their figures served to Prometheus (docs/metrics.md, "`monitor`").
enum MonitorCommands {
    static let spec = CommandSpec(
        name: "monitor", abstract: "Run flows on a schedule as a smoke monitor, serving Prometheus metrics.",
        discussion: """
            Each flow runs at once, then every --every: a run never overlaps its flow's last (when one takes longer
            than --every, the next starts when it ends). GET /metrics serves the figures of every run so far in
            Prometheus' text format (docs/metrics.md), GET /healthz answers 200 while the monitor runs. A line a run
            on stdout. A failed run is counted and its schedule goes on; a run that leaves a money outcome open
            stops its flow's schedule (every later payment would be refused until it is settled): the settle
            commands are printed and checkout_driver_schedule_stopped says so. Ctrl-C or SIGTERM stops the
            monitor: runs in flight stop at their current step, their finally steps run. Exit 0 when stopped so, 75
            when an open outcome stopped a schedule (settle it), 64 for a bad command line, 69 when --listen's
            port cannot be bound.
            """,
        input: MonitorInput.self
    ) { input, invocation throws(Diagnostic) in
        let registry = Operations.registry
        let flows = try FlowSuite.flows(input.flows, registry: registry)
        guard let every = input.every, (1...86_400).contains(every) else {
            throw .usage(
                "monitor needs --every DURATION from a second to a day\(input.every.map { ", got \($0) s" } ?? "")",
                hint: "e.g. --every 5m: each flow runs at once, then every five minutes")
        }
        let listen = input.listen ?? defaultListen
        let (host, port) = try listenAddress(listen)
        let members = try FlowCommands.suiteVariables(input.variables, for: flows).map {
            FlowSuite.Member(flow: $0.0, vars: $0.1.values, origins: $0.1.origins)
        }
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        let metrics = Collector(Metrics())
        let server: HTTPServer
        do {
            server = try HTTPServer(host: host, port: port) { request in
                switch (request.method, request.path) {
                case ("GET", "/metrics"):
                    return .respond(
                        HTTPResponse(
                            status: 200, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
                            body: Data(environment.redactor.text(metrics.current.text).utf8)))
                case ("GET", "/healthz"): return .respond(.text(200, "ok\n"))
                default: return .respond(.text(404, "not found: GET /metrics or /healthz\n"))
                }
            }
        } catch {
            throw .unavailable(
                "cannot listen on \(listen): \(error)",
                hint: "pick another --listen, e.g. 127.0.0.1:0 for any free port")
        }
        server.start()
        defer { server.shutdown() }
        let console = environment.console
        console.out(
            "monitor: \(flows.map(\.name).joined(separator: ", ")) every \(Format.milliseconds(every)); metrics at \(server.baseURL)/metrics"
        )
        let interruption = environment.session.makeInterruption(stopping: "the runs in flight")
        defer { interruption.stop() }
        let openOutcome = Collector(false)
        await withTaskGroup(of: Void.self) { group in
            for (index, member) in members.enumerated() {
                group.addTask {
                    var run = 0
                    while interruption.caught == nil {
                        run += 1
                        let began = ContinuousClock.now
                        let outcome = await once(
                            member, run: "\(index).\(run)", environment: environment, interruption: interruption)
                        let ended = Date().timeIntervalSince1970
                        let flow = member.flow.name
                        metrics.mutate {
                            $0.add(outcome)
                            $0.lastRun[flow] = ended
                            if outcome.verdict == .passed { $0.lastSuccess[flow] = ended }
                            $0.stopped[flow] = outcome.leftMoneyOpen
                        }
                        report(outcome, console: console, redactor: environment.redactor)
                        if outcome.leftMoneyOpen {
                            openOutcome.mutate { $0 = true }
                            console.err(
                                "monitor: \(flow)'s schedule stopped: its run left a money outcome open, and every later payment would be refused until it is settled; settle it as said above, then start the monitor again"
                            )
                            return
                        }
                        // The next run --every after this one began, or at once; a signal ends the wait.
                        let next = began + .milliseconds(Int(every * 1000))
                        while interruption.caught == nil && ContinuousClock.now < next {
                            try? await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
        }
        if let signal = interruption.caught { console.err("monitor: stopped (\(Interruption.name(signal)))") }
        return openOutcome.current ? .outcomeUnknown : .ok
    }

    /// One run of a flow in a state scope of its own, its secrets forgotten once its line is printed.
    static func once(
        _ member: FlowSuite.Member, run: String, environment: RunEnvironment, interruption: Interruption
    ) async -> FlowSuite.Outcome {
        let tally = RunTally()
        let begun = Date()
        // The member's place and the run's number: two members may run the same flow.
        let secrets = "monitor \(run)"
        var result: FlowResult = await Redactor.$run.withValue(secrets) {
            do throws(Diagnostic) {
                return try await environment.session.run(
                    member.flow, vars: member.vars, origins: member.origins, registry: Operations.registry,
                    reporters: Reporters(all: [tally]), interruption: interruption, separate: true)
            } catch {
                return FlowResult(
                    name: member.flow.name, environment: environment.configuration.environment, startedAt: begun,
                    duration: Date().timeIntervalSince(begun), steps: [], failure: error, captures: [:])
            }
        }
        result.forgetAnswers()
        result.maskMessages(environment.redactor)
        environment.redactor.forget(run: secrets)
        var outcome = FlowSuite.Outcome(result: result, retries: tally.retries)
        outcome.statuses = tally.statuses
        return outcome
    }

    /// `2026-12-07T07:20:00.000Z bahn-apple-pay passed in 18 ms`, and a run that did not pass, its error and hint.
    static func report(_ outcome: FlowSuite.Outcome, console: Console, redactor: Redactor) {
        let r = outcome.result
        console.out(
            "\(Timestamp.iso8601(r.startedAt)) \(r.name) \(outcome.verdict.rawValue) in \(Format.milliseconds(r.duration))"
        )
        if let failure = r.failure {
            console.err("\(r.name): " + redactor.text(failure.message))
            if let hint = failure.hint { console.err("  hint: " + redactor.text(hint)) }
        }
    }

    /// Prometheus' exporters default to ports from 9100 up; 9464 is the one OpenTelemetry's Prometheus exporter uses.
    static let defaultListen = "127.0.0.1:9464"

    /// `HOST:PORT` (an IPv4 address, or localhost; port 0 for any free one).
    static func listenAddress(_ text: String) throws(Diagnostic) -> (String, UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]),
            colon != text.startIndex
        else {
            throw .usage(
                "--listen expects HOST:PORT, got '\(text)'",
                hint: "e.g. --listen 127.0.0.1:9464, or 0.0.0.0:9464 for every interface")
        }
        return (String(text[..<colon]), port)
    }

    struct MonitorInput: FlowCommands.FlowVariablesInput {
        var flows: [String] = []
        var variables = FlowCommands.VariableOptions()
        var every: Double?
        var listen: String?

        static let inputs: [Input<MonitorInput>] =
            [
                .arguments(
                    "FLOW", \.flows, help: "Built-in flows, flow files, directories of them or quoted globs.",
                    optional: false)
            ] + FlowCommands.variableInputs()
            + [
                .seconds("every", \.every, value: "DURATION", help: "How often each flow runs (5m, 30s, 1h)."),
                .value(
                    "listen", \.listen, value: "HOST:PORT",
                    help: "Where /metrics and /healthz are served (port 0: any free one).", default: defaultListen),
            ]
    }
}
