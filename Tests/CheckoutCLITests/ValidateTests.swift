import CheckoutKit
import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// `flow validate` catches everything `flow run` would reject before sending, by running the same checks: for each
/// bad flow both exit with the same code and message, and the run sends nothing.
@Suite struct ValidateTests {
    static let header = #"{"name": "bad", "vars": {"amount": 8000}, "steps": ["#
    static func request(_ extra: String = "", url: String = "${env.EMULATOR_URL}/_sandbox/health") -> String {
        #"{"name": "s", "request": {"url": "\#(url)"\#(extra)}}"#
    }

    static func intent(_ amount: String) -> String {
        #"{"name": "i", "use": "bahn.createIntent", "with": {"amount": "\#(amount)", "currency": "JPY"}}"#
    }

    @Test(arguments: [
        (
            header + request(url: "${env.EMULATOR_URL}/x/${vars.who}") + "]}", [String](), 65,
            "${vars.who} names an unknown variable"
        ),
        (
            #"{"name": "bad", "vars": {"a": "${vars.b}", "b": "x${vars.a}"}, "steps": ["# + request() + "]}", [], 65,
            "$.vars.a: variables refer to each other in a cycle: a → b → a"
        ),
        (
            header + request(#", "method": "POST", "bodyFile": "/nonexistent/body.json""#) + "]}", [], 65,
            "cannot read bodyFile /nonexistent/body.json: No such file or directory"
        ),
        (
            header
                + #"{"name": "s", "request": {"url": "${env.EMULATOR_URL}/_sandbox/health"}, "expect": {"status": []}}]}"#,
            [], 65, "$.steps[0].expect.status: an empty list accepts no status at all"
        ),
        (
            header + request(#", "headers": {"X-A": "a\nb"}"#) + "]}", [], 65,
            "$.steps[0].request.headers.X-A: the value holds a line break (LF)"
        ),
        (header + request(url: "${env.NOT_SET_ANYWHERE}/x") + "]}", [], 78, "NOT_SET_ANYWHERE is not set"),
        (
            #"{"name": "bad", "vars": {"base": "${env.NOT_SET_ANYWHERE}"}, "steps": ["# + request() + "]}", [], 78,
            "NOT_SET_ANYWHERE is not set for environment"
        ),
        (
            header + request(url: "${env.EMULATOR_URL}/${state.nothing.here}") + "]}", [], 65,
            "${state.nothing.here} is not in the state file"
        ),
        (
            header + request(url: "${env.EMULATOR_URL}/${vars.amount}") + "]}", ["--var", "amout=5100"], 64,
            "--var amout: flow bad has no variable 'amout'; did you mean 'amount'?"
        ),
        (
            header + request(#", "headers": {"X-A": "${vars.note}"}"#) + "]}", ["--var", "note=a\nb"], 64,
            "--var note holds a line break (LF)"
        ),
        // An amount is checked as the run will read it, and blamed on the variable it came from, through one that
        // passes it on.
        (
            header + intent("${vars.amount}") + "]}", ["--var", "amount=12.5"], 64,
            "--var amount=12.5 has 1 decimal, and JPY has none (step 'i', argument 'amount' of bahn.createIntent); nothing was sent"
        ),
        (
            #"{"name": "bad", "vars": {"amount": 8000, "total": "${vars.amount}"}, "steps": ["#
                + intent("${vars.total}") + "]}", ["--var", "amount=abc"], 64,
            "--var amount=abc is not a number (step 'i', argument 'amount' of bahn.createIntent)"
        ),
        (
            #"{"name": "bad", "vars": {"amount": "12,5"}, "steps": ["# + intent("${vars.amount}") + "]}", [], 65,
            "flow variable amount='12,5' ("
        ),
        // A duration and a choice are checked as the run reads them too, before the steps before them send anything.
        (
            header + intent("1") + #", {"name": "p", "use": "cashapp.poll", "with": {"timeout": "${vars.wait}"}}]}"#,
            ["--var", "wait=soon"], 64,
            "--var wait=soon is not a positive number of seconds or a duration (step 'p', argument 'timeout' of cashapp.poll); nothing was sent"
        ),
        (
            header
                + #"{"name": "c", "use": "bahn.confirm", "with": {"intent": "pi_1", "tokenFile": "t.json", "captureMethod": "${vars.m}"}}]}"#,
            ["--var", "m=later"], 64,
            "--var m=later is not one of manual, automatic (step 'c', argument 'captureMethod' of bahn.confirm)"
        ),
    ])
    func validateAndRunRejectTheSameFlowTheSameWay(
        flow: String, options: [String], status: Int32, message: String
    ) async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let file = try s.write("bad.json", flow)
        let env = ["EMULATOR_URL": emulator.baseURL]
        let validate = try await BinaryRunner.run(
            ["flow", "validate", file, "--env", "sandbox"] + options, home: s.path, environment: env)
        let run = try await BinaryRunner.run(
            ["flow", "run", file, "--env", "sandbox"] + options, home: s.path, environment: env)
        #expect(validate.status == status, "validate: \(validate.all)")
        #expect(run.status == status, "run: \(run.all)")
        #expect(validate.stderr.contains(message), "validate: \(validate.stderr)")
        #expect(run.stderr.contains(message), "run: \(run.stderr)")
        #expect(emulator.receivedRequests().isEmpty, "the run sent nothing")
    }

    /// `--env-file PATH` configures a run as ./.env does (here: which server EMULATOR_URL names); a missing one is 65.
    @Test func anEnvFileConfiguresTheRun() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        let envFile = try s.write("ci.env", "EMULATOR_URL=\(emulator.baseURL)\n")
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--env", "sandbox", "--env-file", envFile], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(
            emulator.receivedRequests().contains { $0.path == "/_sandbox/orders" },
            "the run reached the server the file names")
        let missing = try await BinaryRunner.run(
            ["flow", "validate", "emulator-orders", "--env-file", s.path + "/nope.env"], home: s.path)
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("--env-file \(s.path)/nope.env: no such file"), "\(missing.stderr)")
    }

    @Test func aVarsFileWithAnUnknownNameIs65NamingIt() async throws {
        let s = try Scratch()
        let vars = try s.write("vars.json", #"{"amout": 5100}"#)
        for command in ["validate", "run"] {
            let r = try await BinaryRunner.run(["flow", command, "emulator-orders", "--vars-file", vars], home: s.path)
            #expect(r.status == 65, "\(command): \(r.all)")
            #expect(
                r.stderr.contains(
                    "--vars-file \(vars): $.amout: flow emulator-orders has no variable 'amout'; did you mean 'amount'?"
                ), "\(r.stderr)")
        }
    }

    @Test func aVarsFileSetsTypedValuesAndVarWinsOverIt() async throws {
        let s = try Scratch()
        let vars = try s.write("vars.json", #"{"amount": 4200, "currency": "EUR"}"#)
        let r = try await BinaryRunner.run(
            ["flow", "run", "emulator-orders", "--vars-file", vars, "--var", "currency=USD", "--format", "json"],
            home: s.path)
        #expect(r.status == 0, "\(r.all)")
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let create = try #require((doc["steps"] as? [[String: Any]])?.first { $0["name"] as? String == "create-order" })
        let order = (create["output"] as? [String: Any])?["order"] as? [String: Any]
        #expect(order?["amount"] as? Int == 4200)
        #expect(order?["currency"] as? String == "USD")
    }

    @Test func aValidFlowIsSaidToBeValidWithoutSendingAnything() async throws {
        let s = try Scratch()
        let r = try await BinaryRunner.run(["flow", "validate", "bahn-apple-pay"], home: s.path)
        #expect(r.status == 0, "\(r.all)")
        #expect(r.stdout == "bahn-apple-pay: valid, 5 steps (environment local)\n")
        let json = try await BinaryRunner.run(
            ["flow", "validate", "emulator-orders", "--format", "json"], home: s.path)
        let doc = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(doc["valid"] as? Bool == true && doc["steps"] as? Int == 4 && doc["finally"] as? Int == 1)
    }

    /// `flow validate` and `flow run` count a flow's steps the same way: the main steps, and the finally steps apart.
    @Test func validateAndRunCountStepsAlike() async throws {
        let s = try Scratch()
        let validate = try await BinaryRunner.run(["flow", "validate", "emulator-orders"], home: s.path)
        #expect(
            validate.stdout == "emulator-orders: valid, 4 steps, 1 finally (environment local)\n", "\(validate.all)")
        let run = try await BinaryRunner.run(["flow", "run", "emulator-orders"], home: s.path)
        #expect(run.stdout.hasPrefix("flow emulator-orders (4 steps, 1 finally)\n"), "\(run.stdout)")
        #expect(run.stdout.contains(/\npassed: emulator-orders, 4 steps, 1 finally in \d+ ms\n/), "\(run.stdout)")
        let events = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--format", "jsonl"], home: s.path)
        let started = try JSON.parse(String(events.stdout.split(separator: "\n").first ?? ""))
        #expect(started["event"] == "flow_started" && started["steps"] == 4 && started["finally"] == 1, "\(started)")
    }

    /// An amount written in the step itself, judged once its currency (a variable) is known: the file, the step and
    /// the value, by `flow validate` as by `flow run`.
    @Test func anAmountWrittenInTheStepIsBlamedOnItsFileAndStep() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "lit.json",
            #"""
            {"name": "lit", "vars": {"cur": "JPY"}, "steps": [{"name": "ci", "use": "bahn.createIntent", "with": {"amount": "12.5", "currency": "${vars.cur}"}}]}
            """#)
        for command in ["validate", "run"] {
            let r = try await BinaryRunner.run(["flow", command, flow], home: s.path)
            #expect(r.status == 65, "\(r.all)")
            #expect(
                r.stderr.contains(
                    "error: \(flow): $.steps[0] (step 'ci'): argument 'amount' of bahn.createIntent is 12.5, which has 1 decimal, and JPY has none; nothing was sent"
                ), "\(command): \(r.stderr)")
        }
    }

    /// An amount known only once an earlier step answered (captured) is checked as the step runs, by the same rule, and
    /// blamed on the answer it came from — not left to the operation's own refusal.
    @Test func aCapturedAmountIsCheckedWhenItsStepRuns() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "cap.json",
            #"""
            {"name": "cap", "steps": [
              {"name": "grab", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "json": {"amount": "12.5"}}, "capture": {"amount": "json.amount"}},
              {"name": "ci", "use": "bahn.createIntent", "with": {"amount": "${vars.amount}", "currency": "JPY"}}]}
            """#)
        #expect(
            try await BinaryRunner.run(["flow", "validate", flow], home: s.path).status == 0, "unknown before the run")
        let r = try await BinaryRunner.run(["flow", "run", flow], home: s.path)
        #expect(r.status == 1, "the step failed: \(r.all)")
        #expect(
            r.stderr.contains(
                "error: step 'ci': ${vars.amount} 12.5 has 1 decimal, and JPY has none (argument 'amount' of bahn.createIntent) (the value was captured from step 'grab''s response)"
            ), "\(r.stderr)")
    }

    /// What can be checked without the network is checked before the first request, by `flow run` and `flow validate`
    /// alike: output paths, the state file's path, and input files whose path is known (a literal, a variable).
    @Test(arguments: [
        (["--record", "nodir/x.har"], 74, "cannot write --record nodir/x.har: the directory nodir does not exist"),
        (["--junit", "nodir/j.xml"], 74, "cannot write --junit nodir/j.xml: the directory nodir does not exist"),
        (["--session", "."], 74, "--session . is a directory"),
    ])
    func outputsThatCannotBeWrittenStopTheRunBeforeAnyRequest(
        options: [String], status: Int32, message: String
    ) async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        for command in [["flow", "run", "bahn-apple-pay"], ["flow", "validate", "bahn-apple-pay"]] {
            let r = try await BinaryRunner.run(options + command, home: s.path)
            #expect(r.status == status, "\(command): \(r.all)")
            #expect(r.stderr.contains("error: " + message), "\(r.stderr)")
        }
        #expect(
            !(try curl(["-s", server.url + "/_sandbox/requests"])).contains("/api/payment_intents"), "nothing was sent")
    }

    @Test func aMalformedInputFileIs65BeforeAnyRequestEvenWhenTheStepIsLater() async throws {
        let s = try Scratch()
        let server = try ServeProcess(home: s.path)
        defer { server.stop() }
        let bad = try s.write("details.json", "{not json")
        // No challenge comes for 1002-M, and the file is read only for one: it is checked all the same.
        for item in ["1002-M", "3002-M"] {
            let r = try await BinaryRunner.run(
                ["centra", "express", "--item", item, "--3ds-details", bad], home: s.path)
            #expect(r.status == 65, "\(item): \(r.all)")
            #expect(r.stderr.contains("3DS details file"), "\(r.stderr)")
        }
        let flow = try s.write(
            "flow.json",
            #"""
            {"name": "t", "vars": {"token": "missing-token.json"}, "steps": [
              {"name": "create", "use": "bahn.createIntent", "with": {"amount": 100, "currency": "704"}, "capture": {"intent": "payment_intent.id"}},
              {"name": "confirm", "use": "bahn.confirm", "with": {"intent": "${vars.intent}", "tokenFile": "${vars.token}"}}]}
            """#)
        for command in [["flow", "run", flow], ["flow", "validate", flow]] {
            let r = try await BinaryRunner.run(command, home: s.path)
            #expect(r.status == 65, "\(command): \(r.all)")
            #expect(r.stderr.contains("missing-token.json"), "\(r.stderr)")
        }
        let requests = try curl(["-s", server.url + "/_sandbox/requests"])
        #expect(!requests.contains("/centra/graphql") && !requests.contains("/api/payment_intents"), "nothing was sent")
    }

    @Test func aBodyFileNamedByAVariableIsCheckedByValidateAsByRun() async throws {
        let s = try Scratch()
        let flow = try s.write(
            "flow.json",
            #"""
            {"name": "t", "vars": {"body": "nope.json"}, "steps": [
              {"name": "post", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "bodyFile": "${vars.body}"}}]}
            """#)
        for command in [
            ["flow", "validate", flow], ["flow", "run", flow],
            ["flow", "validate", flow, "--var", "body=also-missing.json"],
        ] {
            let r = try await BinaryRunner.run(command, home: s.path)
            #expect(r.status == 65, "\(command): \(r.all)")
            let named = command.count > 3 ? "also-missing.json" : "nope.json"
            #expect(r.stderr.contains("cannot read bodyFile \(named)"), "\(r.stderr)")
        }
    }
}
