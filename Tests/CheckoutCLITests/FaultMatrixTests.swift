import CheckoutKit
import Foundation
import SandboxEmulator
import Synchronization
import TestSupport
import Testing

/// Every money call of every provider under every fault `sandbox serve --faults` injects, on its first attempt, on
/// every attempt, and on every attempt with the read-back down: what the command reports must agree with the
/// emulator's ledger, the settle command it prints must never move money a second time, no secret may reach its
/// output, and the state file stays whole. Prints its size and tally; any bad case fails the suite.
@Suite struct FaultMatrixTests {
    /// One money call, as a command reaches it.
    struct MoneyCall: Sendable {
        var name: String
        var provider: String
        /// The ledger kind the call moves; nil when the emulator records nothing for it (the Button's card).
        var kind: String?
        /// Commands run first, without faults on the call (they build the chain the call continues).
        var setup: [[String]] = []
        /// The command that makes the call; `FLOW` stands for the flow file below.
        var command: [String]
        var flow: String?
        /// The call's route and which request on it the call is (GraphQL shares one route).
        var route: String
        var index: Int = 1
        /// The read-back's route, when it is not the call's own (REST providers).
        var readRoute: String?
    }

    typealias Mode = MoneyFaults.Mode
    static let faults = MoneyFaults.faults

    static let bahnManual = #"""
        {"name": "bahn-manual", "vars": {"order_id": "${uuid}"}, "steps": [
          {"name": "make-token", "use": "applepay.makeToken", "with": {"amount": 8000, "currency": "704"}, "capture": {"token_file": "path"}},
          {"name": "create", "use": "bahn.createIntent", "with": {"amount": 8000, "currency": "704", "orderId": "${vars.order_id}"}, "capture": {"intent": "payment_intent.id"}},
          {"name": "confirm", "use": "bahn.confirm", "with": {"intent": "${vars.intent}", "tokenFile": "${vars.token_file}", "captureMethod": "manual"}},
          {"name": "ACTION", "use": "bahn.ACTION", "with": {"intent": "${vars.intent}"}}]}
        """#

    static let braintreeVoid = #"""
        {"name": "braintree-void", "steps": [
          {"name": "make-token", "use": "applepay.makeToken", "with": {"amount": 1000, "currency": "USD"}, "capture": {"token_file": "path"}},
          {"name": "config", "use": "braintree.config", "with": {"currency": "USD", "network": "Visa"}},
          {"name": "tokenize", "use": "braintree.tokenize", "with": {"tokenFile": "${vars.token_file}", "clientApiUrl": "${steps.config.summary.clientApiUrl}", "paymentNetwork": "Visa"}},
          {"name": "authorize", "use": "braintree.authorize", "with": {"nonce": "${steps.tokenize.nonce}", "amount": "10.00"}},
          {"name": "void", "use": "braintree.void", "with": {"transaction": "${steps.authorize.transaction.id}"}}]}
        """#

    static let nonce = ["--nonce", "fake-apple-pay-visa-nonce", "--amount", "10.00"]
    static let intentRead = "GET /api/payment_intents/*"
    static let paymentRead = "GET /afterpay/v2/payments/**"

    static let calls: [MoneyCall] = [
        MoneyCall(
            name: "bahn confirm", provider: "bahn", kind: "capture", command: ["flow", "run", "bahn-apple-pay"],
            route: "POST /api/payment_intents/*/confirm", readRoute: intentRead),
        MoneyCall(
            name: "bahn capture", provider: "bahn", kind: "capture", command: ["flow", "run", "FLOW"],
            flow: bahnManual.replacingOccurrences(of: "ACTION", with: "capture"),
            route: "POST /api/payment_intents/*/capture", readRoute: intentRead),
        MoneyCall(
            name: "bahn cancel", provider: "bahn", kind: "void", command: ["flow", "run", "FLOW"],
            flow: bahnManual.replacingOccurrences(of: "ACTION", with: "cancel"),
            route: "POST /api/payment_intents/*/cancel", readRoute: intentRead),
        MoneyCall(
            name: "centra paymentInstructions", provider: "centra", kind: "authorization",
            command: ["centra", "express", "--item", "1002-M"],
            route: "POST /centra/graphql", index: 8),
        MoneyCall(
            name: "centra paymentResult", provider: "centra", kind: "authorization",
            command: ["flow", "run", "centra-express-3ds-native"],
            route: "POST /centra/graphql", index: 9),
        MoneyCall(
            name: "cashapp customer request", provider: "afterpay", kind: "capture", command: ["cashapp", "pay"],
            route: "POST /cashapp/customer-request/v1/requests",
            readRoute: "GET /cashapp/customer-request/v1/requests/*"),
        MoneyCall(
            name: "afterpay capture", provider: "afterpay", kind: "capture", command: ["cashapp", "pay"],
            route: "POST /afterpay/v2/payments/capture", readRoute: paymentRead),
        MoneyCall(
            name: "afterpay auth", provider: "afterpay", kind: "authorization", command: ["cashapp", "pay", "--auth"],
            route: "POST /afterpay/v2/payments/auth", readRoute: paymentRead),
        MoneyCall(
            name: "afterpay deferred capture", provider: "afterpay", kind: "capture",
            setup: [["cashapp", "pay", "--auth"]],
            command: ["cashapp", "capture"], route: "POST /afterpay/v2/payments/*/capture", readRoute: paymentRead),
        MoneyCall(
            name: "afterpay button confirm", provider: "afterpay", kind: nil,
            command: ["cashapp", "pay", "--flow", "button"],
            route: "POST /afterpay-plus/v3/button/confirm"),
        MoneyCall(
            name: "braintree charge", provider: "braintree", kind: "capture",
            command: ["braintree", "apple-pay"] + nonce,
            route: "POST /braintree/graphql"),
        MoneyCall(
            name: "braintree authorize", provider: "braintree", kind: "authorization",
            command: ["braintree", "apple-pay", "--authorize-only"] + nonce, route: "POST /braintree/graphql"),
        MoneyCall(
            name: "braintree capture", provider: "braintree", kind: "capture",
            command: ["flow", "run", "braintree-apple-pay-auth-capture"],
            route: "POST /braintree/graphql", index: 2),
        MoneyCall(
            name: "braintree void", provider: "braintree", kind: "void", command: ["flow", "run", "FLOW"],
            flow: braintreeVoid,
            route: "POST /braintree/graphql", index: 2),
    ]

    /// The secrets the local environment runs with: none may appear in any output.
    static let secrets = [
        TestCredentials.bahnAPIKey, TestCredentials.afterpaySecretKey, TestCredentials.braintreePrivateKey,
        TestCredentials.bahnWebhookSecret, CentraRules.sharedSecret, CentraRules.pluginToken,
    ]

    /// What went wrong in one case, or nil.
    static func check(_ call: MoneyCall, fault: String?, mode: Mode) -> (label: String, exit: Int32, problem: String?) {
        let label = "\(call.name) × \(fault ?? "none") × \(mode.rawValue)"
        do {
            let s = try Scratch()
            defer { try? FileManager.default.removeItem(atPath: s.path) }
            var rules: [String] = []
            if let fault {
                let attempts = mode == .first ? "@\(call.index)" : "@\(call.index)-200"
                rules.append("\(call.route) => \(fault) \(attempts)")
                if mode == .everyReadDown, let read = call.readRoute { rules.append("\(read) => status=503 @*") }
            }
            // The setup runs on the same server: the faults name the call's route, which the setup does not use.
            let server = try ServeProcess(
                home: s.path, arguments: rules.isEmpty ? [] : ["--faults", rules.joined(separator: "; ")])
            defer { server.stop() }
            for step in call.setup { _ = try BinaryRunner.runBlocking(step, home: s.path) }
            var command = call.command
            if let flow = call.flow {
                try flow.write(toFile: s.path + "/flow.json", atomically: true, encoding: .utf8)
                command = command.map { $0 == "FLOW" ? s.path + "/flow.json" : $0 }
            }
            if fault?.hasPrefix("latency") == true { command = ["--timeout", "1"] + command }
            let r = try BinaryRunner.runBlocking(command, home: s.path, timeout: 90)
            func moved() throws -> Int {
                guard let kind = call.kind else { return 0 }
                return try OpenOutcomeTests.ledger(server, call.provider).filter { $0["kind"] as? String == kind }.count
            }
            var outputs = [r.all]
            let before = try moved()
            var problem: String?
            switch r.status {
            case 0 where call.kind != nil && before != 1:
                problem = "exit 0 but the ledger holds \(before) \(call.kind!)"
            case 1 where before != 0, 69 where before != 0:
                problem = "exit \(r.status) but the ledger holds \(before) \(call.kind ?? "")"
            case 0, 1, 69: if fault == nil && r.status != 0 { problem = "the clean run failed" }
            case 75:
                if before > 1 { problem = "exit 75 with \(before) movements" }
                if let words = try? OpenOutcomeTests.settleCommand(r.stderr) {
                    let settle = words.map { $0 == "NEW_FILE" ? s.path + "/card.json" : $0 }
                    let settled = try BinaryRunner.runBlocking(settle, home: s.path, timeout: 90)
                    outputs.append(settled.all)
                    let after = try moved()
                    if after > 1 {
                        problem = "the settle command \(settle.joined(separator: " ")) left \(after) movements"
                    }
                    if ![0, 1, 69, 75].contains(settled.status) {
                        problem = "the settle command exited \(settled.status): \(settled.all)"
                    }
                } else if !r.stderr.contains("refused before sending") {
                    problem = "exit 75 without a settle command"
                }
            default: problem = "exit \(r.status)"
            }
            for secret in secrets where outputs.contains(where: { $0.contains(secret) }) {
                problem = "a secret in the output"
            }
            let statePath = s.path + "/state/checkout-driver/local/state.json"
            if FileManager.default.fileExists(atPath: statePath) {
                let attributes = try FileManager.default.attributesOfItem(atPath: statePath)
                if (attributes[.posixPermissions] as? Int) != 0o600 { problem = "the state file is not 0600" }
                let data = try Data(contentsOf: URL(fileURLWithPath: statePath))
                if (try? JSONSerialization.jsonObject(with: data)) == nil { problem = "the state file does not parse" }
            }
            return (label, r.status, problem.map { "\($0)\n\(r.all)" })
        } catch {
            return (label, -1, "the case could not run: \(error)")
        }
    }

    /// A provider left out of the matrix would have its money calls untried: each provider's command group has its
    /// calls here (by their names, which start with the provider's, or the API's it pays through: Cash App's Afterpay).
    @Test func everyProviderHasItsMoneyCallsHere() {
        for provider in Providers.all {
            #expect(Self.calls.contains { $0.name.hasPrefix(provider.name + " ") }, "\(provider.name)")
        }
    }

    @Test func everyFaultOnEveryMoneyCallIsToldTruthfully() throws {
        var cases: [(MoneyCall, String?, Mode)] = Self.calls.map { ($0, nil, .first) }  // each call's clean baseline
        for call in Self.calls {
            for fault in Self.faults {
                for mode in Mode.allCases where mode != .everyReadDown || call.readRoute != nil {
                    cases.append((call, fault, mode))
                }
            }
        }
        let results = Mutex<[(label: String, exit: Int32, problem: String?)]>([])
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 16
        let started = Date()
        for (call, fault, mode) in cases {
            queue.addOperation {
                let outcome = Self.check(call, fault: fault, mode: mode)
                results.withLock { $0.append(outcome) }
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        let all = results.withLock { $0 }
        let byExit = Dictionary(grouping: all, by: \.exit).mapValues(\.count).sorted { $0.key < $1.key }.map {
            "exit \($0.key): \($0.value)"
        }
        let bad = all.filter { $0.problem != nil }
        print(
            "fault matrix: \(all.count) cases (\(Self.calls.count) money calls × \(Self.faults.count) faults × up to \(Mode.allCases.count) modes, and a clean run each) in \(Int(Date().timeIntervalSince(started))) s; \(byExit.joined(separator: ", ")); \(bad.count) bad"
        )
        for b in bad { Issue.record("\(b.label): \(b.problem!)") }
    }
}
