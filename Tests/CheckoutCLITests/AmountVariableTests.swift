import Foundation
import LoopbackHTTP
import SandboxEmulator
import TestSupport
import Testing

@testable import CheckoutCLI
@testable import CheckoutKit

/// Every built-in flow's amount variable, from every source a value has — `--var`, `--vars-file` (a string and a JSON
/// number), an include's `vars` — for each value of the rule's literal table (`AmountTable`) in USD, JPY and KWD: the
/// amount on the wire and in the emulator's ledger is the table's, or the run is refused before anything is sent with
/// the table's words, naming the variable and its source; `flow validate` refuses exactly what the run refuses.
///
/// The runs go through the command line's own pieces in this process — its parser, its reading of variables, the run
/// environment with its embedded emulator — so that the whole table takes seconds.
@Suite(.serialized) struct AmountVariableTests {
    enum Source: String, CaseIterable {
        case commandLine = "--var"
        case varsFileString = "--vars-file (string)"
        case varsFileNumber = "--vars-file (number)"
        case include = "include vars"
    }

    /// A built-in flow with an amount variable: how it reads it, what its money calls leave in the ledger, and where
    /// the amount shows on the wire.
    struct FlowUnderTest: Sendable {
        var name: String
        var notation: AmountNotation
        /// The ledger entries one checkout leaves (kinds), when its provider takes the currency.
        var ledger: [String]
        /// The currencies the emulated provider takes (nil: any): another is refused by the provider, never changed.
        var currencies: Set<String>?
        /// The request that carries the amount, and the amount's text in it.
        var wire: @Sendable (HTTPRequest) -> String?
        /// Variables that only make the run quick (the emulator approves Cash App at once).
        var quick: [String: String] = [:]
    }

    static func body(_ request: HTTPRequest) -> JSON? { try? JSON.parse(request.body) }
    static let braintreeWire: @Sendable (HTTPRequest) -> String? = { request in
        guard let json = body(request), let query = json["query"]?.stringValue,
            query.contains("chargePaymentMethod") || query.contains("authorizePaymentMethod")
        else { return nil }
        return json["variables"]?["input"]?["transaction"]?["amount"]?.stringValue
    }
    static let afterpayWire: @Sendable (HTTPRequest) -> String? = { request in
        guard request.method == "POST",
            request.target.hasSuffix("/v2/checkouts") || request.target.hasSuffix("/v3/button")
        else { return nil }
        return body(request)?["amount"]?["amount"]?.stringValue
    }
    static let quickCashApp = ["poll_interval": "20ms"]

    static let flows: [FlowUnderTest] = [
        .init(
            name: "bahn-apple-pay", notation: .minorUnits, ledger: ["authorization", "capture"], currencies: nil,
            wire: { _ in nil }),
        .init(
            name: "braintree-apple-pay", notation: .majorUnits, ledger: ["capture"], currencies: ["USD"],
            wire: braintreeWire),
        .init(
            name: "braintree-apple-pay-auth-capture", notation: .majorUnits, ledger: ["authorization", "capture"],
            currencies: ["USD"], wire: braintreeWire),
        // The sandbox declines 2000.00–2999.99 only: the table's amounts are charged (and the step, expecting a
        // decline, fails).
        .init(
            name: "braintree-apple-pay-declined", notation: .majorUnits, ledger: ["capture"], currencies: ["USD"],
            wire: braintreeWire),
        .init(
            name: "cashapp-server", notation: .majorUnits, ledger: ["capture"], currencies: ["USD"], wire: afterpayWire,
            quick: quickCashApp),
        .init(
            name: "cashapp-server-auth", notation: .majorUnits, ledger: ["authorization"], currencies: ["USD"],
            wire: afterpayWire, quick: quickCashApp),
        // The Afterpay Button pays with a virtual card: nothing in Afterpay's ledger; the amount shows on the wire.
        .init(
            name: "cashapp-button", notation: .majorUnits, ledger: [], currencies: ["USD"], wire: afterpayWire,
            quick: quickCashApp),
        // The customer approves any amount but 13.13 (the emulator's decline): nothing moves either way.
        .init(
            name: "cashapp-declined", notation: .majorUnits, ledger: [], currencies: ["USD"], wire: afterpayWire,
            quick: quickCashApp),
    ]

    static let currencies = AmountTable.currencies
    static let values = AmountTable.values

    /// The shared environment: one embedded emulator for every case, its ledger and request log read as deltas.
    final class Bench: @unchecked Sendable {
        let scratch: Scratch
        let environment: RunEnvironment
        var emulator: Emulator { environment.emulator! }

        init() throws {
            scratch = try Scratch()
            let invocation = try Self.invocation([
                "flow", "run", "bahn-apple-pay", "-q", "--session", scratch.path + "/state.json",
            ])
            environment = try RunEnvironment.prepare(invocation)
            #expect(environment.emulator != nil, "an embedded emulator of this test's own")
        }

        static func invocation(_ arguments: [String]) throws -> Invocation {
            guard case .run(_, let invocation) = try CheckoutDriver.parse(arguments) else {
                throw Diagnostic.internalError("not a command")
            }
            return invocation
        }

        /// What one value from one source did: the run's failure, `flow validate`'s, the new ledger entries and the
        /// amounts on the wire.
        struct Outcome {
            var failure: Diagnostic?
            var validation: Diagnostic?
            var ledger: [Ledger.Entry]
            var wire: [String]
            var requests: Int
        }

        func run(_ flow: FlowUnderTest, value: String, currency: String, from source: Source) async throws -> Outcome? {
            var vars = flow.quick
            vars["currency"] = currency
            var arguments = ["flow", "run", flow.name, "-q", "--session", scratch.path + "/state.json"]
            var loaded = try BuiltinFlows.load(BuiltinFlows.named(flow.name)!, registry: Operations.registry)
            let number = JSON.Number(literal: value)
            switch source {
            case .commandLine:
                arguments += (vars.merging(["amount": value]) { $1 }).sorted { $0.key < $1.key }.flatMap {
                    ["--var", "\($0.key)=\($0.value)"]
                }
            case .varsFileString, .varsFileNumber:
                if source == .varsFileNumber && number == nil { return nil }
                var document = JSON.Object(vars.mapValues(JSON.string))
                document["amount"] = source == .varsFileNumber ? .number(number!) : .string(value)
                arguments += ["--vars-file", try scratch.write("vars.json", JSON.object(document).serialized())]
            case .include:
                var given = JSON.Object(vars.mapValues(JSON.string))
                given["amount"] = number.map(JSON.number) ?? .string(value)
                let file = try scratch.write(
                    "include.json",
                    JSON.object([
                        "name": "including", "steps": [["include": .string(flow.name), "vars": .object(given)]],
                    ]).serialized())
                loaded = try FlowFile.load(path: file, registry: Operations.registry)
            }
            let given = try FlowCommands.variables(
                try FlowCommands.RunInput.read(try Self.invocation(arguments)).variables, for: loaded)
            var validation: Diagnostic?
            do {
                try environment.session.makeRunner(
                    registry: Operations.registry, reporters: Reporters(all: []), services: RunServices()
                )
                .preflight(loaded, vars: given.values, origins: given.origins)
            } catch { validation = error }
            let ledgerBefore = emulator.ledger.entries().count
            let requestsBefore = emulator.receivedRequests().count
            let result = try await environment.session.run(
                loaded, vars: given.values, origins: given.origins, registry: Operations.registry,
                reporters: Reporters(all: []))
            let requests = Array(emulator.receivedRequests().dropFirst(requestsBefore))
            return Outcome(
                failure: result.failure, validation: validation,
                ledger: Array(emulator.ledger.entries().dropFirst(ledgerBefore)),
                wire: requests.compactMap(flow.wire), requests: requests.count)
        }
    }

    /// The rule's literal tables (`AmountTable`): value × currency → minor units, or the refusal's words.
    static func expected(_ notation: AmountNotation, _ value: String, _ currency: String) -> AmountTable.Outcome {
        let table = notation == .minorUnits ? AmountTable.minorUnits : AmountTable.majorUnits
        return table.first { $0.0 == value }!.1[currency]!
    }

    /// How a refusal names the variable and its source.
    static func refusal(_ source: Source, _ value: String, _ problem: String) -> String {
        let shown = JSON.string(value).shownInMessage
        return switch source {
        case .commandLine: "--var amount=\(shown) \(problem) (step '"
        case .varsFileString, .varsFileNumber: "vars.json: $.amount=\(shown) \(problem) (step '"
        case .include: "flow variable amount=\(shown) ("
        }
    }

    /// An amount from configuration (`${env.AMOUNT}`, here from `--set`) is read by the same rule: text as written,
    /// never a number re-printed; a bad one is 78 naming the variable, and never shows a configuration value (it may be
    /// secret).
    @Test(arguments: [
        ("bahn-apple-pay", "12.00", "USD", 1200), ("bahn-apple-pay", "12", "USD", 12),
        ("bahn-apple-pay", "0.001", "KWD", 1),
        ("braintree-apple-pay", "12", "USD", 1200), ("braintree-apple-pay", "12.30", "USD", 1230),
    ])
    func anAmountFromConfigurationIsReadAsWritten(
        flow: String, value: String, currency: String, minor: Int
    ) async throws {
        let s = try Scratch()
        let file = try s.write(
            "from-config.json",
            #"{"name": "from-config", "steps": [{"include": "\#(flow)", "vars": {"amount": "${env.AMOUNT}", "currency": "\#(currency)"}}]}"#
        )
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let r = try await BinaryRunner.run(["flow", "run", file, "--set", "AMOUNT=\(value)", "-q"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let entries = try OpenOutcomeTests.ledger(server, flow.hasPrefix("bahn") ? "bahn" : "braintree")
        #expect(
            !entries.isEmpty && entries.allSatisfy { $0["amount"] as? Int == minor },
            "\(flow) \(value) \(currency): \(entries)")
    }

    @Test func aBadAmountFromConfigurationIs78NamingTheVariableNotItsValue() async throws {
        let s = try Scratch()
        let file = try s.write(
            "from-config.json",
            #"{"name": "from-config", "steps": [{"include": "bahn-apple-pay", "vars": {"amount": "${env.AMOUNT}", "currency": "JPY"}}]}"#
        )
        for command in ["validate", "run"] {
            let r = try await BinaryRunner.run(["flow", command, file, "--set", "AMOUNT=12.34"], home: s.path)
            #expect(r.status == 78, "\(r.all)")
            #expect(
                r.stderr.contains(
                    "error: configuration variable AMOUNT has 2 decimals, and JPY has none (step 'make-token', argument 'amount' of applepay.makeToken); nothing was sent"
                ), "\(r.stderr)")
            #expect(
                r.stderr.contains(
                    "hint: set AMOUNT (--set, the environment, .env or the profile): give digits for minor units"),
                "\(r.stderr)")
            #expect(!r.stderr.contains("12.34"), "a configuration value is never shown: \(r.stderr)")
        }
    }

    /// The variable the Braintree flows no longer have is refused saying what took its place, from either source.
    @Test func aRetiredAmountVariableSaysWhatTookItsPlace() async throws {
        let s = try Scratch()
        let byOption = try await BinaryRunner.run(
            ["flow", "validate", "braintree-apple-pay", "--var", "amount_minor=1000"], home: s.path)
        #expect(byOption.status == 64, "\(byOption.all)")
        #expect(
            byOption.stderr.contains(
                "error: --var amount_minor: flow braintree-apple-pay has no variable 'amount_minor' any more: the flow's one amount is 'amount' now, in major units (10.00, or 10 for 10.00): the token's total and the charge both come from it"
            ), "\(byOption.stderr)")
        let file = try s.write("vars.json", #"{"amount_minor": 1000}"#)
        let byFile = try await BinaryRunner.run(
            ["flow", "run", "braintree-apple-pay-auth-capture", "--vars-file", file], home: s.path)
        #expect(
            byFile.status == 65
                && byFile.stderr.contains(
                    "$.amount_minor: flow braintree-apple-pay-auth-capture has no variable 'amount_minor' any more: the flow's one amount is 'amount' now"
                ), "\(byFile.all)")
    }

    /// The raw-request flow sends its amount as written — a number keeps its text, a string stays a string — and the
    /// emulator's orders take only an integer written as one: nothing is ever turned into another amount.
    @Test(arguments: Source.allCases)
    func theRawFlowSendsItsAmountAsWritten(source: Source) async throws {
        let bench = try Bench()
        defer { bench.environment.shutdown() }
        let orders = FlowUnderTest(
            name: "emulator-orders", notation: .minorUnits, ledger: ["authorization", "capture"], currencies: nil,
            wire: { request in
                guard request.method == "POST", request.target == "/_sandbox/orders" else { return nil }
                return String(decoding: request.body, as: UTF8.self)
            })
        for value in Self.values {
            for currency in Self.currencies {
                guard let outcome = try await bench.run(orders, value: value, currency: currency, from: source) else {
                    continue
                }
                let label = "\(source.rawValue) emulator-orders amount=\(value) \(currency)"
                let asNumber = JSON.Number(literal: value) != nil && source != .varsFileString
                let written = asNumber ? value : JSON.string(value).serialized()
                #expect(
                    outcome.wire.count == 1 && outcome.wire.first?.contains("\"amount\":\(written)") == true,
                    "\(label): \(outcome.wire)")
                if asNumber && value == "12" {
                    #expect(outcome.failure == nil, "\(label): \(outcome.failure?.message ?? "")")
                    #expect(
                        outcome.ledger.map { "\($0.kind.rawValue) \($0.amount) \($0.currency)" } == [
                            "authorization 12 \(currency)", "capture 12 \(currency)",
                        ], "\(label)")
                } else {
                    #expect(outcome.ledger.isEmpty, "\(label)")
                    #expect(
                        outcome.failure?.message.contains("amount must be a positive integer (minor units)") == true,
                        "\(label): \(outcome.failure?.message ?? "passed")")
                }
            }
        }
    }

    @Test(arguments: Source.allCases)
    func everyBuiltinFlowsAmountIsExactOrRefused(source: Source) async throws {
        let bench = try Bench()
        defer { bench.environment.shutdown() }
        for flow in Self.flows {
            for value in Self.values {
                for currency in Self.currencies {
                    guard let outcome = try await bench.run(flow, value: value, currency: currency, from: source) else {
                        continue
                    }
                    let label = "\(source.rawValue) \(flow.name) amount=\(value) \(currency)"
                    switch Self.expected(flow.notation, value, currency) {
                    case .refused(let problem):
                        // Refused before anything was sent, naming the variable, its source and the problem; validate
                        // agrees.
                        #expect(outcome.requests == 0 && outcome.ledger.isEmpty, "\(label): nothing sent")
                        let message = outcome.failure?.message ?? ""
                        #expect(message.contains(Self.refusal(source, value, problem)), "\(label): \(message)")
                        if source == .include {
                            #expect(
                                message.contains("include.json: $.steps[0].vars.amount) \(problem) (step '"),
                                "\(label): \(message)")
                        }
                        #expect(message.hasSuffix("nothing was sent"), "\(label): \(message)")
                        #expect(outcome.failure?.code == (source == .commandLine ? .usage : .dataError), "\(label)")
                        #expect(
                            outcome.validation?.message == message, "\(label): flow validate refuses it the same way")
                    case .minor(let minor):
                        #expect(outcome.validation == nil, "\(label): valid, \(outcome.validation?.message ?? "")")
                        let money = try Currency.parse(currency)
                        if let taken = flow.currencies, !taken.contains(currency) {
                            // Read exactly, sent as the currency writes it, and refused by the provider, whose merchant
                            // takes USD only (a 0.001 for it is no USD amount): nothing moved.
                            #expect(outcome.ledger.isEmpty, "\(label)")
                            let said = outcome.failure?.message ?? "passed"
                            #expect(
                                said.contains("currency") || said.contains("Amount is an invalid format"),
                                "\(label): \(said)")
                            #expect(outcome.wire.allSatisfy { $0 == money.decimal(minor) }, "\(label): \(outcome.wire)")
                            continue
                        }
                        let declined =
                            flow.name == "cashapp-declined" || (flow.name.hasPrefix("cashapp") && value == "13.13")
                        let kinds = declined ? [] : flow.ledger
                        #expect(
                            outcome.ledger.map(\.kind.rawValue) == kinds,
                            "\(label): \(outcome.ledger.map(\.kind.rawValue))")
                        #expect(
                            outcome.ledger.allSatisfy { $0.amount == minor },
                            "\(label): \(outcome.ledger.map(\.amount)) for \(minor)")
                        #expect(
                            outcome.ledger.allSatisfy { [currency, money.numeric].contains($0.currency) }, "\(label)")
                        #expect(outcome.wire.allSatisfy { $0 == money.decimal(minor) }, "\(label): \(outcome.wire)")
                        if flow.notation == .majorUnits {
                            #expect(!outcome.wire.isEmpty, "\(label): the amount went on the wire")
                        }
                        if !declined && flow.name != "braintree-apple-pay-declined" {
                            #expect(outcome.failure == nil, "\(label): \(outcome.failure?.message ?? "")")
                        }
                    }
                }
            }
        }
    }
}
