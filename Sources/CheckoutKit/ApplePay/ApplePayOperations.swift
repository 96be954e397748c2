import Crypto
import Foundation

/// `applepay.makeToken`: a fresh single-use test token in a file, for flows that play the phone's part.
public enum ApplePayOperations {
    /// - Parameters: the signing chain and recipient key the tokens are made with (the emulator's test PKI).
    public static func makeToken(signer: PaymentTokenSigner, recipient: P256PublicKey, merchantIdentifier: String) -> FlowOperation {
        FlowOperation(
            name: "applepay.makeToken",
            summary: "Make a single-use EC_v1 test token (for the emulator's keys) into a file.",
            parameters: [
                .init("amount", .integer, required: true, range: MinorUnits.range), .init("currency", .string, required: true),
                .init("out", .string, default: "a file in the run's scratch directory, removed when the run ends", help: "file to write"),
                .init("pan", .string, default: PaymentTokenMaker.testDPAN, help: "the device PAN inside the token"),
            ],
            outputs: [
                .init("path", "the token file (PKPaymentToken.paymentData)"), .init("transactionId", "the token's transaction id"),
                .init("amount", "minor units"), .init("currency", "ISO 4217 numeric code"),
            ]
        ) { (args: JSON, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            let amount = try MinorUnits.parse(args["amount"], currency: args["currency"]?.interpolationText)
            let currency = try CurrencyCode.numeric(args["currency"]?.interpolationText ?? "")
            let request = PaymentTokenRequest(amount: amount, currencyNumeric: currency, merchantIdentifier: merchantIdentifier,
                                              pan: args["pan"]?.interpolationText ?? PaymentTokenMaker.testDPAN)
            let made = try PaymentTokenMaker.make(request, recipient: recipient, signer: signer)
            let directory = context.services.scratchDirectory ?? FileManager.default.temporaryDirectory.path
            let path = args["out"]?.interpolationText ?? "\(directory)/token-\(made.transactionId.prefix(16)).json"
            try FileIO.write(made.bytes, to: path)
            if context.configuration.kind != .local {
                context.note("this token is signed by the emulator's test PKI: only the emulator accepts it")
            }
            return StepOutput(document: ["path": .string(path), "transactionId": .string(made.transactionId),
                                         "amount": .number(Double(amount)), "currency": .string(currency)])
        }
    }
}
