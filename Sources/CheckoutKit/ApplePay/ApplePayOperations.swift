import Crypto
import Foundation

/// `applepay.makeToken`: a fresh single-use test token in a file, for flows that play the phone's part.
public enum ApplePayOperations {
    /// `applepay.makeToken`'s arguments.
    public struct MakeToken: OperationArguments {
        public var amount: Int?
        public var total: Int?
        public var currency: Currency = .usd  // required: read before the body runs
        public var out: String?
        public var pan = PaymentTokenMaker.testDPAN

        public init() {}

        public static let arguments: [Argument<MakeToken>] = [
            // The token's amount as it carries it (`transactionAmount`): minor units, or a decimal in major units.
            .amount(
                "amount", \.amount, .minorUnits, currency: "currency",
                help:
                    "the token's transactionAmount: digits are minor units (8000), a decimal is major units (80.00 USD); give this or total"
            ),
            // The same amount as the Apple Pay sheet shows it (PKPaymentSummaryItem's amount): always major units, so
            // that a flow whose API takes decimals (Braintree) gives the token and the charge one variable.
            .amount(
                "total", \.total, .majorUnits, currency: "currency",
                help:
                    "the sheet's total in the currency's major units: 12 and 12.00 are 1200 in USD; give this or amount"
            ),
            .currency("currency", \.currency, help: "ISO 4217, alphabetic (USD) or numeric (840)"),
            .string(
                "out", \.out, default: "a file in the run's scratch directory, removed when the run ends",
                help: "file to write"),
            .string("pan", \.pan, default: PaymentTokenMaker.testDPAN, help: "the device PAN inside the token"),
        ]
    }

    /// What a token is made with: the signing chain, and the key of the payment processor it is encrypted to.
    public typealias TokenKeys = (signer: PaymentTokenSigner, recipient: P256PublicKey)

    /// The name `makeToken` is registered under: a flow's steps name it so.
    static let makeTokenName = "applepay.makeToken"

    /// - Parameters: the signing chain and recipient key the tokens are made with (the emulator's test PKI).
    ///   `keys` is asked at each token, so that a process that makes none never parses them (the caller keeps them).
    public static func makeToken(
        keys: @escaping @Sendable () throws(Diagnostic) -> TokenKeys,
        merchantIdentifier: String
    ) -> FlowOperation {
        FlowOperation(
            name: makeTokenName,
            summary: "Make a single-use EC_v1 test token (for the emulator's keys) into a file.",
            arguments: MakeToken.self,
            alternatives: [["amount", "total"]],
            outputs: [
                .init("path", "the token file (PKPaymentToken.paymentData)"),
                .init("transactionId", "the token's transaction id"),
                .init("amount", "minor units"), .init("currency", "ISO 4217 numeric code"),
            ]
        ) { (args: MakeToken, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            let currency = args.currency
            // Exactly one of the two is given (`alternatives`, checked when the flow is read).
            let minor = args.amount ?? args.total ?? 0
            let request = PaymentTokenRequest(
                amount: minor, currencyNumeric: currency.numeric, merchantIdentifier: merchantIdentifier,
                pan: args.pan)
            let (signer, recipient) = try keys()
            let made = try PaymentTokenMaker.make(request, recipient: recipient, signer: signer)
            let path: String
            if let out = args.out {
                path = out
                try FileIO.write(made.bytes, to: out)
            } else if let scratch = context.services.scratchDirectory {
                // The run's own: the operations that read it take it from memory (`MadeFiles`), never from the disk.
                path = "\(scratch)/token-\(made.transactionId.prefix(16)).json"
                context.services.madeFiles.keep(made.bytes, at: path)
            } else {
                path = "\(FileIO.temporaryDirectory)/token-\(made.transactionId.prefix(16)).json"
                try FileIO.write(made.bytes, to: path)
            }
            if context.configuration.kind != .local {
                context.note("this token is signed by the emulator's test PKI: only the emulator accepts it")
            }
            return StepOutput(document: [
                "path": .string(path), "transactionId": .string(made.transactionId),
                "amount": .number(minor), "currency": .string(currency.numeric),
            ])
        }
    }
}
