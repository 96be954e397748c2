import CheckoutKit
import Foundation
import TestSupport
import Testing

@testable import CheckoutCLI

/// `flow show`, `flow describe` and `flow ops`: a person writes a flow from what the binary tells, and what it tells is
/// true — a shown flow runs unchanged, and every output path an operation declares is in what its steps output.
@Suite struct FlowAuthoringTests {
    /// Every built-in flow, shown, saved and run as a user's file (one suite, on the embedded emulator), passes; and
    /// each `use` step that passed output every path its operation declares (those that depend on an outcome aside).
    @Test func shownFlowsRunUnchangedAndOutputWhatTheirOperationsDeclare() async throws {
        let s = try Scratch()
        let dir = s.path + "/flows"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for entry in BuiltinFlows.all {
            let r = try await BinaryRunner.run(["flow", "show", entry.name], home: s.path)
            #expect(r.status == 0, "\(r.all)")
            #expect(r.stdout == entry.source, "flow show \(entry.name) prints the file as it ships")
            try Data(r.stdout.utf8).write(to: URL(fileURLWithPath: "\(dir)/\(entry.name).json"))
        }
        let run = try await BinaryRunner.run(
            ["flow", "run", dir + "/", "--format", "json"], home: s.path, timeout: 180)
        #expect(run.status == 0, "\(run.stderr)")
        let document = try JSON.parse(Data(run.stdout.utf8))
        let flows = try #require(document["flows"]?.arrayValue)
        #expect(flows.count == BuiltinFlows.all.count)
        var checked = 0
        for flow in flows {
            #expect(flow["passed"] == true, "\(flow["flow"] ?? .null)")
            let entry = try #require(BuiltinFlows.named(flow["flow"]?.stringValue ?? ""))
            let definition = try BuiltinFlows.load(entry, registry: Operations.registry)
            for step in flow["steps"]?.arrayValue ?? [] where step["outcome"] == "passed" {
                guard
                    let declared = definition.steps.first(where: { $0.name == step["name"]?.stringValue })
                        ?? definition.finally.first(where: { $0.name == step["name"]?.stringValue }),
                    case .operation(let name, _) = declared.action, let op = Operations.registry[name]
                else { continue }
                for output in op.outputs where output.when == nil {
                    let path = try JSONPath(output.path)
                    #expect(
                        path.evaluate(step["output"] ?? .null) != nil,
                        "\(entry.name) step \(declared.name): \(name) declares \(output.path)")
                    checked += 1
                }
            }
        }
        #expect(checked > 200, "\(checked) declared outputs checked")
    }

    /// A flow that includes a built-in flow with its own values, and adds a step that reads what the include captured.
    @Test func aFlowIncludingABuiltinFlowRuns() async throws {
        let s = try Scratch()
        let file = try s.write(
            "pay-twice.json",
            #"""
            {"name": "pay-and-read", "steps": [
              {"include": "bahn-apple-pay", "vars": {"amount": 4200}},
              {"name": "read-again", "use": "bahn.getIntent", "with": {"intent": "${vars.intent}"},
               "expect": {"equals": {"payment_intent.amount": 4200, "payment_intent.status": "succeeded"}}}]}
            """#)
        let r = try await BinaryRunner.run(["flow", "run", file], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout.contains("passed: pay-and-read, 6 steps"), "\(r.stdout)")
    }

    @Test func showNamesTheClosestFlowWhenTheNameIsWrong() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "show", "bahn-aple-pay"], home: s.path)
        #expect(r.status == 64)
        #expect(
            r.stderr.contains("no built-in flow named 'bahn-aple-pay'; did you mean 'bahn-apple-pay'?"), "\(r.stderr)")
    }

    @Test func opsListsEveryRegisteredOperationWithItsArgumentsAndOutputs() async throws {
        let s = try Scratch()
        let json = try await BinaryRunner.run(["flow", "ops", "--format", "json"], home: s.path)
        #expect(json.status == 0, "\(json.all)")
        let listed = try #require(try JSON.parse(Data(json.stdout.utf8))["operations"]?.arrayValue)
        #expect(listed.compactMap { $0["name"]?.stringValue } == Operations.registry.names)
        for item in listed {
            let op = try #require(Operations.registry[item["name"]?.stringValue ?? ""])
            #expect(item["arguments"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == op.parameters.map(\.name))
            #expect(item["outputs"]?.arrayValue?.compactMap { $0["path"]?.stringValue } == op.outputs.map(\.path))
            #expect(!op.outputs.isEmpty, "\(op.name) declares what it outputs")
        }
        let confirm = try #require(listed.first { $0["name"] == "bahn.confirm" })
        let amount = confirm["arguments"]?.arrayValue?.first { $0["name"] == "amount" }
        #expect(
            amount?["type"] == "amount" && amount?["notation"] == "minorUnits"
                && amount?["currency"] == "argument 'currency'", "\(amount ?? nil)")
        #expect(listed.first { $0["name"] == "applepay.makeToken" }?["exactlyOneOf"] == [["amount", "total"]])
        let key = confirm["arguments"]?.arrayValue?.first { $0["name"] == "idempotencyKey" }
        #expect(
            key == [
                "name": "idempotencyKey", "type": "string", "required": false, "default": "order-<order id>-applepay",
                "help": "kept in the state file",
            ])
        #expect(confirm["arguments"]?.arrayValue?.first { $0["name"] == "tokenFile" }?["file"] == true)
        let poll = try #require(listed.first { $0["name"] == "cashapp.poll" })
        #expect(poll["outputs"]?.arrayValue?.first { $0["path"] == "summary.grantId" }?["when"] == "approved")
        #expect(poll["outputs"]?.arrayValue?.first { $0["path"] == "summary.status" }?["when"] == nil)

        let text = try await BinaryRunner.run(["flow", "ops"], home: s.path)
        for name in Operations.registry.names {
            #expect(text.stdout.contains("\n\(name): ") || text.stdout.hasPrefix("\(name): "), "\(name)")
        }
        #expect(
            text.stdout.contains(
                "    amount          amount, optional, currency from 'currency'  digits are minor units (8000), a decimal is major units (80.00 USD)"
            ), "\(text.stdout)")
        #expect(
            text.stdout.contains(
                "applepay.makeToken: Make a single-use EC_v1 test token (for the emulator's keys) into a file.\n  arguments (with):\n  exactly one of: amount, total"
            ), "\(text.stdout)")
        #expect(
            text.stdout.contains("    summary.grantId     the grant the approval gave (GRG_…) (when approved)"),
            "\(text.stdout)")
    }

    @Test func opsTakesAnOperationOrAProvider() async throws {
        let s = try Scratch()
        let provider = try await BinaryRunner.run(["flow", "ops", "cashapp"], home: s.path)
        let names = provider.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") && !$0.isEmpty }.map {
            String($0.prefix { $0 != ":" })
        }
        #expect(names == Operations.registry.names.filter { $0.hasPrefix("cashapp.") })
        let one = try await BinaryRunner.run(["flow", "ops", "bahn.getIntent"], home: s.path)
        #expect(one.stdout.hasPrefix("bahn.getIntent: Read a PaymentIntent"))
        #expect(
            one.stdout.contains("intent  string, optional  the intent id [default: the state file's last intent]"),
            "\(one.stdout)")
        // A name is a whole operation or a whole provider, never the start of several operations' names.
        let partial = try await BinaryRunner.run(["flow", "ops", "bahn.c"], home: s.path)
        #expect(partial.status == 64, "\(partial.all)")
        let wrong = try await BinaryRunner.run(["flow", "ops", "bahn.confrim"], home: s.path)
        #expect(wrong.status == 64)
        #expect(
            wrong.stderr.contains("no operation or provider named 'bahn.confrim'; did you mean 'bahn.confirm'?"),
            "\(wrong.stderr)")
    }

    @Test func describeListsVariablesStepsCapturesAndOutputs() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "describe", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            r.stdout.contains(
                "  amount    8000       digits are minor units (8000), a decimal the currency's major units (80.00 USD)"
            ), "\(r.stdout)")
        #expect(r.stdout.contains("  order_id  \"${uuid}\"  the merchant order id"), "\(r.stdout)")
        #expect(r.stdout.contains("  2. create-intent  use bahn.createIntent: Create a PaymentIntent"))
        #expect(r.stdout.contains("       captures ${vars.intent} from $.payment_intent.id"))
        #expect(r.stdout.contains("       outputs: id, type, intent, status, event"))

        // A user's file, with a raw request and an optional step, in JSON.
        let file = try s.write(
            "mine.json",
            #"""
            {"name": "mine", "vars": {"n": 1}, "steps": [
              {"name": "health", "description": "is it up", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "optional": true},
              {"name": "token", "use": "applepay.makeToken", "with": {"amount": "${vars.n}", "currency": "USD"}}]}
            """#)
        let json = try await BinaryRunner.run(["flow", "describe", file, "--format", "json"], home: s.path)
        #expect(json.status == 0, "\(json.all)")
        let doc = try JSON.parse(Data(json.stdout.utf8))
        #expect(doc["vars"] == [["name": "n", "default": 1]])
        let steps = try #require(doc["steps"]?.arrayValue)
        #expect(steps[0]["request"] == "GET ${env.EMULATOR_URL}/_sandbox/health" && steps[0]["optional"] == true)
        #expect(steps[0]["description"] == "is it up" && steps[0]["outputs"]?.arrayValue?.first?["path"] == "$")
        #expect(
            steps[1]["use"] == "applepay.makeToken"
                && steps[1]["outputs"]?.arrayValue?.map { $0["path"] } == [
                    "path", "transactionId", "amount", "currency",
                ])
    }
}
