import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver flow run | list | validate`.
enum FlowCommands {
    static var spec: CommandSpec {
        CommandSpec(name: "flow", abstract: "Run, list and check flows.", subcommands: [run, list, validate])
    }

    static let run = CommandSpec(
        name: "run", abstract: "Run a built-in flow by name, or a flow file.",
        discussion: "A flow file is JSON: {\"name\", \"description\", \"vars\", \"steps\": [...], \"finally\": [...]}. See README \"Flow files\".",
        arguments: [ArgumentSpec("NAME|FILE", help: "A built-in flow (see 'flow list') or the path of a flow file.")],
        options: variableOptions
    ) { invocation throws(Diagnostic) in
        let registry = Operations.registry
        let flow = try resolve(invocation.argument("NAME|FILE")!, registry: registry)
        let vars = try variables(invocation, for: flow)
        let environment = try RunEnvironment.prepare(invocation)
        defer { environment.shutdown() }
        let result = try await environment.run(flow, vars: vars, registry: registry)
        if let failure = result.failure { throw failure }
        return .ok
    }

    static let list = CommandSpec(name: "list", abstract: "List the built-in flows.") { invocation throws(Diagnostic) in
        let settings = try GlobalSettings(invocation)
        if settings.format == .text {
            let width = BuiltinFlows.all.map(\.name.count).max() ?? 0
            for entry in BuiltinFlows.all {
                Console.shared.out(entry.name.padding(toLength: width + 2, withPad: " ", startingAt: 0) + entry.description)
            }
        } else {
            let items = JSON.array(BuiltinFlows.all.map { ["name": .string($0.name), "description": .string($0.description)] })
            Console.shared.out(settings.format == .json ? JSON.object(["flows": items]).serialized(pretty: true)
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
        arguments: [ArgumentSpec("NAME|FILE", help: "A built-in flow or the path of a flow file.")],
        options: variableOptions
    ) { invocation throws(Diagnostic) in
        let registry = Operations.registry
        let flow = try resolve(invocation.argument("NAME|FILE")!, registry: registry)
        let vars = try variables(invocation, for: flow)
        let environment = try RunEnvironment.prepare(invocation, startingEmulator: false)
        defer { environment.shutdown() }
        try environment.makeRunner(registry: registry, reporters: Reporters(all: []), services: RunServices()).preflight(flow, vars: vars)
        let steps = "\(flow.steps.count) step\(flow.steps.count == 1 ? "" : "s")"
        if environment.settings.format == .text {
            Console.shared.out("\(flow.name): valid, \(steps), \(flow.finally.count) finally (environment \(environment.configuration.environment))")
        } else {
            Console.shared.out(JSON.object(["flow": .string(flow.name), "valid": true, "steps": .number(Double(flow.steps.count)),
                                            "finally": .number(Double(flow.finally.count)),
                                            "environment": .string(environment.configuration.environment)]).serialized(pretty: environment.settings.format == .json))
        }
        return .ok
    }

    static let variableOptions = [
        OptionSpec("var", value: "KEY=VALUE", help: "Set a flow variable (a number or true/false keeps its type).", repeatable: true),
        OptionSpec("vars-file", value: "FILE", help: "Set flow variables from a JSON object; --var wins over it."),
    ]

    /// `--vars-file` then `--var`; a name the flow neither declares nor uses is a mistake (a misspelt `--var amout=5100`
    /// would otherwise run a test with the default amount), refused with the closest name.
    static func variables(_ invocation: Invocation, for flow: Flow) throws(Diagnostic) -> [String: JSON] {
        let used = flow.variableNames
        var vars: [String: JSON] = [:]
        if let path = invocation.string("vars-file") {
            let data: Data
            switch FileIO.read(path) {
            case .success(let bytes): data = bytes
            case .failure(let error): throw .data("cannot read --vars-file \(path): \(error.reason)", hint: "check the path")
            }
            guard case .object(let object)? = try? JSON.parse(data) else {
                throw .data("--vars-file \(path): expected a JSON object of variables, e.g. {\"amount\": 5100}",
                            hint: "one JSON object: names to values")
            }
            for (name, value) in object.sorted(by: { $0.key < $1.key }) {
                guard used.contains(name) else {
                    throw .data("--vars-file \(path): $.\(name): flow \(flow.name) has no variable '\(name)'\(suggestion(name, used))",
                                hint: "its variables: \(used.sorted().joined(separator: ", "))")
                }
                vars[name] = value
            }
        }
        for (name, value) in try invocation.variables("var").sorted(by: { $0.key < $1.key }) {
            guard used.contains(name) else {
                throw .usage("--var \(name): flow \(flow.name) has no variable '\(name)'\(suggestion(name, used))",
                             hint: used.isEmpty ? "the flow takes no variables" : "its variables: \(used.sorted().joined(separator: ", "))")
            }
            vars[name] = value
        }
        return vars
    }

    private static func suggestion(_ name: String, _ names: Set<String>) -> String {
        Suggest.closest(to: name, in: names.sorted()).map { "; did you mean '\($0)'?" } ?? ""
    }

    /// A name of a built-in flow, or the path of a flow file (anything containing '/' or ending in .json).
    static func resolve(_ nameOrPath: String, registry: OperationRegistry) throws(Diagnostic) -> Flow {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".json") || FileManager.default.fileExists(atPath: nameOrPath) {
            return try FlowFile.load(path: nameOrPath, registry: registry)
        }
        guard let entry = BuiltinFlows.named(nameOrPath) else {
            let names = BuiltinFlows.all.map(\.name)
            let suggestion = Suggest.closest(to: nameOrPath, in: names).map { "; did you mean '\($0)'?" } ?? ""
            throw .usage("no built-in flow named '\(nameOrPath)'\(suggestion)",
                         hint: "built-in flows: \(names.joined(separator: ", ")); or give the path of a flow file")
        }
        return try BuiltinFlows.load(entry, registry: registry)
    }
}

/// The provider operations flows can `use`: every provider's (`Providers.all`), and the test-token maker.
enum Operations {
    static let registry: OperationRegistry = {
        var registry = OperationRegistry(Providers.all.flatMap(\.operations))
        if let tokens = try? ApplePayTestTokens.makeTokenOperation() { registry.register(tokens) }
        return registry
    }()
}

/// Test tokens are made with the emulator's published test PKI; the Kit never sees the emulator itself.
enum ApplePayTestTokens {
    static func signer() throws(Diagnostic) -> PaymentTokenSigner {
        try PaymentTokenSigner(leafPEM: TestCredentials.applePayLeafCertificatePEM,
                               leafKeyPEM: TestCredentials.applePayLeafPrivateKeyPEM,
                               intermediatePEMs: [TestCredentials.applePayIntermediateCertificatePEM])
    }

    static func makeTokenOperation() throws(Diagnostic) -> FlowOperation {
        let recipient = try PaymentTokenMaker.recipientKey(pem: TestCredentials.paymentProcessingPublicKeyPEM,
                                                           source: "the emulator's payment processing key")
        return ApplePayOperations.makeToken(signer: try signer(), recipient: recipient,
                                            merchantIdentifier: TestCredentials.merchantIdentifier)
    }
}
