import Crypto
import Foundation
import Threads

/// The one redactor. Every output path — the `-v` trace, HAR, JSON/JSONL reports, JUnit, error messages,
/// the state file — passes what it writes through here, so a secret has exactly one place to be caught.
///
/// Three nets, from specific to general: header names that always carry credentials, JSON keys that
/// always carry secrets, and the exact values of every secret the run knows (configured credentials,
/// token contents registered when a token file is read), wherever they appear in text.
public final class Redactor: Sendable {
    public static let mask = "[REDACTED]"

    /// Header names (lowercased) whose values are credentials.
    static let sensitiveHeaders: Set<String> = [
        "authorization", "proxy-authorization", "x-shared-secret", "bn-api-key", "client-key", "cookie",
        "set-cookie", "x-api-key", "api-key", "x-auth-token",
    ]

    /// JSON object keys whose values are secrets wherever they occur.
    static let sensitiveKeys: Set<String> = [
        "client_secret", "clientsecret", "secret", "password", "token", "jwt", "jwttoken", "signature", "api_key",
        "apikey",
        "access_token", "refresh_token", "session_token", "sessiontoken", "cvc", "cvv", "card_number",
        "cardnumber", "cardtoken", "pan", "private_key", "shared_secret", "nonce",
    ]

    /// A pthread lock (`Locked`), not a Mutex: a batch's runs register and read secrets at once, eight on two cores.
    private let secrets = Locked(SecretIndex())

    public init(secrets: [String] = []) {
        for s in secrets { register(s) }
    }

    /// Adds a value that must never be printed — and the forms it takes on its way through JSON, URLs and headers:
    /// JSON-escaped (a PEM's line breaks read `\n`), percent-encoded, base64 and base64url, and each line of a
    /// multi-line secret. Very short values are ignored: masking every "1" or "ok" in the output would make it
    /// unreadable without protecting anything.
    ///
    /// Within `Redactor.$run` (a run of a batch), the value is that run's: `forget(run:)` drops it once the run is over
    /// and reported, so that a batch of a thousand runs does not keep a thousand runs' tokens in a dozen encodings
    /// each. Outside of one, or registered by another scope too, it is kept.
    public func register(_ secret: String) { register(secret, escaped: true) }

    /// Registers a JSON document whose secret parts were registered on their own and appear in it exactly as
    /// registered (a payment token file's `data` and `signature`, which `PaymentTokenFile.read` checks): as it is and
    /// in base64, not escaped. Escaping a text escapes each of its characters alike, so an escaped copy of the document
    /// holds its parts escaped as they are registered, masked by them; the document's own escaped spellings, kilobytes
    /// each, were 2% of a Centra checkout's instructions.
    public func register(document: String) { register(document, escaped: false) }

    private func register(_ secret: String, escaped: Bool) {
        let run = Self.run
        // A value registered before costs one lookup (a state file's kept credentials are registered on each read), and
        // for another holder, the forms made of it then.
        guard !secrets.withLock({ $0.registerAgain(secret, for: run) }) else { return }
        let trimmed = Self.trimmed(secret)
        // (Six characters or more, told without counting them all: a token's count walks its every character.)
        let forms =
            !trimmed.dropFirst(5).isEmpty
            ? Self.encodedForms(of: trimmed, escaped: escaped).filter { $0.count >= SecretIndex.prefixLength } : []
        secrets.withLock { $0.register(secret, forms: forms, for: run) }
    }

    /// The run of a batch whose secrets `register` is given (nil: the process's, kept for good).
    @TaskLocal public static var run: String?

    /// Drops what only `run` registered: its tokens, its keys, every form of them. For a run whose every output has
    /// been written.
    public func forget(run: String) {
        secrets.withLock { $0.forget(run) }
    }

    /// The value without the white space (Unicode's, line breaks included) around it.
    static func trimmed(_ value: String) -> String {
        // Nearly every secret starts and ends with an ASCII letter or digit: nothing to trim, no Unicode property
        // asked.
        if let first = value.utf8.first, let last = value.utf8.last, Self.isASCIIGraphic(first),
            Self.isASCIIGraphic(last)
        {
            return value
        }
        let scalars = value.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    /// A printable ASCII byte other than the space: never white space, nor part of a character that is.
    private static func isASCIIGraphic(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

    public var knownSecrets: [String] { secrets.withLock { $0.all } }

    /// Grows each time a new secret form is learned: what was masked at one generation is masked alike at the next
    /// only if the generation did not move.
    public var generation: Int { secrets.withLock { $0.generation } }

    /// The secret forms learned since `generation`, oldest first: text masked at that generation needs masking again
    /// only if one of them occurs in it.
    func forms(since generation: Int) -> [[UInt8]] { secrets.withLock { $0.forms(since: generation) } }

    /// Masks every known secret value in free text (messages, URLs, bodies that are not JSON).
    public func text(_ input: String) -> String { maskedText(input) ?? input }

    /// `input` with every known secret masked; nil when there was nothing to mask.
    private func maskedText(_ input: String) -> String? {
        // Shorter than any secret: nothing to look up (most strings of a document are ids, codes and words).
        guard input.utf8.count >= SecretIndex.prefixLength else { return maskURLCredentials(input) }
        guard let masked = secrets.withLock({ $0.masking(input, with: Self.mask) }) else {
            return maskURLCredentials(input)
        }
        return maskURLCredentials(masked) ?? masked
    }

    public func headers(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(
            headers.fields.map { field in
                Self.sensitiveHeaders.contains(field.name.lowercased())
                    ? (field.name, Self.mask) : (field.name, text(field.value))
            })
    }

    /// Masks sensitive keys structurally. Values found under sensitive keys are registered as secrets
    /// first, so that the same value is also caught where it reappears as plain text — an echoed body,
    /// a JSON document inside a string, an error message.
    public func json(_ value: JSON) -> JSON {
        harvest(value, underSensitiveKey: false)
        return mask(value)
    }

    /// Whether the value under `key` of `object` is a secret as a whole: a sensitive key, or an Apple Pay token
    /// object's `data` (its `data` and `signature` are the payment credential).
    static func isSensitive(_ key: String, in object: JSON.Object) -> Bool {
        isSensitiveKey(key)
            || (key == "data" && object["header"] != nil && object["version"] != nil && object["data"] != nil)
    }

    /// Whether `key`, in any case, is one of `sensitiveKeys`. Every key of every document printed is asked, so an ASCII
    /// key of up to 16 bytes is lowercased into two integers and compared with the keys of its length packed alike —
    /// no string made, nothing hashed, no byte-by-byte walk through every candidate (which was almost a third of
    /// what a batch's `--format json` report cost, callgrind).
    static func isSensitiveKey(_ key: String) -> Bool {
        let packed: PackedKey?? = key.utf8.withContiguousStorageIfAvailable { PackedKey($0) }
        if let packed, let packed {
            return packed.length < sensitiveKeysPacked.count && sensitiveKeysPacked[packed.length].contains(packed)
        }
        // Longer than 16 bytes, beyond ASCII (lowercasing may even make an ASCII letter there: the Kelvin sign's
        // lowercase is "k"), or not stored contiguously. Such a letter takes three bytes, so a key more than three
        // times as long as the longest sensitive one cannot lowercase into it.
        return key.utf8.count <= longestSensitiveKey * 3 && sensitiveKeys.contains(key.lowercased())
    }

    /// An ASCII string of up to 16 bytes, lowercased, as two integers and its length.
    struct PackedKey: Equatable {
        let low: UInt64, high: UInt64, length: Int

        /// Nil when `bytes` are more than 16 or not all ASCII.
        init?(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard bytes.count <= 16, let base = bytes.baseAddress else {
                if bytes.isEmpty {
                    (low, high, length) = (0, 0, 0)
                    return
                }
                return nil
            }
            var low: UInt64 = 0
            var high: UInt64 = 0
            withUnsafeMutableBytes(of: &low) { $0.baseAddress!.copyMemory(from: base, byteCount: min(bytes.count, 8)) }
            if bytes.count > 8 {
                withUnsafeMutableBytes(of: &high) {
                    $0.baseAddress!.copyMemory(from: base + 8, byteCount: bytes.count - 8)
                }
            }
            guard (low | high) & Self.highBits == 0 else { return nil }
            (self.low, self.high, self.length) = (Self.lowercased(low), Self.lowercased(high), bytes.count)
        }

        private static let highBits: UInt64 = 0x8080_8080_8080_8080
        private static func repeated(_ byte: UInt8) -> UInt64 { UInt64(byte) &* 0x0101_0101_0101_0101 }

        /// Eight ASCII bytes with A–Z made a–z, all at once: a byte's top bit comes out set by the first sum when it is
        /// at least "A" and by the second when it is beyond "Z" (no byte carries into the next, each being below 0x80).
        private static func lowercased(_ word: UInt64) -> UInt64 {
            let atLeastA = word &+ repeated(0x80 - 0x41)
            let beyondZ = word &+ repeated(0x80 - 0x5B)
            let upper = atLeastA & ~beyondZ & highBits
            return word | (upper >> 2)
        }
    }

    /// `sensitiveKeys` packed, by length (all are lowercase ASCII of at most 16 bytes; a test checks it).
    static let sensitiveKeysPacked: [[PackedKey]] = {
        var byLength = [[PackedKey]](repeating: [], count: longestSensitiveKey + 1)
        for key in sensitiveKeys {
            if let packed = Array(key.utf8).withUnsafeBufferPointer({ PackedKey($0) }) {
                byLength[packed.length].append(packed)
            }
        }
        return byLength
    }()
    private static let longestSensitiveKey = sensitiveKeys.map(\.utf8.count).max() ?? 0

    private func harvest(_ value: JSON, underSensitiveKey: Bool) {
        switch value {
        case .object(let o):
            for (k, v) in o {
                let sensitive = Self.isSensitive(k, in: o)
                if sensitive, case .string(let secret) = v, let kept = Self.keptShape(secret, key: k, in: o) {
                    // What goes of it is the secret (a signature); what stays is judged by its own keys, like any JSON.
                    switch kept {
                    case .jws(let header, let payload, let signature):
                        if signature != JWSDisplay.droppedSignature { register(signature) }
                        harvest(header, underSensitiveKey: false)
                        harvest(payload, underSensitiveKey: false)
                    case .challenge(let inner):
                        harvest(inner, underSensitiveKey: false)
                    }
                    continue
                }
                harvest(v, underSensitiveKey: underSensitiveKey || sensitive)
            }
        case .array(let a):
            for v in a { harvest(v, underSensitiveKey: underSensitiveKey) }
        case .string(let s):
            if underSensitiveKey { register(s) }
            // A JSON document inside a string (an Apple Pay token sent as a string) is judged by its own keys:
            // its `data` and `signature` are secrets, its header's transaction id is not.
            if let embedded = Self.embeddedJSON(s) { harvest(embedded, underSensitiveKey: false) }
        case .number(let n) where underSensitiveKey:
            register(n.literal)
        default:
            break
        }
    }

    /// A string that is itself a JSON object or array (an echoed body, an Apple Pay token passed as a string).
    private static func embeddedJSON(_ s: String) -> JSON? {
        guard let first = s.utf8.first, first == UInt8(ascii: "{") || first == UInt8(ascii: "["), s.utf8.count > 2
        else { return nil }
        return try? JSON.parse(s)
    }

    private func mask(_ value: JSON) -> JSON { masking(value) ?? value }

    /// `value` masked; nil when nothing in it is a secret, so that what holds none keeps its storage (a report's step
    /// outputs are kilobytes of ids, names and amounts, and copying each of their objects cost more than looking).
    private func masking(_ value: JSON) -> JSON? {
        switch value {
        case .object(let o):
            return o.replacingMembers { k, v in Self.isSensitive(k, in: o) ? masked(v, key: k, in: o) : masking(v) }
                .map(JSON.object)
        case .array(let a):
            var copy: [JSON]?
            for i in a.indices {
                guard let masked = masking(a[i]) else { continue }
                if copy == nil { copy = a }
                copy![i] = masked
            }
            return copy.map(JSON.array)
        case .string(let s): return maskedText(s).map(JSON.string)
        default: return nil
        }
    }

    /// What a secret's place shows: the mask — except for two values a replay needs the shape of and nobody can use
    /// once redacted: a compact JWS or JWT keeps its header and payload, redacted, and loses its signature (Afterpay's
    /// signing JWT, whose payload the customer request is built from); an Adyen `threeDS2` action's `token`, base64
    /// JSON saying where the challenge is, keeps its contents, redacted.
    private func masked(_ value: JSON, key: String, in object: JSON.Object) -> JSON {
        guard case .string(let s) = value, let kept = Self.keptShape(s, key: key, in: object) else {
            return value == .null ? .null : .string(Self.mask)
        }
        switch kept {
        case .jws(let header, let payload, _):
            return .string(
                json(header).data.base64URLEncodedString() + "." + json(payload).data.base64URLEncodedString() + "."
                    + JWSDisplay.droppedSignature)
        case .challenge(let inner):
            return .string(json(inner).data.base64EncodedString())
        }
    }

    /// A secret's value whose shape `masked` keeps.
    enum KeptShape {
        case jws(header: JSON, payload: JSON, signature: String)
        case challenge(JSON)
    }

    static func keptShape(_ s: String, key: String, in object: JSON.Object) -> KeptShape? {
        if JWSDisplay.looksLikeCompactJWS(s) {
            guard let (header, payload, signature) = JWSDisplay.parts(s), let header = try? JSON.parse(header),
                let payload = try? JSON.parse(payload)
            else { return nil }
            return .jws(header: header, payload: payload, signature: signature)
        }
        if key == "token", object["type"]?.stringValue == "threeDS2", let data = Data(base64Encoded: s),
            let inner = try? JSON.parse(data), inner.objectValue != nil
        {
            return .challenge(inner)
        }
        return nil
    }

    /// A body for display: JSON is redacted structurally, a compact JWS is opened so that its payload is
    /// redacted (and readable), anything else is scanned as text. Binary bodies are summarised.
    public func body(_ data: Data, contentType: String?) -> String {
        if data.isEmpty { return "" }
        guard let string = String(data: data, encoding: .utf8) else { return "<\(data.count) bytes of binary data>" }
        let type = contentType?.lowercased() ?? ""
        if type.contains("application/jose") || JWSDisplay.looksLikeCompactJWS(string) {
            if let shown = JWSDisplay.redacted(string, redactor: self) { return shown }
        }
        if type.contains("json") || string.first == "{" || string.first == "[" {
            if let parsed = try? JSON.parse(data) { return json(parsed).serialized() }
        }
        if type.contains("x-www-form-urlencoded") { return formBody(string) }
        return text(string)
    }

    private func formBody(_ string: String) -> String {
        string.split(separator: "&").map { pair in
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2, Self.sensitiveKeys.contains(String(kv[0]).lowercased()) { return "\(kv[0])=\(Self.mask)" }
            return text(String(pair))
        }.joined(separator: "&")
    }

    /// Whether `byte` occurs in `s`: `memchr` over its UTF-8, where the generic `contains` took a call per byte.
    private static func holds(_ byte: UInt8, _ s: String) -> Bool {
        let found = s.utf8.withContiguousStorageIfAvailable {
            !$0.isEmpty && memchr($0.baseAddress!, Int32(byte), $0.count) != nil
        }
        return found ?? s.utf8.contains(byte)
    }

    /// `https://user:pass@host` → `https://user:[REDACTED]@host`.
    /// Nil when `s` has no such URL.
    private func maskURLCredentials(_ s: String) -> String? {
        // Most text has no `@` at all: one byte scan, not Foundation's substring search, says so.
        guard Self.holds(UInt8(ascii: "@"), s), s.contains("://") else { return nil }
        var out = ""
        var rest = Substring(s)
        while let scheme = rest.range(of: "://") {
            out += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == " " || $0 == "\"" || $0 == "\n" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                out += authority[...colon] + Self.mask + authority[at...]
            } else {
                out += authority
            }
            rest = rest[authorityEnd...]
        }
        return out + rest
    }
}

/// Renders a compact JWS (RFC 7515) for people: protected header and payload decoded and redacted,
/// signature masked.
enum JWSDisplay {
    static func looksLikeCompactJWS(_ s: String) -> Bool {
        // Three runs of base64url's ASCII alphabet joined by dots, the first opening `eyJ` (`{"` encoded).
        guard s.utf8.starts(with: "eyJ".utf8) else { return false }
        var dots = 0
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "."): dots += 1
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"):
                continue
            default: return false
            }
        }
        return dots == 2
    }

    /// What stands for a JWS signature that a redacted JWS lost: the same shape, which no verifier accepts.
    static let droppedSignature = "REDACTED"

    /// The decoded header and payload and the signature as it stands; nil when it is not three parts of base64url.
    static func parts(_ s: String) -> (header: Data, payload: Data, signature: String)? {
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Data(base64URLEncoded: String(parts[0])),
            let payload = Data(base64URLEncoded: String(parts[1]))
        else { return nil }
        return (header, payload, String(parts[2]))
    }

    static func redacted(_ s: String, redactor: Redactor) -> String? {
        guard let (header, payload, _) = parts(s) else { return nil }
        let headerText = (try? JSON.parse(header)).map { redactor.json($0).serialized() } ?? "?"
        let payloadText =
            (try? JSON.parse(payload)).map { redactor.json($0).serialized() }
            ?? redactor.text(String(decoding: payload, as: UTF8.self))
        return "JWS \(headerText).\(payloadText).\(Redactor.mask)"
    }
}
