import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver flow run | replay | list | validate | junit-merge`; `show`, `describe`, `ops` and `schema` are in
/// FlowCommands+Authoring.swift.
enum FlowCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "flow", abstract: "Run, list, explore and check flows.",
            subcommands: [run, replay, list, show, describe, ops, schema, validate, junitMerge])
    }

    static let run = CommandSpec(
        name: "run", abstract: "Run built-in flows by name, flow files, or the flow files of a directory.",
        discussion: """
            A flow file is JSON: {"name", "description", "vars", "steps": [...], "finally": [...]}. See docs/flow-files.md.
            Several flows (names, files, directories, quoted globs such as 'smoke/*.json', or --all) run one after
            another as a suite: one summary table, one --junit file with a testsuite per flow, one --format json
            document, and with --record DIR/ a HAR file per flow. Exit 0 when every flow passed, 75 when any outcome
            is unknown, else 1 when any failed.
            """,
        input: RunInput.self
    ) { input, invocation throws(Diagnostic) in
        let registry = Operations.registry
        let words = input.flows
        if input.all && !words.isEmpty {
            throw invocation.usage("--all runs every built-in flow; give flows or --all, not both")
        }
        guard input.all || !words.isEmpty else {
            throw invocation.usage("missing argument FLOW: give a built-in flow, a flow file or a directory, or --all")
        }
        let settings = try GlobalSettings(invocation)
        var flows: [Flow]
        if input.all {
            // Whether the run is local is known once the configuration is: the emulator's flows all run unattended.
            let local =
                try ConfigurationLoader().load(
                    environmentFlag: settings.config.environment, configPath: settings.config.configPath,
                    envFile: settings.config.envFile, flagValues: settings.config.configurationFlags
                ) { _ in LocalEnvironment.values(baseURL: "http://127.0.0.1:0") }.kind == .local
            let entries = BuiltinFlows.unattended(local: local)
            let skipped = BuiltinFlows.all.filter { entry in !entries.contains { $0.name == entry.name } }.map(\.name)
            if !skipped.isEmpty {
                Console.shared.err(
                    "note: --all leaves out the flows a person must act in outside --env local: \(skipped.joined(separator: ", "))"
                )
            }
            flows = try entries.map { (entry) throws(Diagnostic) in try BuiltinFlows.load(entry, registry: registry) }
        } else {
            flows = try FlowSuite.flows(words, registry: registry)
        }
        warn(flows, settings)
        let repeatCount = input.repeatCount ?? 1
        let parallel = input.parallel ?? 1
        let shard = try input.shard.map { (text) throws(Diagnostic) in
            try FlowSuite.Shard.parse(text, environment: ProcessInfo.processInfo.environment)
        }
        // Refused whatever the number of runs: --parallel says they may overlap, and one checkout cannot be two runs'.
        if parallel > 1 && (settings.state.continueChain || settings.state.runScope != nil) {
            throw invocation.usage(
                "--\(settings.state.continueChain ? "continue" : "run") makes every run work on one checkout, and --parallel runs them at once: drop one of the two"
            )
        }
        // One flow runs on its own, its error printed as any command's; in GitHub Actions, with --data or --metrics it
        // runs as a suite of one, so that it has its group, annotation and job summary, its rows, its metrics file.
        if let data = input.data, flows.count != 1 {
            throw .usage(
                "--data \(data) runs one flow once per row, and \(input.all ? "--all names" : "the command names") \(flows.count) flows",
                hint: "give one flow with --data")
        }
        let single =
            flows.count == 1 && !settings.output.recordsDirectory && repeatCount == 1 && parallel == 1 && shard == nil
            && input.data == nil
        if single && !settings.output.github && settings.output.metricsPath == nil {
            let given = try variables(input.variables, for: flows[0])
            let environment = try RunEnvironment.prepare(invocation)
            defer { environment.shutdown() }
            let result = try await environment.session.run(
                flows[0], vars: given.values, origins: given.origins, registry: registry)
            if let failure = result.failure { throw failure }
            return .ok
        }
        var members = try suiteVariables(input.variables, for: flows).map {
            FlowSuite.Member(flow: $0.0, vars: $0.1.values, origins: $0.1.origins)
        }
        if let data = input.data {
            members = try dataMembers(data, for: members[0])
        }
        let runCount = members.count * repeatCount
        if let record = settings.output.recordPath, !settings.output.recordsDirectory, runCount > 1 {
            throw invocation.usage(
                "--record \(record) names one file, and \(runCount) runs would each need their own: name a directory with a trailing slash, e.g. --record runs/, for a HAR file per run"
            )
        }
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        if input.data != nil {
            // Every row is checked as its run will check it before anything is sent for any of them: a bad cell stops
            // the batch whole, naming its row and column.
            let runner = environment.session.makeRunner(
                registry: registry, reporters: Reporters(all: []), services: RunServices())
            for member in members { try runner.preflight(member.flow, vars: member.vars, origins: member.origins) }
        }
        return try await FlowSuite(
            members: members, failFast: input.failFast, repeatCount: repeatCount, parallel: parallel,
            shard: shard, singleRun: single
        ).run(in: environment, registry: registry)
    }

    /// `flow run`: flows by name, file, directory or glob, or --all; how many times, how many at once, which shard.
    struct RunInput: FlowVariablesInput {
        var flows: [String] = []
        var variables = VariableOptions()
        var all = false
        var failFast = false
        var repeatCount: Int?
        var parallel: Int?
        /// `--shard i/n|auto|auto/N` as typed: `FlowSuite.Shard.parse` reads it once the flows are known.
        var shard: String?
        /// `--data FILE`: the flow once per row.
        var data: String?

        static let inputs: [Input<RunInput>] =
            [
                .arguments(
                    "FLOW", \.flows,
                    help: "A built-in flow (see 'flow list'), a flow file, a directory of them, or a quoted glob.")
            ] + variableInputs()
            + [
                .flag(
                    "all", \.all, help: "Run every built-in flow that needs no person (under --env local, all of them)."
                ),
                .flag("fail-fast", \.failFast, help: "Stop the suite at the first flow that does not pass."),
                .integer(
                    "repeat", \.repeatCount, range: 1...1_000_000,
                    help: "Run each flow N times (a batch: a progress line, then the summary)."),
                .integer(
                    "parallel", \.parallel, value: "P", range: 1...256,
                    help: "Run P flows at a time, each with its own state, connections and listeners [default: 1]."),
                .value(
                    "data", \.data, value: "FILE",
                    help:
                        "Run the flow once per row of a CSV (a header row), JSON Lines or JSON file, the row's values as its variables."
                ),
                .value(
                    "shard", \.shard, value: "i/n|auto|auto/N",
                    help:
                        "Run only shard i of n of the runs; auto reads the CI's own variables (GitLab, CircleCI, Buildkite), auto/N a Kubernetes Indexed Job's of N."
                ),
            ]
    }

    static let replay = CommandSpec(
        name: "replay", abstract: "Run a recorded flow again, offline, against its recording.",
        discussion: """
            Runs the flow a --record HAR file names (or --flow) with the variables it recorded (--var wins), with a
            transport that answers each request from the recording and opens no socket. Requests must come in the
            recorded order and match by method, path, GraphQL operationName and body; secrets and volatile parts (ids,
            timestamps, signatures, loopback ports) match any value of their shape (docs/qa-ci.md, "Record and replay").
            The first divergence is shown path by path and exits 1; exit 0 when every request matched and every step
            ended as recorded.
            """,
        input: ReplayInput.self
    ) { input, invocation throws(Diagnostic) in
        let registry = Operations.registry
        let path = input.recording!
        let recording = try Recording.read(path: path)
        let flow: Flow
        if let other = input.flow {
            flow = try resolve(other, registry: registry)
        } else if let definition = recording.definition {
            flow = try FlowFile.decode(definition.data, source: "\(path): log._run.definition", registry: registry)
        } else {
            throw .data(
                "\(path) names flow '\(recording.flow)' but keeps no definition of it",
                hint: "name the flow to replay: --flow NAME|FILE")
        }
        // The recorded variables the flow still uses, then --vars-file and --var.
        var given = Given(values: recording.vars.filter { flow.variableNames.contains($0.key) }, origins: [:])
        for name in given.values.keys { given.origins[name] = .recording(path) }
        let overrides = try variables(input.variables, for: flow)
        given.values.merge(overrides.values) { _, new in new }
        given.origins.merge(overrides.origins) { _, new in new }
        let environment = try RunEnvironment.prepareReplay(invocation, recording: recording, source: path)
        defer { environment.shutdown() }
        // A recorded variable the flow no longer has is said, with what took its place when the flow says.
        for (name, value) in recording.vars.sorted(by: { $0.key < $1.key }) where !flow.variableNames.contains(name) {
            let change = flow.retiredVariables[name].map { ": \($0)" } ?? ", so it is left out"
            environment.console.err(
                "note: the recording's variable \(name)=\(value.interpolationText) is not a variable of \(flow.name) any more\(change)"
            )
        }
        let result = try await environment.session.run(
            flow, vars: given.values, origins: given.origins, registry: registry)
        let transport = environment.replay!.transport
        let console = Console.shared
        if let divergence = transport.verdict() ?? ReplayVerdict.stepDivergence(result, recording: recording) {
            let place = divergence.request.map { "request \($0) of \(recording.exchanges.count)" } ?? "the steps"
            let by = divergence.sentBy.map { ", sent by \($0)" } ?? divergence.step.map { ", in step '\($0)'" } ?? ""
            console.err("replay: diverged at \(place)\(by): \(divergence.headline)")
            for line in divergence.lines { console.err("  " + line) }
            // A step that stopped before the requests it made when recorded says why.
            if divergence.kind == .missing, let failed = result.steps.first(where: { $0.outcome == .failed }),
                let message = failed.message
            {
                console.err("  step '\(failed.name)' failed: \(message)")
            }
            throw .failure(
                "the replay diverged from \(path)\(divergence.request.map { " at request \($0)" } ?? "")\(by)",
                hint: "the lines above show where, path by path, as the recording shows them (secrets masked)")
        }
        if environment.settings.output.format == .text && !environment.settings.output.quiet {
            let requests =
                transport.matched == 1 ? "the one recorded request" : "all \(transport.matched) recorded requests"
            let failed = result.steps.first { $0.outcome == .failed && !$0.optional }
            console.out(
                "replay: matched \(requests), and every step ended as recorded"
                    + (failed.map { " (the recorded run failed at step '\($0.name)', and so did this one)" } ?? ""))
        }
        return .ok
    }

    /// `flow replay`: the recording, and the flow and variables that stand in for the recorded ones.
    struct ReplayInput: FlowVariablesInput {
        /// The `FILE.har` argument, which the parser requires.
        var recording: String?
        var flow: String?
        var variables = VariableOptions()

        static let inputs: [Input<ReplayInput>] =
            [
                .argument("FILE.har", \.recording, help: "A HAR file that --record wrote."),
                .value(
                    "flow", \.flow, value: "NAME|FILE",
                    help: "Run this flow against the recording instead of the recorded one."),
            ] + variableInputs()
    }

    static let list = CommandSpec(name: "list", abstract: "List the built-in flows.") { invocation throws(Diagnostic) in
        let settings = try GlobalSettings(invocation)
        if settings.output.format == .text {
            let width = BuiltinFlows.all.map(\.name.count).max() ?? 0
            for entry in BuiltinFlows.all {
                Console.shared.out(
                    entry.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + entry.description)
            }
        } else {
            let items = JSON.array(
                BuiltinFlows.all.map { ["name": .string($0.name), "description": .string($0.description)] })
            Console.shared.out(
                settings.output.format == .json
                    ? JSON.object(["flows": items]).serialized(pretty: true)
                    : items.arrayValue!.map { $0.serialized() }.joined(separator: "\n"))
        }
        return .ok
    }

    static let validate = CommandSpec(
        name: "validate", abstract: "Check a flow file without sending anything.",
        discussion: """
            Runs every check that 'flow run' makes before its first request, against the same environment (--env) and
            variables (--var, --vars-file): the file's shape, unknown or cyclic variables, references to later steps,
            missing configuration, the state file, header values, a bodyFile that cannot be read.
            """,
        input: ValidateInput.self
    ) { input, invocation throws(Diagnostic) in
        let registry = Operations.registry
        let flow = try resolve(input.flow!, registry: registry)
        let given = try variables(input.variables, for: flow)
        warn([flow], try GlobalSettings(invocation))
        let environment = try RunEnvironment.prepare(invocation, startingEmulator: false)
        defer { environment.shutdown() }
        try environment.session.makeRunner(registry: registry, reporters: Reporters(all: []), services: RunServices())
            .preflight(flow, vars: given.values, origins: given.origins)
        if environment.settings.output.format == .text {
            let steps = Flow.countText(steps: flow.steps.count, finally: flow.finally.count)
            Console.shared.out("\(flow.name): valid, \(steps) (environment \(environment.configuration.environment))")
        } else {
            Console.shared.out(
                JSON.object([
                    "flow": .string(flow.name), "valid": true, "steps": .number(Double(flow.steps.count)),
                    "finally": .number(Double(flow.finally.count)),
                    "environment": .string(environment.configuration.environment),
                ]).serialized(pretty: environment.settings.output.format == .json))
        }
        return .ok
    }

    /// `flow validate`: the flow, and the variables it would run with.
    struct ValidateInput: FlowVariablesInput {
        /// The `NAME|FILE` argument, which the parser requires.
        var flow: String?
        var variables = VariableOptions()

        static let inputs: [Input<ValidateInput>] =
            [.argument("NAME|FILE", \.flow, help: "A built-in flow or the path of a flow file.")] + variableInputs()
    }

    static let junitMerge = CommandSpec(
        name: "junit-merge", abstract: "Merge JUnit reports (a CI job's shards) into one.",
        discussion:
            "Every <testsuite> of every input, in the order given, under one <testsuites> with the summed totals.",
        input: JUnitMergeInput.self
    ) { input, invocation throws(Diagnostic) in
        let out = input.output!
        if input.reports.contains(where: { FileIO.samePath($0, out) }) {
            throw .usage(
                "\(out) is both the merged report and one of the reports to merge",
                hint: "write the merged report elsewhere, e.g. junit.xml beside the shards' directory")
        }
        var inputs: [(file: String, text: String)] = []
        for file in input.reports {
            switch FileIO.read(file) {
            case .success(let bytes): inputs.append((file, String(decoding: bytes, as: UTF8.self)))
            case .failure(let error):
                throw .data("cannot read \(file): \(error.reason)", hint: "check the path of each shard's report")
            }
        }
        try FileIO.checkWritable(out, option: "OUT.xml")
        try ReportFile.write(try JUnitMerge.merge(inputs), to: out, what: "merged JUnit report")
        return .ok
    }

    /// `flow junit-merge`: the report to write and the reports to merge.
    struct JUnitMergeInput: CommandInput {
        /// The `OUT.xml` argument, which the parser requires.
        var output: String?
        var reports: [String] = []

        static let inputs: [Input<JUnitMergeInput>] = [
            .argument("OUT.xml", \.output, help: "The merged report to write."),
            // One report at least: the parser says "missing argument IN.xml", and help shows `IN.xml...`.
            .arguments("IN.xml", \.reports, help: "The reports to merge (each shard's --junit file).", optional: false),
        ]
    }

    /// What reading the flows found worth a word (`Flow.warnings`), on stderr unless -q.
    static func warn(_ flows: [Flow], _ settings: GlobalSettings) {
        guard !settings.output.quiet else { return }
        for flow in flows {
            for warning in flow.warnings {
                Console.shared.err("warning: \(flow.source.isEmpty ? flow.name : flow.source): \(warning)")
            }
        }
    }

    /// A name of a built-in flow, or the path of a flow file (anything containing '/' or ending in .json).
    static func resolve(_ nameOrPath: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json")
            || FileManager.default.fileExists(atPath: nameOrPath)
        {
            return try FlowFile.load(path: nameOrPath, registry: registry)
        }
        return try BuiltinFlows.load(try builtin(nameOrPath), registry: registry)
    }
}

/// The provider operations flows can `use`: every provider's (`Providers.all`), and the test-token maker.
enum Operations {
    static let registry: OperationRegistry = {
        var registry = OperationRegistry(Providers.all.flatMap(\.operations))
        registry.register(ApplePayTestTokens.makeTokenOperation())
        return registry
    }()
}

/// Test tokens are made with the emulator's published test PKI; the Kit never sees the emulator itself.
enum ApplePayTestTokens {
    static func signer() throws(Diagnostic) -> PaymentTokenSigner {
        try PaymentTokenSigner(
            leafPEM: TestCredentials.applePayLeafCertificatePEM,
            leafKeyPEM: TestCredentials.applePayLeafPrivateKeyPEM,
            intermediatePEMs: [TestCredentials.applePayIntermediateCertificatePEM])
    }

    /// The keys a flow's tokens are made with, parsed at the first token the process makes: a third of a one-step
    /// run's instructions went to parsing them at every start, for runs that make no token.
    static let flowKeys = Result { () throws(Diagnostic) -> ApplePayOperations.TokenKeys in
        let recipient = try PaymentTokenMaker.recipientKey(
            pem: TestCredentials.paymentProcessingPublicKeyPEM,
            source: "the emulator's payment processing key")
        return (try signer(), recipient)
    }

    static func makeTokenOperation() -> FlowOperation {
        ApplePayOperations.makeToken(
            keys: { () throws(Diagnostic) in try flowKeys.get() },
            merchantIdentifier: TestCredentials.merchantIdentifier)
    }
}
