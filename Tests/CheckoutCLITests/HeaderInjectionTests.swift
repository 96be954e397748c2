import Foundation
import SandboxEmulator
import TestSupport
import Testing

/// CR, LF or NUL in a header, from any source, is refused before anything is sent, and blamed on its source:
/// a flow file 65 with its JSON path, an option 64, configuration 78 naming the variable, a response a step failure.
@Suite struct HeaderInjectionTests {
    /// Runs a one-step (or two-step) flow file against an in-test emulator; `nothingSent` checks the emulator saw no
    /// request carrying the bad header.
    func run(
        _ steps: String, vars: String = "{}", _ extra: [String] = [], env: [String: String] = [:]
    ) async throws -> (BinaryRunner.Result, Emulator) {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        let flow = try s.write("flow.json", #"{"name": "inject", "vars": \#(vars), "steps": [\#(steps)]}"#)
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--env", "sandbox"] + extra, home: s.path,
            environment: ["EMULATOR_URL": emulator.baseURL].merging(env) { $1 })
        emulator.shutdown()
        return (r, emulator)
    }

    func echoStep(header value: String, name: String = "X-Note") -> String {
        #"{"name": "send", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "headers": {"\#(name)": "\#(value)"}}}"#
    }

    @Test(arguments: [
        (#"line\nbreak"#, "holds a line break (LF)"),
        (#"carriage\rreturn"#, "holds a carriage return (CR)"),
        (#"nul\u0000byte"#, "holds a NUL byte"),
        (#"${vars.missing|fall\nback}"#, "holds a line break (LF)"),
    ])
    func aFlowFileValueIs65NamingItsPath(value: String, problem: String) async throws {
        let (r, emulator) = try await run(echoStep(header: value))
        #expect(r.status == 65, "\(r.all)")
        #expect(
            r.stderr.contains(
                "$.steps[0].request.headers.X-Note: the value \(problem), which cannot go into header X-Note"),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func aFlowFileHeaderNameThatIsNotATokenIs65() async throws {
        let (r, emulator) = try await run(echoStep(header: "v", name: "Bad Name"))
        #expect(r.status == 65, "\(r.all)")
        #expect(
            r.stderr.contains(#"$.steps[0].request.headers["Bad Name"]: 'Bad Name' is not a valid header name"#),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func aFlowVariableIs65NamingIt() async throws {
        let (r, emulator) = try await run(echoStep(header: "${vars.note}"), vars: #"{"note": "a\r\nInjected: yes"}"#)
        #expect(r.status == 65, "\(r.all)")
        #expect(r.stderr.contains("flow variable 'note' ("), "\(r.stderr)")
        #expect(
            r.stderr.contains(
                "flow.json: $.vars.note) holds a line break (LF), which cannot go into header X-Note (step 'send'); nothing was sent"
            ), "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func aCommandLineVariableIs64() async throws {
        let (r, emulator) = try await run(echoStep(header: "${vars.note}"), ["--var", "note=a\nInjected: yes"])
        #expect(r.status == 64, "\(r.all)")
        #expect(
            r.stderr.contains("--var note holds a line break (LF), which cannot go into header X-Note"), "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func aConfigurationVariableIs78NamingIt() async throws {
        let (r, emulator) = try await run(echoStep(header: "${env.NOTE}"), ["--set", "NOTE=a\nInjected: yes"])
        #expect(r.status == 78, "\(r.all)")
        #expect(
            r.stderr.contains(
                "configuration variable NOTE holds a line break (LF), which cannot go into header X-Note"),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test func aDotEnvValueIs78NamingIt() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        try s.write(".env", "NOTE=\"a\\nInjected: yes\"\n")
        let flow = try s.write("flow.json", #"{"name": "inject", "steps": [\#(echoStep(header: "${env.NOTE}"))]}"#)
        let r = try await BinaryRunner.run(
            ["flow", "run", flow, "--env", "sandbox"], home: s.path, environment: ["EMULATOR_URL": emulator.baseURL])
        #expect(r.status == 78, "\(r.all)")
        #expect(r.stderr.contains("configuration variable NOTE holds a line break (LF)"), "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test(arguments: ["${vars.note}", "${steps.first.json.note}"])
    func aValueFromAResponseFailsTheStepNamingTheReference(reference: String) async throws {
        let first =
            #"{"name": "first", "request": {"method": "POST", "url": "${env.EMULATOR_URL}/_sandbox/echo", "json": {"note": "a\r\nInjected: yes"}}, "capture": {"note": "json.note"}}"#
        let (r, emulator) = try await run(first + "," + echoStep(header: reference))
        #expect(r.status == 1, "\(r.all)")
        #expect(
            r.stderr.contains("step 'send': \(reference) holds a line break (LF), which cannot go into header X-Note"),
            "\(r.stderr)")
        #expect(r.stderr.contains("step 'first'"), "names where the value came from: \(r.stderr)")
        #expect(emulator.receivedRequests().count == 1, "only the first step's request went out")
    }

    @Test func aBahnCredentialWithALineBreakIs78() async throws {
        let s = try Scratch()
        let emulator = try Emulator()
        emulator.start()
        defer { emulator.shutdown() }
        var env = try BahnCommandTests.sandboxEnvironment(emulator, scratch: s)
        env["BAHN_API_KEY"] = TestCredentials.bahnAPIKey + "\r\nX-Injected: yes"
        let r = try await BinaryRunner.run(
            ["bahn", "create-intent", "--amount", "8000", "--currency", "704", "--env", "sandbox"],
            home: s.path, environment: env)
        #expect(r.status == 78, "\(r.all)")
        #expect(
            r.stderr.contains(
                "configuration variable BAHN_API_KEY holds a line break (LF), which cannot go into a header"),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }

    @Test(arguments: [
        (["--order-id", "1234\r\nX-Injected: yes"], "--order-id holds a line break (LF)"),
        (["--order-id", ""], "--order-id is empty"),
        (["--order-id", "o\u{1}1"], "--order-id holds the control character U+1"),
        (["--intent", "pi_1\n"], "--intent holds a line break (LF)"),
        (["--intent", "pi_1", "--idempotency-key", "k\r"], "--idempotency-key holds a carriage return (CR)"),
        (["--intent", "pi_1", "--idempotency-key", " "], "--idempotency-key is empty"),
    ])
    func aBahnOptionIs64WithTheValueAsTyped(options: [String], message: String) async throws {
        let s = try Scratch()
        let token = try await BahnCommandTests.makeToken(s)
        let r = try await BinaryRunner.run(
            ["bahn", "confirm", "--token-file", token, "--amount", "8000", "--currency", "704"] + options,
            home: s.path)
        #expect(r.status == 64, "\(r.all)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func aBahnOperationArgumentInAFlowFileIs65NamingItsPath() async throws {
        let (r, emulator) = try await run(
            #"{"name": "c", "use": "bahn.createIntent", "with": {"amount": 1, "currency": "704", "orderId": "o\n1"}}"#)
        #expect(r.status == 65, "\(r.all)")
        #expect(
            r.stderr.contains(
                "$.steps[0].with.orderId: the value holds a line break (LF), which cannot go into argument 'orderId' of bahn.createIntent"
            ),
            "\(r.stderr)")
        #expect(emulator.receivedRequests().isEmpty)
    }
}
