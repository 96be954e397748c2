import Foundation

/// The one rule set by which a replay's request matches its recording (docs/qa-ci.md, "Record and replay"). Both sides
/// are compared as the recording shows them — through the redactor — so a secret is never compared, and never shown.
///
/// A request matches when its method, its path, its GraphQL `operationName` and its body match, part by part:
/// - A part the recording shows as `[REDACTED]` matches anything: it was a secret (a token, a key, a signature).
/// - Volatile parts match any value of their shape: UUIDs (request ids, idempotency keys the driver made), ISO 8601
///   timestamps, loopback ports (`127.0.0.1:<port>`, the driver's own listeners), and opaque ids — runs of 16 or more
///   letters, digits, `_` and `-` with at least one letter and one digit (ids, nonces, ephemeral keys, encoded blobs).
/// - A JWS body (Bahn's) is compared by its protected header and payload; its signature is always masked.
/// - Everything else must be equal: numbers (amounts) exactly, strings after the rules above, keys and array lengths.
/// Headers are not compared (they carry credentials and per-attempt ids), except the body's media type.
public enum ReplayMatch {
    /// How a request differs from the recorded one, one line per path; empty when it matches.
    public static func differences(
        _ recorded: Recording.Exchange, _ live: HTTPClientRequest, redactor: Redactor
    ) -> [String] {
        var out: [String] = []
        if recorded.method != live.method { out.append("method: recorded \(recorded.method), sent \(live.method)") }
        let recordedURL = URLParts(recorded.url)
        let liveURL = URLParts(redactor.text(live.url))
        if !matches(recordedURL.path, liveURL.path) {
            out.append("path: recorded \(recordedURL.path), sent \(liveURL.path)")
        }
        diff(.object(recordedURL.query), .object(liveURL.query), at: "query", into: &out)
        let liveType = live.headers["Content-Type"]
        let liveBody = live.body.map { redactor.body($0, contentType: liveType) }
        if let a = mediaType(recorded.contentType), let b = mediaType(liveType), recorded.body != nil, liveBody != nil,
            a != b
        {
            out.append("Content-Type: recorded \(a), sent \(b)")
        }
        let r = Body(recorded.body ?? "", contentType: recorded.contentType)
        let l = Body(liveBody ?? "", contentType: liveType)
        diff(r.value, l.value, at: "$", into: &out)
        return out
    }

    /// `METHOD /path (operationName)`: how a request is named in a divergence.
    public static func describe(method: String, url: String, body: String?) -> String {
        let operation = Body(body ?? "", contentType: nil).value["operationName"]?.stringValue
        return "\(method) \(URLParts(url).path)" + (operation.map { " (\($0))" } ?? "")
    }

    // MARK: - Values

    /// Whether a live string matches a recorded one under the rules.
    static func matches(_ recorded: String, _ live: String) -> Bool {
        if recorded == live || recorded == Redactor.mask { return true }
        let r = normalized(recorded)
        let l = normalized(live)
        if r == l { return true }
        guard r.contains(Redactor.mask) else { return false }
        // A string with a secret inside (a URL with a token in its path): the rest must match around it.
        let pieces = r.components(separatedBy: Redactor.mask)
        var rest = Substring(l)
        guard rest.hasPrefix(pieces[0]) else { return false }
        rest = rest.dropFirst(pieces[0].count)
        for (i, piece) in pieces.enumerated().dropFirst() {
            if i == pieces.count - 1 { return piece.isEmpty || rest.hasSuffix(piece) }
            guard let found = rest.range(of: piece) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }

    /// The string with every volatile part replaced by the name of its shape.
    static func normalized(_ text: String) -> String {
        let chars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        while i < chars.count {
            let atBoundary = i == 0 || !isIDCharacter(chars[i - 1])
            if atBoundary, let end = timestamp(chars, i) {
                out.append(contentsOf: "<timestamp>".unicodeScalars)
                i = end
            } else if atBoundary, let end = uuid(chars, i) {
                out.append(contentsOf: "<uuid>".unicodeScalars)
                i = end
            } else if let end = loopbackPort(chars, i) {
                out.append(contentsOf: "127.0.0.1:<port>".unicodeScalars)
                i = end
            } else if atBoundary, isIDCharacter(chars[i]) {
                var end = i
                while end < chars.count, isIDCharacter(chars[end]) { end += 1 }
                let run = chars[i..<end]
                if run.count >= 16 && run.contains(where: { CharacterSet.letters.contains($0) })
                    && run.contains(where: { CharacterSet.decimalDigits.contains($0) })
                {
                    out.append(contentsOf: "<id>".unicodeScalars)
                } else {
                    out.append(contentsOf: run)
                }
                i = end
            } else {
                out.append(chars[i])
                i += 1
            }
        }
        return String(out)
    }

    private static func isIDCharacter(_ c: Unicode.Scalar) -> Bool {
        c.isASCII && (CharacterSet.alphanumerics.contains(c) || c == "_" || c == "-")
    }

    private static func isDigit(_ chars: [Unicode.Scalar], _ i: Int) -> Bool {
        i < chars.count && chars[i].isASCII && CharacterSet.decimalDigits.contains(chars[i])
    }
    private static func isHex(_ chars: [Unicode.Scalar], _ i: Int) -> Bool {
        i < chars.count && chars[i].isASCII && CharacterSet(charactersIn: "0123456789abcdefABCDEF").contains(chars[i])
    }

    /// The end of `pattern` at `i`: `d` a digit, `x` a hex digit, anything else itself.
    private static func shape(_ chars: [Unicode.Scalar], _ i: Int, _ pattern: String) -> Int? {
        var j = i
        for p in pattern.unicodeScalars {
            switch p {
            case "d": guard isDigit(chars, j) else { return nil }
            case "x": guard isHex(chars, j) else { return nil }
            default: guard j < chars.count, chars[j] == p else { return nil }
            }
            j += 1
        }
        return j
    }

    /// `2026-12-02T09:58:28`, then a fraction and a zone (`Z`, `+01:00`) when there are.
    private static func timestamp(_ chars: [Unicode.Scalar], _ i: Int) -> Int? {
        guard var j = shape(chars, i, "dddd-dd-ddTdd:dd:dd") else { return nil }
        if j < chars.count, chars[j] == ".", isDigit(chars, j + 1) {
            j += 1
            while isDigit(chars, j) { j += 1 }
        }
        if j < chars.count, chars[j] == "Z" { return j + 1 }
        return shape(chars, j, "+dd:dd") ?? shape(chars, j, "-dd:dd") ?? j
    }

    private static func uuid(_ chars: [Unicode.Scalar], _ i: Int) -> Int? {
        guard let end = shape(chars, i, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx") else { return nil }
        return end < chars.count && isIDCharacter(chars[end]) ? nil : end
    }

    private static func loopbackPort(_ chars: [Unicode.Scalar], _ i: Int) -> Int? {
        for host in ["127.0.0.1:", "localhost:", "[::1]:"] {
            guard let end = shape(chars, i, host), isDigit(chars, end) else { continue }
            var j = end
            while isDigit(chars, j) { j += 1 }
            return j
        }
        return nil
    }

    // MARK: - Documents

    /// Differences between two values, one line per path, each side shown as the recording would show it.
    static func diff(_ recorded: JSON, _ live: JSON, at path: String, into out: inout [String]) {
        switch (recorded, live) {
        case (.object(let r), .object(let l)):
            for key in Set(r.keys).union(l.keys).sorted() {
                let child = child(path, key)
                switch (r[key], l[key]) {
                case (let a?, let b?): diff(a, b, at: child, into: &out)
                case (let a?, nil): out.append("\(child): recorded \(shown(a)), not sent")
                case (nil, let b?): out.append("\(child): sent \(shown(b)), not in the recording")
                case (nil, nil): break
                }
            }
        case (.array(let r), .array(let l)):
            for index in 0..<max(r.count, l.count) {
                let child = "\(path)[\(index)]"
                if index >= l.count {
                    out.append("\(child): recorded \(shown(r[index])), not sent")
                } else if index >= r.count {
                    out.append("\(child): sent \(shown(l[index])), not in the recording")
                } else {
                    diff(r[index], l[index], at: child, into: &out)
                }
            }
        case (.string(let r), .string(let l)):
            if !matches(r, l) { out.append("\(path): " + stringDifference(r, l)) }
        case (.string(Redactor.mask), _):
            break
        default:
            if recorded != live { out.append("\(path): recorded \(shown(recorded)), sent \(shown(live))") }
        }
    }

    private static func child(_ path: String, _ key: String) -> String {
        JSONPath.isPlainKey(key)
            ? "\(path).\(key)" : "\(path)[\(JSON.string(key).serialized())]"
    }

    private static func shown(_ value: JSON) -> String {
        let text = value.serialized()
        return text.count > 80 ? String(text.prefix(77)) + "…" : text
    }

    /// Two strings side by side, cut around where they first differ (a GraphQL document is long).
    private static func stringDifference(_ r: String, _ l: String) -> String {
        let common = zip(r, l).prefix { $0 == $1 }.count
        guard r.count > 60 || l.count > 60 else { return "recorded \(shown(.string(r))), sent \(shown(.string(l)))" }
        func around(_ s: String) -> String {
            let start = max(0, common - 20)
            let piece = s.dropFirst(start).prefix(50)
            return (start > 0 ? "…" : "") + JSON.string(String(piece)).serialized()
                + (start + piece.count < s.count ? "…" : "")
        }
        return "differs at character \(common + 1): recorded \(around(r)), sent \(around(l))"
    }

    private static func mediaType(_ contentType: String?) -> String? {
        contentType.map { $0.split(separator: ";", maxSplits: 1).first.map(String.init) ?? $0 }?
            .trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A path and its query, parsed from a URL as recorded or as sent (the host is not compared).
    struct URLParts {
        var path: String
        var query: JSON.Object

        init(_ url: String) {
            var rest = Substring(url)
            if let scheme = rest.range(of: "://") {
                rest = rest[scheme.upperBound...]
                rest = rest[(rest.firstIndex(of: "/") ?? rest.endIndex)...]
            }
            let parts = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
            path = parts.first.map(String.init).flatMap { $0.isEmpty ? nil : $0 } ?? "/"
            var query: JSON.Object = [:]
            if parts.count == 2 {
                for (name, value) in FormEncoding.decode(Data(parts[1].utf8)) { query[name] = .string(value) }
            }
            self.query = query
        }
    }

    /// A body as the recording shows it, made comparable: JSON as it is, a JWS as {protected, payload}, a form as its
    /// fields, other text as one string.
    struct Body {
        var value: JSON

        init(_ text: String, contentType: String?) {
            if text.isEmpty {
                value = .null
                return
            }
            if text.hasPrefix("JWS "), let jws = Self.jws(text.dropFirst(4)) {
                value = jws
                return
            }
            if let json = try? JSON.parse(text), json.objectValue != nil || json.arrayValue != nil {
                value = json
                return
            }
            if mediaType(contentType) == "application/x-www-form-urlencoded" {
                var fields: JSON.Object = [:]
                for (name, v) in FormEncoding.decode(Data(text.utf8)) { fields[name] = .string(v) }
                if !fields.isEmpty {
                    value = .object(fields)
                    return
                }
            }
            value = .string(text)
        }

        /// `JWS <header>.<payload>.[REDACTED]`, as `JWSDisplay` shows one: the header is the shortest prefix that is a
        /// JSON object and leaves a payload that parses.
        private static func jws(_ text: Substring) -> JSON? {
            guard text.hasSuffix("." + Redactor.mask) else { return nil }
            let inner = text.dropLast(Redactor.mask.count + 1)
            var search = inner.startIndex
            while let dot = inner[search...].firstIndex(of: ".") {
                if let header = try? JSON.parse(String(inner[..<dot])), header.objectValue != nil {
                    let payloadText = String(inner[inner.index(after: dot)...])
                    return ["protected": header, "payload": (try? JSON.parse(payloadText)) ?? .string(payloadText)]
                }
                search = inner.index(after: dot)
            }
            return nil
        }
    }
}
