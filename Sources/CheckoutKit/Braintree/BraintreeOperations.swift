import Foundation

/// The Braintree operations a flow step can `use`: the client half of Apple Pay (configuration, tokenization into a
/// single-use nonce) and the server half (charge, or authorize and later capture; void), plus ping and client tokens.
/// Charge, authorize and capture move money and have no idempotency key: never repeated once they may have reached
/// Braintree; a lost answer is read back (a transaction search by the orderId the driver always sets).
public enum BraintreeOperations {
    public static var all: [FlowOperation] {
        [config, tokenize, charge, authorize, capture, void, ping, clientToken, transaction]
    }

    /// `braintree.config`'s arguments: what the payment request will say, checked against the gateway's settings.
    public struct Config: OperationArguments {
        public var clientToken: String?
        /// As the step wrote it: only compared with the gateway's code, never read as a currency.
        public var currency: String?
        public var network: String?

        public init() {}

        public static let arguments: [Argument<Config>] = [
            .string(
                "clientToken", \.clientToken,
                help: "authorise with a client token instead of BRAINTREE_TOKENIZATION_KEY"),
            .string("currency", \.currency, help: "the payment request's currency, checked against the gateway's"),
            .string("network", \.network, help: "the card network of the payment, checked against supportedNetworks"),
        ]
    }

    public static let config = FlowOperation(
        name: "braintree.config",
        summary: "Read the gateway's Apple Pay configuration; warn when the payment request disagrees with it.",
        arguments: Config.self,
        requiredConfiguration: ["BRAINTREE_CLIENT_API_URL"],
        outputs: [
            .init("configuration", "the gateway's client configuration"),
            .init("summary.clientApiUrl", "where tokenize sends the token"),
            .init("summary.merchantIdentifier", "the Apple Pay merchant identifier"),
            .init("summary.currencyCode", "the gateway's currency"),
            .init("summary.countryCode", "the gateway's country"),
            .init("summary.supportedNetworks", "the card networks it takes"),
            .init("summary.environment", "sandbox or production"),
        ]
    ) { (args: Config, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = BraintreeClient(context)
        let configuration = try await client.configuration(try client.authorization(clientToken: args.clientToken))
        let applePay = configuration["applePay"] ?? .null
        let status = applePay["status"]?.stringValue ?? "off"
        guard status != "off" else {
            throw .configuration(
                "Apple Pay is off for this Braintree merchant (applePay.status is \"off\")",
                hint: "enable Apple Pay in the Control Panel (Settings → Processing → Apple Pay)")
        }
        // The integration guide: keep the PKPaymentRequest in sync with the gateway's settings
        // (docs/protocols/braintree.md).
        if let currency = args.currency?.uppercased(), let gateway = applePay["currencyCode"]?.stringValue,
            currency != gateway.uppercased()
        {
            context.note(
                "warning: the payment request's currency \(currency) is not the gateway's \(gateway); the merchant account settles in \(gateway)"
            )
        }
        let networks = (applePay["supportedNetworks"]?.arrayValue ?? []).compactMap(\.stringValue)
        if let network = args.network, !networks.isEmpty,
            !networks.contains(where: { $0.lowercased() == network.lowercased() })
        {
            context.note(
                "warning: \(network) is not among the gateway's supported networks (\(networks.joined(separator: ", ")))"
            )
        }
        let summary: JSON = [
            "status": .string(status), "countryCode": applePay["countryCode"] ?? .null,
            "currencyCode": applePay["currencyCode"] ?? .null,
            "merchantIdentifier": applePay["merchantIdentifier"] ?? .null,
            "supportedNetworks": .array(networks.map(JSON.string)),
            "environment": configuration["environment"] ?? .null,
            "clientApiUrl": configuration["clientApiUrl"] ?? .null,
        ]
        return StepOutput(document: ["configuration": configuration, "summary": summary], status: 200)
    }

    /// `braintree.tokenize`'s arguments.
    public struct Tokenize: OperationArguments {
        public var tokenFile = ""  // required: read before the body runs
        /// Nil: the one the gateway's configuration names.
        public var clientAPIURL: String?
        public var clientToken: String?
        public var paymentInstrumentName = "Apple Pay"
        public var paymentNetwork = "Visa"

        public init() {}

        public static let arguments: [Argument<Tokenize>] = [
            .string(
                "tokenFile", \.tokenFile, input: .paymentToken,
                help: "PKPaymentToken.paymentData, exactly as PassKit produced it"),
            .string(
                "clientApiUrl", \.clientAPIURL, default: "BRAINTREE_CLIENT_API_URL's merchant path",
                help: "from braintree.config"),
            .string("clientToken", \.clientToken),
            .string("paymentInstrumentName", \.paymentInstrumentName, default: "Apple Pay"),
            .string("paymentNetwork", \.paymentNetwork, default: "Visa"),
        ]
    }

    public static let tokenize = FlowOperation(
        name: "braintree.tokenize",
        summary: "Tokenize an Apple Pay token into a single-use nonce (the file's exact bytes, base64).",
        arguments: Tokenize.self,
        requiredConfiguration: ["BRAINTREE_CLIENT_API_URL"],
        outputs: [
            .init("nonce", "the single-use nonce (a secret: shown masked)"),
            .init("card", "the tokenized card as Braintree returned it"),
            .init("summary.cardType", "e.g. Apple Pay - Visa"),
        ]
    ) { (args: Tokenize, context: OperationContext) async throws(Diagnostic) -> StepOutput in
        let client = BraintreeClient(context)
        // Read and check the token before anything is sent: a bad file must cost nothing.
        let token = try PaymentTokenFile.read(
            path: args.tokenFile, redactor: context.redactor, files: context.services.madeFiles)
        // A token pays once, whichever provider it went to: refused here, before anything is sent.
        try context.refuseIfSpent(token.transactionId, kind: "Apple Pay token", fix: PaymentTokenFile.freshTokenHint)
        let auth = try client.authorization(clientToken: args.clientToken)
        var clientAPIURL = args.clientAPIURL
        if clientAPIURL == nil {
            clientAPIURL = try await client.configuration(auth)["clientApiUrl"]?.stringValue
        }
        guard let clientAPIURL else {
            throw .failure(
                "Braintree's configuration has no clientApiUrl",
                hint: "check BRAINTREE_CLIENT_API_URL (see the answer with -v)")
        }
        let card = try await client.tokenize(
            token, clientAPIURL: clientAPIURL, auth: auth,
            instrumentName: args.paymentInstrumentName, network: args.paymentNetwork)
        try context.markSpent(token.transactionId, kind: "Apple Pay token", by: "Braintree's tokenization")
        return StepOutput(
            document: [
                "card": card, "nonce": card["nonce"] ?? .null,
                "summary": ["cardType": card["details"]?["cardType"] ?? .null],
            ], status: 201)
    }

    /// Braintree takes no currency with a transaction (the merchant account has one): it says how the amount is read.
    static let currencyHelp = "the merchant account's currency (ISO 4217): how the amount is read and written"

    /// `Amount` as the schema takes it: "a whole number or a number with exactly two or three decimal places", which
    /// the currency's digits give (12 in JPY, 12.00 in USD, 12.000 in KWD). `currency` is the text the step gave (or
    /// USD), which the amount's reading has checked.
    static func wireAmount(_ minor: Int, currency: String) throws(Diagnostic) -> String {
        try Currency.parse(currency).decimal(minor)
    }

    /// `braintree.charge`'s and `braintree.authorize`'s arguments.
    public struct Transact: OperationArguments {
        /// Which outcome the step is for.
        public enum Expectation: String, CaseIterable, Sendable {
            case accepted, declined
        }

        public var nonce = ""  // required: read before the body runs
        public var amount = 0  // minor units; required: read before the body runs
        /// As the step wrote it: the money movement records it so.
        public var currency = "USD"
        /// Nil: the driver makes one.
        public var orderID: String?
        public var merchantAccountID: String?
        public var expect = Expectation.accepted

        public init() {}

        public static let arguments: [Argument<Transact>] = [
            .string("nonce", \.nonce, help: "a nonce from tokenize, or a sandbox fake nonce"),
            // Braintree's `Amount` is a decimal in the merchant account's currency, so an amount is read in major
            // units.
            .amount(
                "amount", \.amount, .majorUnits, currency: "currency", defaultCurrency: "USD",
                help: "in the merchant account currency's major units: 10.00, or 10 for 10.00 in USD"),
            .string("currency", \.currency, default: "USD", help: currencyHelp),
            .string(
                "orderId", \.orderID, default: "a new one",
                help: "the driver always sets one, to find the transaction again"),
            .string("merchantAccountId", \.merchantAccountID),
            .choice(
                "expect", \.expect, default: "accepted",
                help: "accepted, or declined: the step passes when Braintree refuses it"),
        ]
    }

    /// What a step outputs that answers with a transaction.
    static let transactionOutputs: [FlowOperation.Output] = [
        .init("transaction", "the transaction as Braintree returned it"), .init("summary.id", "its global id"),
        .init("summary.legacyId", "its legacy id"),
        .init("summary.status", "AUTHORIZED, SUBMITTED_FOR_SETTLEMENT, SETTLED, VOIDED, …"),
        .init("summary.amount", "a decimal string"), .init("summary.currency", "ISO 4217 code"),
        .init("summary.orderId", "the order id it was sent with"), .init("summary.cardType", "the card brand (VISA)"),
        .init("summary.last4", "the card's last 4"), .init("summary.origin", "APPLE_PAY"),
    ]

    public static let charge = transact(
        name: "braintree.charge", summary: "Charge the nonce (chargePaymentMethod): SUBMITTED_FOR_SETTLEMENT.",
        document: BraintreeDocuments.charge, field: "chargePaymentMethod", action: "charge")
    public static let authorize = transact(
        name: "braintree.authorize", summary: "Authorize the nonce (authorizePaymentMethod); capture later.",
        document: BraintreeDocuments.authorize, field: "authorizePaymentMethod", action: "authorize")

    private static func transact(
        name: String, summary: String, document: GraphQLDocument, field: String, action: String
    ) -> FlowOperation {
        FlowOperation(
            name: name, summary: summary, arguments: Transact.self,
            requiredConfiguration: BraintreeClient.serverConfiguration,
            outputs: transactionOutputs.map { .init($0.path, $0.help, when: "accepted") }
                + [
                    .init("refused", "the processor's refusal", when: "declined"),
                    .init("orderId", "the order id it was sent with", when: "declined"),
                ]
        ) { (args: Transact, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            let client = BraintreeClient(context)
            let nonce = args.nonce
            context.redactor.register(nonce)
            // A nonce is single-use; the sandbox's fixed fake nonces (`fake-…`) are the exception Braintree documents.
            let singleUse = !nonce.hasPrefix(BraintreeProtocol.fakeNoncePrefix)
            if singleUse {
                try context.refuseIfSpent(
                    nonce, kind: "Braintree nonce",
                    fix:
                        "tokenize a fresh Apple Pay token: `checkout-driver braintree apple-pay --token-file FILE --amount …`"
                )
            }
            // Checked before anything is sent (the engine checks every amount argument), written as the schema takes
            // it.
            let amount = try wireAmount(args.amount, currency: args.currency)
            let orderID = args.orderID ?? BraintreeProtocol.newOrderID()
            let expectDecline = args.expect == .declined
            var transaction: JSON.Object = ["amount": .string(amount), "orderId": .string(orderID)]
            transaction["merchantAccountId"] = args.merchantAccountID.map(JSON.string)
            let input: JSON = ["paymentMethodId": .string(nonce), "transaction": .object(transaction)]
            // A reused order id may already hold transactions (an earlier decline of the same amount, say): the ones
            // there before this call are never taken for its own.
            var prior: Set<String>? = []
            if args.orderID != nil {
                prior = await context.enrichment("the transactions order \(orderID) already has") {
                    () async throws(Diagnostic) -> Set<String> in
                    Set(
                        try await BraintreeReadBack.search(orderID, client: client).compactMap { $0["id"]?.stringValue }
                    )
                }
            }
            let asked = MoneyMovement(
                provider: "braintree", kind: action == "charge" ? .charge : .authorization, outcome: .unknown,
                amount: args.amount, currency: args.currency, reference: "order \(orderID)")
            var readBack = BraintreeReadBack.byOrder(
                orderID, amount: amount, action: action, prior: prior, asked: asked, client: client)
            if singleUse { readBack.spends = [SpentCredentials.key("Braintree nonce", nonce)] }
            let output = try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.graphQL(document, ["input": input])
                // A refused transaction used the nonce up as much as an accepted one: it is single-use whatever came of
                // it.
                if singleUse && BraintreeClient.isRefusal(response) {
                    try context.markSpent(
                        nonce, kind: "Braintree nonce", by: "\(action) of order \(orderID), which Braintree refused")
                }
                // A refusal Braintree stated (the processor's or the gateway's codes) is what an `expect: declined`
                // step is for; any other error still fails it.
                if expectDecline && BraintreeClient.isRefusal(response) {
                    let message = response.errors.map(\.message).joined(separator: "; ")
                    context.note("refused as expected: \(message)")
                    return StepOutput(document: ["refused": .string(message), "orderId": .string(orderID)])
                }
                let payload = try BraintreeClient.payload(response, field, what: action, movesMoney: true)
                var accepted = try outcome(payload["transaction"] ?? .null, action: action, orderID: orderID)
                // masked in every output
                accepted.document = JSONPath(components: [.key("nonce")]).setting(.string(nonce), in: accepted.document)
                return accepted
            }
            if singleUse && output.document["refused"] == nil {
                try context.markSpent(nonce, kind: "Braintree nonce", by: "\(action) of order \(orderID)")
            }
            if expectDecline && output.document["refused"] == nil {
                throw .failure(
                    "Braintree accepted the \(action), but this step expected a refusal",
                    hint: "the sandbox declines 2000.00–2999.99, fails 3000.00–3000.99 and rejects 5001.00")
            }
            return output
        }
    }

    /// A transaction in an answer: accepted when its status shows the action went through (`accepted`), else exit 1
    /// naming its status — a refusal, or a status that neither holds nor took the money (`AUTHORIZATION_EXPIRED`, a
    /// capture answered still `AUTHORIZED`). The answer is clear either way: there is nothing to read back.
    static func outcome(
        _ transaction: JSON, action: String, orderID: String?,
        accepted: Set<String> = BraintreeProtocol.acceptedStatuses
    ) throws(Diagnostic) -> StepOutput {
        let status = transaction["status"]?.stringValue ?? "?"
        let id = transaction["id"]?.stringValue ?? "?"
        if BraintreeProtocol.refusedStatuses.contains(status) { throw refusal(transaction, action: action) }
        guard accepted.contains(status) else {
            throw .failure(
                "Braintree answered the \(action) with transaction \(id) in status \(status), which does not show that it went through",
                hint: "read it with `checkout-driver braintree transaction \(id)`")
        }
        return StepOutput(document: ["transaction": transaction, "summary": summary(transaction)], status: 200)
    }

    /// A transaction the processor or the gateway refused, as the failure it is (in an answer and on a read-back
    /// alike).
    static func refusal(_ transaction: JSON, action: String) -> Diagnostic {
        .failure(
            "Braintree refused the \(action): transaction \(transaction["id"]?.stringValue ?? "?") is \(transaction["status"]?.stringValue ?? "?")\(processorSays(transaction))",
            hint: "nothing was charged; try another card")
    }

    /// The processor's own words on a transaction, as Braintree reports them: " (processor 2000: Do Not Honor)".
    static func processorSays(_ transaction: JSON) -> String {
        guard let response = transaction["processorResponse"], let message = response["message"]?.stringValue else {
            return ""
        }
        return " (processor \(response["legacyCode"]?.stringValue.map { "\($0): " } ?? "")\(message))"
    }

    static func summary(_ transaction: JSON) -> JSON {
        let snapshot = transaction["paymentMethodSnapshot"]
        let card = snapshot?["creditCard"] ?? snapshot
        return [
            "id": transaction["id"] ?? .null, "legacyId": transaction["legacyId"] ?? .null,
            "status": transaction["status"] ?? .null,
            "amount": transaction["amount"]?["value"] ?? .null,
            "currency": transaction["amount"]?["currencyCode"] ?? .null,
            "orderId": transaction["orderId"] ?? .null, "cardType": card?["brandCode"] ?? .null,
            "last4": card?["last4"] ?? .null,
            "origin": card?["origin"]?["type"] ?? .null,
        ]
    }

    /// The arguments of the operations on a transaction already made (`braintree.capture`, `braintree.void`).
    protocol TransactionActionArguments: OperationArguments {
        /// Its id.
        var transaction: String { get }
        /// Minor units of a partial capture; nil: the whole of it.
        var amount: Int? { get }
        /// As the step wrote it; nil when left out (an amount is then read in USD).
        var currency: String? { get }
    }

    /// `braintree.capture`'s arguments.
    public struct Capture: TransactionActionArguments {
        public var transaction = ""  // required: read before the body runs
        public var amount: Int?
        public var currency: String?

        public init() {}

        public static let arguments: [Argument<Capture>] = [
            .string("transaction", \.transaction, help: "the transaction id"),
            .amount(
                "amount", \.amount, .majorUnits, currency: "currency", defaultCurrency: "USD",
                help: "less than authorized: a partial capture, in the currency's major units"),
            .string("currency", \.currency, default: "USD", help: currencyHelp),
        ]
    }

    /// `braintree.void`'s arguments (not named `Void`, which would hide Swift's): a void takes the whole transaction.
    public struct VoidTransaction: TransactionActionArguments {
        public var transaction = ""  // required: read before the body runs
        public var amount: Int? { nil }
        public var currency: String? { nil }

        public init() {}

        public static let arguments: [Argument<VoidTransaction>] = [
            .string("transaction", \.transaction, help: "the transaction id")
        ]
    }

    public static let capture = transactionAction(
        name: "braintree.capture", summary: "Capture an authorized transaction (captureTransaction).",
        arguments: Capture.self, document: BraintreeDocuments.capture, field: "captureTransaction",
        action: "capture", done: BraintreeProtocol.capturedStatuses)
    public static let void = transactionAction(
        name: "braintree.void", summary: "Void an authorized or submitted transaction (reverseTransaction).",
        arguments: VoidTransaction.self, document: BraintreeDocuments.void, field: "reverseTransaction",
        action: "void", done: BraintreeProtocol.voidedStatuses)

    private static func transactionAction<Arguments: TransactionActionArguments>(
        name: String, summary: String, arguments: Arguments.Type, document: GraphQLDocument, field: String,
        action: String, done: Set<String>
    ) -> FlowOperation {
        FlowOperation(
            name: name, summary: summary, arguments: Arguments.self,
            requiredConfiguration: BraintreeClient.serverConfiguration,
            outputs: transactionOutputs
        ) { (args: Arguments, context: OperationContext) async throws(Diagnostic) -> StepOutput in
            let client = BraintreeClient(context)
            let id = args.transaction
            // A transaction captures once: a second capture this state file would send is refused before sending, as
            // the gateway would refuse it (and Cash App's capture is).
            if action == "capture" {
                try context.refuseIfSpent(
                    id, kind: BraintreeProtocol.capturedKind,
                    fix:
                        "it is captured: see it with `checkout-driver braintree transaction \(id)`; a new payment starts with `checkout-driver braintree apple-pay`"
                )
            }
            var input: JSON.Object = ["transactionId": .string(id)]
            if let minor = args.amount {
                input["transaction"] = ["amount": .string(try wireAmount(minor, currency: args.currency ?? "USD"))]
            }
            let asked = MoneyMovement(
                provider: "braintree", kind: action == "capture" ? .capture : .void, outcome: .unknown,
                amount: args.amount, currency: args.currency, reference: "transaction \(id)")
            var readBack = BraintreeReadBack.byID(id, action: action, done: done, asked: asked, client: client)
            if action == "capture" { readBack.spends = [SpentCredentials.key(BraintreeProtocol.capturedKind, id)] }
            let output = try await context.reconciling(readBack) { () async throws(Diagnostic) -> StepOutput in
                let response = try await client.graphQL(document, ["input": .object(input)])
                let payload = try BraintreeClient.payload(response, field, what: "\(action) \(id)", movesMoney: true)
                let transaction = payload["transaction"] ?? payload["reversal"] ?? .null
                if transaction["__typename"] == "Refund" {
                    // A settled transaction cannot be voided: Braintree refunded it instead.
                    context.note(
                        "\(id) was already settled, so Braintree refunded it (refund \(transaction["id"]?.stringValue ?? "?")) instead of voiding it"
                    )
                    return StepOutput(
                        document: ["refund": transaction, "summary": BraintreeOperations.summary(transaction)],
                        status: 200)
                }
                return try outcome(transaction, action: action, orderID: nil, accepted: done)
            }
            if action == "capture" {
                let status = output.document["summary"]?["status"]?.stringValue ?? "captured"
                try context.markSpent(id, kind: BraintreeProtocol.capturedKind, by: "its capture (\(status))")
            }
            return output
        }
    }
}
