import CheckoutKit
import Foundation
import SandboxEmulator

/// `checkout-driver applepay token`: a test EC_v1 token for the emulator's keys.
enum ApplePayCommands {
    static var spec: CommandSpec {
        CommandSpec(
            name: "applepay", abstract: "Make Apple Pay test tokens for the sandbox emulator.", subcommands: [token])
    }

    /// `applepay token`'s options. The amount is kept as typed and read in the body: it is read in the currency, which
    /// help shows after it.
    struct TokenInput: CommandInput {
        var amount: String?
        var currency: String?
        var merchantID: String?
        var pan: String?
        var recipient: String?
        var out: String?

        static let inputs: [Input<TokenInput>] = [
            .value(
                "amount", \.amount, value: "N", help: "Amount in minor units (VND has none: 8000 is 8,000 ₫).",
                required: true),
            .value(
                "currency", \.currency, value: "CODE",
                help: "ISO 4217 numeric (704) or alphabetic (VND) currency code.",
                default: "704"),
            .value(
                "merchant-id", \.merchantID, value: "ID", help: "Merchant identifier the key is derived for.",
                default: TestCredentials.merchantIdentifier),
            .value(
                "pan", \.pan, value: "DPAN",
                help: "Device PAN to encrypt; the one built in is a Luhn-valid, Visa-shaped test DPAN.",
                default: PaymentTokenMaker.testDPAN),
            .value(
                "recipient", \.recipient, value: "FILE",
                help: "PEM public key or certificate of the payment processing key [default: the emulator's]."),
            .value(
                "out", \.out, value: "FILE", help: "Write the token here (atomically, mode 0600) instead of stdout."),
        ]
    }

    static let token = CommandSpec(
        name: "token", abstract: "Make a single-use Apple Pay EC_v1 payment token for the emulator.",
        discussion: """
            Makes the bytes PassKit would hand an app as PKPaymentToken.paymentData: the payment data is encrypted
            to the payment processing key and signed with the emulator's published test PKI (a stand-in for
            Apple's). Only the emulator (--env local, or 'sandbox serve') accepts it; a real processor will not.
            Like a real token it is single-use: confirm it once, make a fresh one for the next payment.
            The token goes to --out FILE (mode 0600) or stdout, byte for byte with no trailing newline, ready
            for --token-file; a one-line summary goes to stderr.
            """,
        input: TokenInput.self
    ) { input, invocation throws(Diagnostic) in
        let settings = try GlobalSettings(invocation)
        let money = try Currency.parse(input.currency ?? "704")
        let amount =
            try input.amount.map { (text) throws(Diagnostic) in
                try Amount.parse(option: "--amount", text, notation: .minorUnits, currency: money)
            } ?? 0
        let currency = money.numeric
        let request = PaymentTokenRequest(
            amount: amount, currencyNumeric: currency,
            merchantIdentifier: input.merchantID ?? TestCredentials.merchantIdentifier,
            pan: input.pan ?? PaymentTokenMaker.testDPAN)

        let recipientPEM: String
        let recipientSource: String
        if let path = input.recipient {
            do {
                recipientPEM = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw .data("cannot read --recipient \(path): \(error.localizedDescription)", hint: "check the path")
            }
            recipientSource = path
        } else {
            recipientPEM = TestCredentials.paymentProcessingPublicKeyPEM
            recipientSource = "the emulator's payment processing key"
        }
        let recipient = try PaymentTokenMaker.recipientKey(pem: recipientPEM, source: recipientSource)
        // The emulator's published test chain stands in for Apple's signing leaf and WWDR intermediate.
        let made = try PaymentTokenMaker.make(request, recipient: recipient, signer: try ApplePayTestTokens.signer())

        let console = Console.shared
        if let out = input.out {
            try FileIO.write(made.bytes, to: out)
            if settings.output.format != .text {
                // With the token in a file, stdout is free for a machine-readable summary.
                let summary: JSON = [
                    "transactionId": .string(made.transactionId), "amount": .number(amount),
                    "currency": .string(currency), "out": .string(out),
                ]
                console.out(summary.serialized(pretty: settings.output.format == .json))
            }
        } else {
            // On a terminal a final newline keeps the prompt readable; anywhere else the bytes are the token.
            console.outBytes(console.stdoutIsTerminal ? made.bytes + Data("\n".utf8) : made.bytes)
        }
        if settings.output.format == .text && !settings.output.quiet {
            let alphabetic = money.alphabetic.map { " (\($0))" } ?? ""
            let destination = input.out.map { " → \($0)" } ?? ""
            console.err(
                "applepay token: transaction \(made.transactionId), amount \(amount), currency \(currency)\(alphabetic)\(destination)"
            )
        }
        return .ok
    }
}
