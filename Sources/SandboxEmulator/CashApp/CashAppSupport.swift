import Foundation
import LoopbackHTTP
import WireTypes

/// Afterpay's Money object; the decimal text itself is `DecimalAmount`'s (the wire types, shared with the driver).
enum AfterpayMoney {
    static func json(_ cents: Int, _ currency: String) -> JSON {
        ["amount": .string(DecimalAmount.text(cents)), "currency": .string(currency)]
    }
}

/// Timestamps in the two precisions the providers write: Afterpay's with nanoseconds, Cash App's with milliseconds.
enum CashAppTime {
    static func nanoseconds(_ date: Date) -> String { Timestamp.iso8601(date, fractionDigits: 9) }
    static func milliseconds(_ date: Date) -> String { Timestamp.iso8601(date, fractionDigits: 3) }
}

/// Afterpay's error shape, the same on v2 and api-plus: `{errorCode, errorId, message, httpStatusCode}`.
struct AfterpayFailure: Error {
    var status: Int
    var code: String
    var message: String

    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    var reply: HTTPReply {
        EmulatorResponse.json(
            status,
            [
                "errorCode": .string(code), "errorId": .string(CashAppRules.newErrorID()),
                "message": .string(message), "httpStatusCode": JSON(status),
            ])
    }

    static func invalidObject(_ message: String, status: Int = 422) -> AfterpayFailure {
        AfterpayFailure(status, "invalid_object", message)
    }
}

/// Cash App's error shape: `{"errors": [{category, code, detail, field?}]}`.
struct CashAppFailure: Error {
    var status: Int
    var category: String
    var code: String
    var detail: String
    var field: String?

    init(
        _ status: Int, category: String = "INVALID_REQUEST_ERROR", _ code: String, _ detail: String,
        field: String? = nil
    ) {
        self.status = status
        self.category = category
        self.code = code
        self.detail = detail
        self.field = field
    }

    var reply: HTTPReply {
        var error: JSON.Object = ["category": .string(category), "code": .string(code), "detail": .string(detail)]
        if let field { error["field"] = .string(field) }
        return EmulatorResponse.json(status, ["errors": [.object(error)]])
    }

    static func notFound(_ id: String) -> CashAppFailure {
        CashAppFailure(404, "NOT_FOUND", "No customer request \(id)")
    }
}

extension String {
    /// An absolute URL of any scheme: redirect targets may be an app's deep link ("shop://afterpay/confirm") as well
    /// as a web page.
    var isAbsoluteURL: Bool {
        guard let url = URL(string: self), let scheme = url.scheme, !scheme.isEmpty else { return false }
        return count > scheme.count + 1
    }
}
