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
        options: [OptionSpec("var", value: "KEY=VALUE", help: "Set a flow variable.", repeatable: true)]
    ) { invocation throws(Diagnostic) in
        let registry = Operations.registry
        let flow = try resolve(invocation.argument("NAME|FILE")!, registry: registry)
        let vars = try invocation.variables("var")
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
        arguments: [ArgumentSpec("NAME|FILE", help: "A built-in flow or the path of a flow file.")]
    ) { invocation throws(Diagnostic) in
        let flow = try resolve(invocation.argument("NAME|FILE")!, registry: Operations.registry)
        Console.shared.out("\(flow.name): valid, \(flow.steps.count) steps, \(flow.finally.count) finally")
        return .ok
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

/// The provider operations flows can `use`. Provider folders add theirs here.
enum Operations {
    static let registry: OperationRegistry = {
        var registry = OperationRegistry(BahnOperations.all)
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
