import Crypto
import Foundation

/// What Cash App commands keep in the state file so that separate invocations are one checkout: the checkout (or
/// button) token, the signing data, the customer request and its idempotency key, the approval, whether Afterpay
/// validated it, and the payment. One checkout at a time: a new `cashapp checkout` (or button) starts the section over.
///
/// Layout (`CashAppSection`, one typed decoder used by every reader):
/// `{"cashapp": {"flow": "server|button", "token", "amount": 1999, "currency": "USD", "singleUseCardToken",
///   "confirmBefore", "jwt", "brandId", "merchantId", "redirectUri", "signedAmount", "requestId", "requestKey",
///   "requestBody", "requestStatus", "customerId", "grantId", "validated", "orderId", "paymentState",
///   "authRequestId", "captureRequestId"}}`
/// The checkout token and the JWT are kept as they are (see `StateStore.sessionCredentialPaths`): the next command
/// must send them. They appear in no other output.
struct CashAppState: Sendable {
    let store: StateStore?

    static let root = JSONPath(components: [.key("cashapp")])
    /// The section as last decoded or written, by its very value (`DecodedSections`).
    private static let sections = DecodedSections<CashAppSection>()

    static let check: FlowOperation.StateCheck = { (document: JSON, file: String) throws(Diagnostic) in
        _ = try sections.decode(document["cashapp"], at: root, in: file)
    }

    func read() throws(Diagnostic) -> CashAppSection {
        guard let store else { return CashAppSection() }
        return try Self.sections.decode(try store.read()["cashapp"], at: Self.root, in: store.path)
    }

    func update(_ change: (inout CashAppSection) throws(Diagnostic) -> Void) throws(Diagnostic) {
        guard let store else { return }
        try store.update { (doc: inout JSON) throws(Diagnostic) in
            var section = try Self.sections.decode(doc["cashapp"], at: Self.root, in: store.path)
            try change(&section)
            doc = Self.sections.encode(section, at: Self.root, in: doc)
        }
    }

    /// The key for creating a customer request with `body`: the one kept for the same body (so a repeat after a lost
    /// answer gets the same request back), or a new one when the body changed (Cash App refuses a key with two
    /// bodies). Recorded before the request goes out, so even a crash mid-request leaves it for the retry.
    func requestKey(for body: JSON) throws(Diagnostic) -> String {
        let digest = Digest.sha256(body.data).map { String(format: "%02x", $0) }.joined()
        var key = ""
        try update { section in
            if let kept = section.requestKey, section.requestBody == digest {
                key = kept
            } else {
                key = UUID.random().uuidString.lowercased()
                section.requestKey = key
                section.requestBody = digest
                section.requestID = nil
                section.requestStatus = nil
                section.customerID = nil
                section.grantID = nil
                section.validated = false
            }
        }
        return key
    }
}

/// The `cashapp` section, typed. Unknown members (from a newer version) are kept as they are.
struct CashAppSection: StateSection {
    enum FlowKind: String, Sendable { case server, button }

    var flow: FlowKind?
    var token: String?
    var amount: Int?
    var currency: String?
    var singleUseCardToken: String?
    var confirmBefore: String?
    var jwt: String?
    var brandID: String?
    var merchantID: String?
    var redirectURI: String?
    var signedAmount: Int?
    var requestID: String?
    var requestKey: String?
    var requestBody: String?
    var requestStatus: String?
    var customerID: String?
    var grantID: String?
    var validated = false
    var orderID: String?
    var paymentState: String?
    var authRequestID: String?
    var captureRequestID: String?
    var unknown: JSON.Object = [:]

    init() {}

    /// A new checkout: everything of the previous one goes.
    init(flow: FlowKind, token: String, amount: Int, currency: String) {
        self.flow = flow
        self.token = token
        self.amount = amount
        self.currency = currency
    }

    private static var strings: [(String, WritableKeyPath<CashAppSection, String?>)] {
        [
            ("token", \.token), ("currency", \.currency), ("singleUseCardToken", \.singleUseCardToken),
            ("confirmBefore", \.confirmBefore), ("jwt", \.jwt), ("brandId", \.brandID), ("merchantId", \.merchantID),
            ("redirectUri", \.redirectURI), ("requestId", \.requestID), ("requestKey", \.requestKey),
            ("requestBody", \.requestBody), ("requestStatus", \.requestStatus), ("customerId", \.customerID),
            ("grantId", \.grantID), ("orderId", \.orderID), ("paymentState", \.paymentState),
            ("authRequestId", \.authRequestID), ("captureRequestId", \.captureRequestID),
        ]
    }

    private static var ints: [(String, WritableKeyPath<CashAppSection, Int?>)] {
        [("amount", \.amount), ("signedAmount", \.signedAmount)]
    }

    init(_ field: StateField) throws(Diagnostic) {
        _ = try field.members()  // the section is an object
        for (key, path) in Self.strings { self[keyPath: path] = try field[key].string() }
        for (key, path) in Self.ints { self[keyPath: path] = try field[key].int() }
        if let flow = try field["flow"].string() {
            guard let kind = FlowKind(rawValue: flow) else { throw field["flow"].wrong("\"server\" or \"button\"") }
            self.flow = kind
        }
        validated = try field["validated"].bool() ?? false
        unknown = field.unknownMembers(besides: Self.strings.map(\.0) + Self.ints.map(\.0) + ["flow", "validated"])
    }

    var json: JSON {
        var o = unknown
        for (key, path) in Self.strings { o[key] = self[keyPath: path].map(JSON.string) }
        for (key, path) in Self.ints { o[key] = self[keyPath: path].map { .number(JSON.Number($0)) } }
        o["flow"] = flow.map { .string($0.rawValue) }
        o["validated"] = validated ? .bool(true) : nil
        return .object(o)
    }
}
