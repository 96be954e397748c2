import Foundation
import Testing

@testable import CheckoutKit

@Suite struct HARTests {
    let secret = "sk_test_PLANTED_987"

    func record(_ outcome: Result<HTTPClientResponse, TransportError>) -> ExchangeRecord {
        let request = HTTPClientRequest(
            method: "POST", url: "https://user:pw-\(secret)@api.example.com/v1/pay?key=\(secret)&x=1",
            headers: ["Authorization": "Bearer \(secret)", "Content-Type": "application/json", "X-Trace": secret],
            body: Data(#"{"amount":100,"note":"\#(secret)","client_secret":"cs_zzz"}"#.utf8))
        return ExchangeRecord(
            step: "pay", attempt: 1, startedAt: Date(), request: request, outcome: outcome, duration: 0.0125)
    }

    func checkRequired(_ entry: JSON) throws {
        let e = try #require(entry.objectValue)
        for key in ["startedDateTime", "time", "request", "response", "cache", "timings"] {
            #expect(e[key] != nil, "\(key)")
        }
        #expect(
            entry["startedDateTime"]?.stringValue.map {
                (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0)) != nil
            } == true)
        #expect(entry["time"]?.doubleValue != nil)
        let request = try #require(entry["request"])
        for key in ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"] {
            #expect(request[key] != nil, "request.\(key)")
        }
        #expect(request["headers"]?.arrayValue != nil)
        #expect(request["queryString"]?.arrayValue?.count == 2)
        let response = try #require(entry["response"])
        for key in [
            "status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize",
            "bodySize",
        ] {
            #expect(response[key] != nil, "response.\(key)")
        }
        #expect(response["content"]?["size"]?.doubleValue != nil)
        #expect(response["content"]?["mimeType"]?.stringValue != nil)
        let timings = try #require(entry["timings"])
        for key in ["send", "wait", "receive"] { #expect(timings[key]?.doubleValue != nil, "timings.\(key)") }
        let text = entry.serialized()
        #expect(!text.contains("PLANTED"))
        #expect(!text.contains("cs_zzz"))
    }

    @Test func successEntry() throws {
        var timings = PhaseTimings()
        timings.wait = 0.004
        timings.total = 0.006
        let response = HTTPClientResponse(
            status: 200, headers: ["Content-Type": "application/json", "Set-Cookie": "s=\(secret)"],
            body: Data(#"{"token":"tok_abcdef","echo":"\#(secret)"}"#.utf8), timings: timings)
        let redactor = Redactor(secrets: [secret])
        let entry = HAR.entry(record(.success(response)), redactor: redactor)
        try checkRequired(entry)
        #expect(entry["response"]?["status"] == 200)
        #expect(entry["response"]?["statusText"] == "OK")
        #expect(entry["timings"]?["wait"] == 4)
        #expect(entry["time"] == 12.5)
        #expect(entry["request"]?["postData"]?["mimeType"] == "application/json")
        #expect(!entry.serialized().contains("tok_abcdef"))
        let doc = HAR.document(entries: [entry], creatorVersion: "0.1")
        #expect(doc["log"]?["version"] == "1.2")
        #expect(doc["log"]?["entries"]?.arrayValue?.count == 1)
    }

    @Test func transportFailureEntry() throws {
        let redactor = Redactor(secrets: [secret])
        let entry = HAR.entry(
            record(.failure(.connectionLost("reset while sending key=\(secret)"))), redactor: redactor)
        try checkRequired(entry)
        #expect(entry["response"]?["status"] == 0)
        #expect(entry["response"]?["_error"]?.stringValue?.contains("connection lost") == true)
    }
}
