import Foundation
import TestSupport
import Testing

/// Values are checked once, where they enter, with the exact value in the message.
@Suite struct ValueTests {
    @Test(arguments: [
        ("0", "0 is zero: an amount is at least 1 minor unit"), ("-5", "-5 is negative"), ("+5", "+5 has a sign"),
        ("9000000000000000", "9000000000000000 is more than the largest amount, 999999999999 minor units"),
        ("1e3", "1e3 has an exponent"), (" 8000", "' 8000' has spaces"), ("eight", "eight is not a number"),
    ])
    func anAmountOptionThatIsNotAnAmountIs64(amount: String, problem: String) async throws {
        let r = try await BinaryRunner.run(["bahn", "create-intent", "--amount", amount, "--currency", "704"])
        #expect(r.status == 64, "\(amount): \(r.all)")
        #expect(
            r.stderr.contains(
                "error: --amount \(problem)\nhint: give digits for minor units (1234 is 1234 VND) or a whole number of VND (1234); no sign, exponent, comma or spaces"
            ), "\(r.stderr)")
    }

    /// The decimal form is read by the currency's digits: the dong has none.
    @Test func aDecimalAmountThatDoesNotFitTheCurrencyIs64() async throws {
        let r = try await BinaryRunner.run(["bahn", "create-intent", "--amount", "19.99", "--currency", "704"])
        #expect(r.status == 64, "\(r.all)")
        #expect(r.stderr.contains("--amount 19.99 has 2 decimals, and VND has none"), "\(r.stderr)")
    }

    @Test(arguments: [
        ("0", "0 is zero: an amount is at least 1 minor unit"),
        ("9000000000000000.0", "9000000000000000.0 is more than the largest amount, 999999999999 minor units"),
        ("12.5", "12.5 has 1 decimal, and VND has none"),
        ("true", "expected an amount (a number or a decimal string), found a boolean"),
        ("1e3", "1e3 has an exponent"), ("\"12,00\"", "'12,00' has a comma"),
    ])
    func anAmountInAFlowFileIs65AtItsPath(amount: String, message: String) async throws {
        let s = try Scratch()
        let flow = try s.write(
            "f.json",
            #"{"name": "a", "steps": [{"name": "c", "use": "bahn.createIntent", "with": {"amount": \#(amount), "currency": "704"}}]}"#
        )
        for command in ["run", "validate"] {
            let r = try await BinaryRunner.run(["flow", command, flow], home: s.path)
            #expect(r.status == 65, "\(command) \(amount): \(r.all)")
            #expect(r.stderr.contains("$.steps[0].with.amount: \(message)"), "\(r.stderr)")
        }
    }

    @Test(arguments: [
        (
            "BAHN_API_URL=file:///etc/passwd",
            "BAHN_API_URL 'file:///etc/passwd' (from --set) is a file:// URL; only http:// or https:// URLs are used"
        ),
        ("BAHN_API_URL=bn.cakedigibank.tech", "BAHN_API_URL 'bn.cakedigibank.tech' (from --set) is not a URL"),
        ("EMULATOR_URL=http://", "EMULATOR_URL 'http://' (from --set) has no host"),
    ])
    func aBaseURLThatIsNotHTTPIs78NamingTheVariable(setting: String, message: String) async throws {
        let r = try await BinaryRunner.run(["flow", "run", "emulator-orders", "--env", "sandbox", "--set", setting])
        #expect(r.status == 78, "\(r.all)")
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func aForwardURLThatIsNotHTTPIs64() async throws {
        let r = try await BinaryRunner.run(["bahn", "listen", "--forward-to", "ftp://example.com/hooks"])
        #expect(r.status == 64, "\(r.all)")
        #expect(r.stderr.contains("--forward-to 'ftp://example.com/hooks' is a ftp:// URL"), "\(r.stderr)")
    }

    @Test func aWebhookURLForTheEmulatorMustBePlainHTTP() async throws {
        let r = try await BinaryRunner.run(["sandbox", "serve", "--webhook-url", "https://example.com/hooks"])
        #expect(r.status == 64, "\(r.all)")
        #expect(r.stderr.contains("only http:// URLs are used"), "\(r.stderr)")
    }

    @Test(arguments: [
        ("1m30s", true), ("5h", true), ("1.5", true), ("250ms", true), ("1s1m", false), ("-1", false), ("5 h", false),
        ("h", false),
    ])
    func durationsAreSecondsOrUnitsFromTheLargestDown(text: String, valid: Bool) async throws {
        let r = try await BinaryRunner.run([
            "flow", "validate", "emulator-orders", "--timeout", text, "--deadline", text,
        ])
        #expect((r.status == 0) == valid, "\(text): \(r.all)")
        if !valid {
            #expect(r.stderr.contains("expects a duration such as 30, 2.5, 500ms, 2m, 1m30s or 5h, got '\(text)'"))
        }
    }
}
