import Foundation
import Testing

@testable import CheckoutKit

/// The one rule set a replay's requests are matched by: secrets and volatile parts match their shape, the rest exactly.
@Suite struct ReplayMatchTests {
    static func exchange(
        _ method: String = "POST", _ url: String = "http://127.0.0.1:4000/api/x", body: String?,
        contentType: String? = "application/json"
    ) -> Recording.Exchange {
        Recording.Exchange(
            step: "s", attempt: 1, method: method, url: url, contentType: contentType, body: body,
            answer: .success(HTTPClientResponse(status: 200)))
    }

    static func request(
        _ method: String = "POST", _ url: String = "http://127.0.0.1:5000/api/x", body: String?,
        contentType: String = "application/json"
    ) -> HTTPClientRequest {
        HTTPClientRequest(
            method: method, url: url, headers: ["Content-Type": contentType], body: body.map { Data($0.utf8) })
    }

    static func differences(_ recorded: String, _ sent: String, contentType: String = "application/json") -> [String] {
        ReplayMatch.differences(
            exchange(body: recorded, contentType: contentType), request(body: sent, contentType: contentType),
            redactor: Redactor())
    }

    @Test func volatilePartsMatchAnyValueOfTheirShape() {
        let pairs: [(String, String)] = [
            ("Order #9e4cb224-380f-444b-86e7-5cdb1c187608", "Order #0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"),
            ("at 2026-12-02T09:58:28.553Z", "at 2027-01-01T00:00:00Z"),
            ("at 2026-12-02T09:58:28+01:00", "at 2026-12-03T10:00:00-05:00"),
            ("http://127.0.0.1:46373/return", "http://127.0.0.1:1/return"),
            ("id pi_01M8V31V3TFD08E9A60RMKCFXX", "id pi_01M8V8Y528QXGZMK1JHM2FVGNS"),
            ("http://h/checkout/[REDACTED]", "http://h/checkout/anything-at-all"),
            ("[REDACTED]", "whatever"),
            ("a [REDACTED] b [REDACTED]", "a x b y"),
        ]
        for (recorded, sent) in pairs { #expect(ReplayMatch.matches(recorded, sent), "\(recorded) ~ \(sent)") }
    }

    @Test func everythingElseMustBeEqual() {
        let pairs: [(String, String)] = [
            ("1002-M", "1003-M"),
            ("10.00", "10.50"),
            ("SEK", "NOK"),
            ("http://h/checkout/[REDACTED]", "http://h/cart/x"),
            ("a [REDACTED] b", "a x c"),
            // An id's shape needs a letter and a digit and 16 characters: words and short ids are compared.
            ("CentraPaymentInstructions", "CentraPaymentResultsNow"),
            ("line_1", "line_2"),
            ("http://127.0.0.1:46373/return", "http://127.0.0.1:46373/failed"),
        ]
        for (recorded, sent) in pairs { #expect(!ReplayMatch.matches(recorded, sent), "\(recorded) !~ \(sent)") }
    }

    @Test func bodiesDifferPathByPath() {
        #expect(
            Self.differences(#"{"amount": 8000, "currency": "704"}"#, #"{"amount": 8000, "currency": "704"}"#).isEmpty)
        #expect(Self.differences(#"{"amount": 8000}"#, #"{"amount": 9000}"#) == ["$.amount: recorded 8000, sent 9000"])
        #expect(
            Self.differences(#"{"a": {"b": [1, 2]}}"#, #"{"a": {"b": [1]}, "c": true}"#)
                == ["$.a.b[1]: recorded 2, not sent", "$.c: sent true, not in the recording"])
        #expect(
            Self.differences(#"{"variables": {"q": 1}}"#, #"{"variables": {"q": "1"}}"#) == [
                #"$.variables.q: recorded 1, sent "1""#
            ])
        #expect(Self.differences(#"{"odd key": 1}"#, #"{"odd key": 2}"#) == [#"$["odd key"]: recorded 1, sent 2"#])
        // A secret the recording masked is never compared, whatever its type now.
        #expect(Self.differences(#"{"token": "[REDACTED]"}"#, #"{"token": {"data": 1}}"#).isEmpty)
        // A long string is shown around where it first differs.
        let long = String(repeating: "query { a } ", count: 10)
        let diff = Self.differences(#"{"query": "\#(long)x"}"#, #"{"query": "\#(long)y"}"#)
        #expect(
            diff.count == 1 && diff[0].hasPrefix("$.query: differs at character 121: recorded …\"")
                && diff[0].contains("x\", sent …\""), "\(diff)")
    }

    @Test func aJWSIsComparedByHeaderAndPayload() {
        let redactor = Redactor()
        func jws(_ payload: String) -> String {
            Data(#"{"alg":"ES256","kid":"k-1"}"#.utf8).base64URLEncodedString() + "."
                + Data(payload.utf8).base64URLEncodedString() + ".c2lnbmF0dXJl"
        }
        let recorded = redactor.body(Data(jws(#"{"amount":8000}"#).utf8), contentType: "application/jose")
        #expect(recorded.hasPrefix("JWS {") && recorded.hasSuffix(".[REDACTED]"), "\(recorded)")
        #expect(Self.differences(recorded, jws(#"{"amount":8000}"#), contentType: "application/jose").isEmpty)
        #expect(
            Self.differences(recorded, jws(#"{"amount":9000}"#), contentType: "application/jose") == [
                "$.payload.amount: recorded 8000, sent 9000"
            ])
    }

    @Test func aFormIsComparedByField() {
        #expect(Self.differences("a=1&b=2", "b=2&a=1", contentType: "application/x-www-form-urlencoded").isEmpty)
        #expect(
            Self.differences("a=1&b=2", "a=1&b=3", contentType: "application/x-www-form-urlencoded") == [
                #"$.b: recorded "2", sent "3""#
            ])
    }

    @Test func methodPathQueryAndMediaTypeAreCompared() {
        let redactor = Redactor()
        let recorded = Self.exchange("GET", "http://127.0.0.1:4000/api/orders/ord_1?expand=lines", body: nil)
        #expect(
            ReplayMatch.differences(
                recorded, Self.request("GET", "https://other.example/api/orders/ord_1?expand=lines", body: nil),
                redactor: redactor
            ).isEmpty,
            "the host is not compared")
        #expect(
            ReplayMatch.differences(
                recorded, Self.request("POST", "http://h/api/orders/ord_1?expand=lines", body: nil), redactor: redactor)
                == ["method: recorded GET, sent POST"])
        #expect(
            ReplayMatch.differences(
                recorded, Self.request("GET", "http://h/api/orders/ord_2?expand=lines", body: nil), redactor: redactor)
                == ["path: recorded /api/orders/ord_1, sent /api/orders/ord_2"])
        #expect(
            ReplayMatch.differences(
                recorded, Self.request("GET", "http://h/api/orders/ord_1?expand=none", body: nil), redactor: redactor)
                == [#"query.expand: recorded "lines", sent "none""#])
        #expect(
            ReplayMatch.differences(
                Self.exchange(body: "a=1", contentType: "application/x-www-form-urlencoded"),
                Self.request(body: "a=1", contentType: "text/plain"), redactor: redactor
            ).first
                == "Content-Type: recorded application/x-www-form-urlencoded, sent text/plain")
        #expect(
            ReplayMatch.describe(method: "POST", url: "http://h/graphql", body: #"{"operationName": "CentraOrder"}"#)
                == "POST /graphql (CentraOrder)")
    }

    @Test func theLiveRequestIsComparedAsTheRecordingShowsIt() {
        // A secret the run knows is masked in what is sent before comparing, so it matches the recording's mask and is
        // never shown.
        let redactor = Redactor(secrets: ["sk_live_very_secret"])
        let diff = ReplayMatch.differences(
            Self.exchange(body: #"{"key": "[REDACTED]", "n": 1}"#),
            Self.request(body: #"{"key": "sk_live_very_secret", "n": 2}"#), redactor: redactor)
        #expect(diff == ["$.n: recorded 1, sent 2"])
        let shown = ReplayMatch.differences(
            Self.exchange(body: #"{"note": "plain"}"#),
            Self.request(body: #"{"note": "has sk_live_very_secret in it"}"#), redactor: redactor)
        #expect(shown == [#"$.note: recorded "plain", sent "has [REDACTED] in it""#])
    }
}
