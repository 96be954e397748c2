import Foundation

/// HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/) — what `--record` writes.
/// Entries are redacted as they are built; nothing unredacted is ever held in the log.
public enum HAR {
    public static func entry(_ x: ExchangeRecord, redactor: Redactor) -> JSON {
        let request = x.request
        var requestJSON: JSON.Object = [
            "method": .string(request.method),
            "url": .string(redactor.text(request.url)),
            "httpVersion": "HTTP/1.1",
            "cookies": [],
            "headers": headers(redactor.headers(request.headers)),
            "queryString": .array(
                query(of: request.url).map { ["name": .string($0), "value": .string(redactor.text($1))] }),
            "headersSize": -1,
            "bodySize": .number(JSON.Number(request.body?.count ?? 0)),
        ]
        if let body = request.body {
            requestJSON["postData"] = [
                "mimeType": .string(request.headers["Content-Type"] ?? "application/octet-stream"),
                "text": .string(redactor.body(body, contentType: request.headers["Content-Type"])),
            ]
        }
        var entry: JSON.Object = [
            "startedDateTime": .string(Timestamp.iso8601(x.startedAt)),
            "time": .number(ms(x.duration)),
            "request": .object(requestJSON),
            "cache": [:],
            "_step": .string(x.step),
            "_attempt": .number(JSON.Number(x.attempt)),
        ]
        switch x.outcome {
        case .success(let r):
            entry["response"] = [
                "status": .number(JSON.Number(r.status)),
                "statusText": .string(reasonPhrase(r.status)),
                "httpVersion": .string(r.httpVersion),
                "cookies": [],
                "headers": headers(redactor.headers(r.headers)),
                "content": [
                    "size": .number(JSON.Number(r.body.count)),
                    "mimeType": .string(r.headers["Content-Type"] ?? ""),
                    "text": .string(redactor.body(r.body, contentType: r.headers["Content-Type"])),
                ],
                "redirectURL": .string(r.headers["Location"] ?? ""),
                "headersSize": -1,
                "bodySize": .number(JSON.Number(r.body.count)),
            ]
            entry["timings"] = [
                "blocked": -1, "dns": .number(ms(r.timings.dns)), "connect": .number(ms(r.timings.connect)),
                "ssl": .number(r.timings.tls > 0 ? ms(r.timings.tls) : -1), "send": .number(ms(r.timings.send)),
                "wait": .number(ms(r.timings.wait)), "receive": .number(ms(r.timings.receive)),
            ]
        case .failure(let error):
            // HAR has no slot for "no response"; status 0 with the error is what browsers record.
            entry["response"] = [
                "status": 0, "statusText": "", "httpVersion": "", "cookies": [], "headers": [],
                "content": ["size": 0, "mimeType": ""], "redirectURL": "", "headersSize": -1, "bodySize": -1,
                "_error": .string(redactor.text(error.description)),
            ]
            entry["timings"] = ["send": 0, "wait": .number(ms(x.duration)), "receive": 0]
        }
        return .object(entry)
    }

    /// `run`, when known, goes in `log._run` (HAR 1.2 allows custom fields that start with `_`): the flow's name, its
    /// variables, the environment and each step's outcome and output, all redacted — what a replay needs to run the
    /// flow again and check it against the recording.
    public static func document(entries: [JSON], creatorVersion: String, run: JSON? = nil) -> JSON {
        var log: JSON.Object = [
            "version": "1.2", "creator": ["name": "checkout-driver", "version": .string(creatorVersion)],
            "entries": .array(entries),
        ]
        if let run {
            log["_run"] = run
            log["comment"] = .string("checkout-driver \(creatorVersion) run of flow \(run["flow"]?.stringValue ?? "?")")
        }
        return ["log": .object(log)]
    }

    static func headers(_ h: HTTPHeaders) -> JSON {
        .array(h.fields.map { ["name": .string($0.name), "value": .string($0.value)] })
    }

    static func query(of url: String) -> [(String, String)] {
        URLComponents(string: url)?.queryItems?.map { ($0.name, $0.value ?? "") } ?? []
    }

    static func ms(_ seconds: Double) -> Double { (seconds * 1_000_000).rounded() / 1000 }

}
