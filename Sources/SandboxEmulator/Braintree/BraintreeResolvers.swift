import Foundation
import GraphQL
import WireTypes

/// One GraphQL request as the resolvers see it.
struct BraintreeCall: Sendable {
    let store: BraintreeStore
    let ledger: Ledger
    let baseURL: String

    static func from(_ info: ResolveInfo) throws(BraintreeFailure) -> BraintreeCall {
        guard let call = info.context as? BraintreeCall else {
            throw BraintreeFailure("internal: no Braintree call context", errorClass: "INTERNAL")
        }
        return call
    }
}

/// Why a Braintree field did not do what it was asked, in Braintree's error shape: `message`, and `extensions` with
/// `errorClass`, `legacyCode` and the `inputPath` of the input at fault.
struct BraintreeFailure: Error {
    var message: String
    var errorClass: String
    var legacyCode: String?
    var inputPath: [String]?

    init(_ message: String, errorClass: String = "VALIDATION", legacyCode: String? = nil, inputPath: [String]? = nil) {
        self.message = message
        self.errorClass = errorClass
        self.legacyCode = legacyCode
        self.inputPath = inputPath
    }

    static var notFound: BraintreeFailure {
        BraintreeFailure(
            BraintreeRules.notFoundMessage, errorClass: "NOT_FOUND", inputPath: ["input", "transactionId"])
    }

    var graphQLError: GraphQLError {
        var extensions: [(String, GraphQLValue)] = [("errorClass", .string(errorClass))]
        if let legacyCode { extensions.append(("legacyCode", .string(legacyCode))) }
        if let inputPath { extensions.append(("inputPath", .list(inputPath.map { .string($0) }))) }
        return GraphQLError(message, extensions: extensions)
    }
}

/// The fields of Braintree's schema the emulator implements: `ping`, the payment mutations, `createClientToken`,
/// transaction search by orderId and `node`. Every other field of Query, Mutation and Search answers a
/// NOT_IMPLEMENTED error (a document using it still validates); nested fields nobody fills in resolve to null.
enum BraintreeResolvers {
    static func make(schema: Schema) -> Resolvers {
        var r = Resolvers()
        for type in ["Query", "Mutation", "Search"] {
            for name in (schema[type]?.orderedFields ?? []).map(\.name) {
                r[type, name] = { _, _ in
                    throw BraintreeFailure(
                        "\(type).\(name) is not implemented by the emulator", errorClass: "NOT_IMPLEMENTED"
                    ).graphQLError
                }
            }
        }
        r["Query", "ping"] = { _, _ in "pong" }
        r["Query", "node"] = { _, info in try run { () throws(BraintreeFailure) in try node(info) } }
        r["Query", "search"] = { _, _ in GraphQLValue.object([]) }
        r["Search", "transactions"] = { _, info in
            try run { () throws(BraintreeFailure) in try searchTransactions(info) }
        }
        r["Mutation", "chargePaymentMethod"] = { _, info in
            try run { () throws(BraintreeFailure) in try BraintreePayments.transact(info, capture: true) }
        }
        r["Mutation", "authorizePaymentMethod"] = { _, info in
            try run { () throws(BraintreeFailure) in try BraintreePayments.transact(info, capture: false) }
        }
        r["Mutation", "captureTransaction"] = { _, info in
            try run { () throws(BraintreeFailure) in try BraintreePayments.capture(info) }
        }
        r["Mutation", "reverseTransaction"] = { _, info in
            try run { () throws(BraintreeFailure) in try BraintreePayments.reverse(info) }
        }
        r["Mutation", "createClientToken"] = { _, info in
            try run { () throws(BraintreeFailure) in try createClientToken(info) }
        }
        return r
    }

    /// A resolver body whose failure becomes the GraphQL error (with its extensions) the executor reports.
    private static func run(_ body: () throws(BraintreeFailure) -> GraphQLValue) throws -> Any? {
        do throws(BraintreeFailure) { return try body() } catch { throw error.graphQLError }
    }

    // MARK: Reading

    private static func node(_ info: ResolveInfo) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let id = info.arguments["id"]?.stringValue ?? ""
        // DECISION: only GraphQL ids here (a legacy id names no type); any other id is NOT_FOUND.
        guard let legacy = BraintreeRules.legacyID(fromGraphQLID: id, type: "transaction"),
            let transaction = call.store.withLock({ $0.transactions[legacy] })
        else {
            throw BraintreeFailure(BraintreeRules.notFoundMessage, errorClass: "NOT_FOUND", inputPath: ["id"])
        }
        return transactionValue(transaction)
    }

    /// `search { transactions(input: {orderId: {is: …}}) }`: newest first, paged by `first` and `after`.
    private static func searchTransactions(_ info: ResolveInfo) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let input = info.arguments["input"]?.objectValue ?? []
        if let other = input.first(where: { $0.0 != "orderId" && !$0.1.isNull }) {
            throw BraintreeFailure(
                "Searching transactions by \(other.0) is not supported by the emulator; search by orderId {is}",
                inputPath: ["input", other.0])
        }
        let criteria = info.arguments["input"]?["orderId"]?.objectValue ?? []
        guard let order = criteria.first(where: { $0.0 == "is" })?.1.stringValue,
            criteria.allSatisfy({ $0.0 == "is" || $0.1.isNull })
        else {
            throw BraintreeFailure(
                "The emulator searches transactions by orderId {is: …} only (not supported: other criteria)",
                inputPath: ["input", "orderId"])
        }
        let first = info.arguments["first"]?.intValue ?? BraintreeRules.defaultPageSize
        guard first >= 0 else { throw BraintreeFailure("first must not be negative", inputPath: ["first"]) }
        var found = call.store.withLock { $0.transactions(orderID: order) }
        found.sort { $0.sequence > $1.sequence }
        if let after = info.arguments["after"]?.stringValue {
            guard let index = found.firstIndex(where: { $0.id == after }) else {
                throw BraintreeFailure("The cursor \(after) is not one of this search's", inputPath: ["after"])
            }
            found.removeFirst(index + 1)
        }
        let page = Array(found.prefix(min(first, BraintreeRules.defaultPageSize)))
        return [
            "edges": .list(page.map { ["cursor": .string($0.id), "node": transactionValue($0)] }),
            "pageInfo": [
                "hasNextPage": .bool(found.count > page.count),
                "hasPreviousPage": .bool(info.arguments["after"]?.stringValue != nil),
                "startCursor": GraphQLValue(page.first?.id), "endCursor": GraphQLValue(page.last?.id),
            ],
        ]
    }

    // MARK: Client tokens

    /// A client token for the client API: base64 of JSON naming a fresh fingerprint (valid 24 h) and the configuration
    /// URL.
    private static func createClientToken(_ info: ResolveInfo) throws(BraintreeFailure) -> GraphQLValue {
        let call = try BraintreeCall.from(info)
        let options = info.arguments["input"]?["clientToken"]
        if let account = options?["merchantAccountId"]?.stringValue, account != BraintreeRules.merchantAccountID {
            throw BraintreeFailure(
                "Merchant account does not exist.", legacyCode: BraintreeRules.Code.clientTokenMerchantAccountMissing,
                inputPath: ["input", "clientToken", "merchantAccountId"])
        }
        // DECISION: the emulator keeps no customers (nothing is vaulted), so any customer id names nobody.
        if options?["customerId"]?.stringValue != nil {
            throw BraintreeFailure(
                "Customer specified by customer_id does not exist",
                legacyCode: BraintreeRules.Code.clientTokenCustomerMissing,
                inputPath: ["input", "clientToken", "customerId"])
        }
        let merchant = TestCredentials.braintreeMerchantID
        // The token is base64 of a JSON text, as the client SDKs decode it.
        let token: JSON = [
            "version": 2, "authorizationFingerprint": .string(call.store.issueFingerprint()),
            "environment": .string(BraintreeRules.environment),
            "configUrl": .string(call.baseURL + BraintreeRules.configurationPath(merchant)),
            "merchantId": .string(merchant),
        ]
        return [
            "clientMutationId": GraphQLValue(clientMutationID(info)),
            "clientToken": .string(token.data.base64EncodedString()),
        ]
    }

    static func clientMutationID(_ info: ResolveInfo) -> String? {
        info.arguments["input"]?["clientMutationId"]?.stringValue
    }

    // MARK: Values

    static func transactionValue(_ t: BraintreeStore.Transaction) -> GraphQLValue {
        [
            "__typename": "Transaction", "id": .string(t.id), "legacyId": .string(t.legacyID),
            "status": .string(t.status),
            "amount": money(t.amount), "orderId": GraphQLValue(t.orderID), "createdAt": .string(timestamp(t.createdAt)),
            "merchantAccountId": .string(t.merchantAccountID),
            "merchantId": .string(TestCredentials.braintreeMerchantID), "source": "API",
            "paymentMethodSnapshot": snapshot(t.card),
            // Braintree lists the most recent status first.
            "statusHistory": .list(t.history.reversed().map { event(t, $0) }),
            "processorResponse": processorResponse(t),
            "refunds": [], "disputes": [], "retried": false, "partiallyAuthorized": false,
        ]
    }

    static func processorResponse(_ t: BraintreeStore.Transaction) -> GraphQLValue {
        ["legacyCode": .string(t.processorResponseCode), "message": .string(t.processorResponseText)]
    }

    static func money(_ cents: Int) -> GraphQLValue {
        let currency = GraphQLValue.string(BraintreeRules.currency.alpha)
        return ["value": .string(DecimalAmount.text(cents)), "currencyCode": currency, "currencyIsoCode": currency]
    }

    /// The schema's `Timestamp`: "ISO 8601 … with microsecond precision, in UTC".
    static func timestamp(_ date: Date) -> String { Timestamp.iso8601(date, fractionDigits: 6) }

    /// `CreditCardDetails` of an Apple Pay card (the union member, named by `__typename`).
    static func snapshot(_ card: BraintreeRules.Card) -> GraphQLValue {
        [
            "__typename": "CreditCardDetails", "brandCode": .string(card.network.brandCode),
            "last4": .string(card.last4),
            "bin": .string(card.bin), "expirationMonth": .string(card.expirationMonth),
            "expirationYear": .string(card.expirationYear),
            "origin": [
                "type": "APPLE_PAY",
                "details": [
                    "__typename": "ApplePayOriginDetails", "paymentInstrumentName": GraphQLValue(card.instrumentName),
                    "bin": .string(card.bin),
                ],
            ],
        ]
    }

    private static func event(_ t: BraintreeStore.Transaction, _ e: BraintreeStore.Event) -> GraphQLValue {
        let typeName =
            switch e.status {
            case "AUTHORIZED": "AuthorizedEvent"
            case "SUBMITTED_FOR_SETTLEMENT": "SubmittedForSettlementEvent"
            case "VOIDED": "VoidedEvent"
            case "PROCESSOR_DECLINED": "ProcessorDeclinedEvent"
            case "GATEWAY_REJECTED": "GatewayRejectedEvent"
            default: "FailedEvent"
            }
        var value: [(String, GraphQLValue)] = [
            ("__typename", .string(typeName)), ("status", .string(e.status)), ("timestamp", .string(timestamp(e.at))),
            ("amount", money(e.amount)), ("source", "API"),
            ("terminal", .bool(e.status != "AUTHORIZED" && e.status != "SUBMITTED_FOR_SETTLEMENT")),
        ]
        if e.status != "SUBMITTED_FOR_SETTLEMENT" && e.status != "VOIDED" {
            value.append(("processorResponse", processorResponse(t)))
        }
        if e.status == "GATEWAY_REJECTED" {
            value.append(("gatewayRejectionReason", GraphQLValue(t.gatewayRejectionReason)))
        }
        return .object(value)
    }
}
