import Foundation

/// An Apple Pay token read from `--token-file`, checked before anything is sent.
///
/// The bytes are sent exactly as read: the processor verifies Apple's signature and the integration guide insists the
/// token travels as PassKit produced it, so nothing here trims, re-encodes or re-serialises. The checks exist to turn
/// the usual mistakes (a base64-wrapped token, a whole PKPayment dump, a truncated copy) into one clear line each,
/// instead of an opaque decline from the processor. Whether a token is spent depends on the key it is sent under: that
/// check belongs to the provider's state (BahnState.confirmKey).
public struct PaymentTokenFile: Sendable {
    public let path: String
    public let bytes: Data
    /// How to make another token when one is spent (a token pays once).
    public static let freshTokenHint =
        "make a fresh one: `checkout-driver applepay token --amount <minor units> --currency <code> --out token.json`"
    public let transactionId: String
    public let version: String

    /// `files`: a run's own files, read before the disk.
    public static func read(
        path: String, redactor: Redactor?, files: MadeFiles? = nil
    ) throws(Diagnostic) -> PaymentTokenFile {
        let bytes: Data
        switch files?.read(path) ?? FileIO.read(path) {
        case .success(let data): bytes = data
        case .failure(let error):
            throw .data(
                "cannot read token file \(path): \(error.reason)",
                hint: "check the path; make a test token with `checkout-driver applepay token --out FILE`")
        }
        let reader = Reader(path: path)
        let token = try reader.tokenObject(bytes)
        let (transactionId, version) = try reader.checkShape(token)

        // The token is a payment credential: from here on no output path may print it.
        if let redactor {
            let parts = ["data", "signature"].compactMap { token[$0]?.stringValue }
            for part in parts { redactor.register(part) }
            // Escaped or percent-encoded, the file is masked by those parts wherever it spells them as they are
            // registered, so it is registered itself as written and in base64 only. A file that writes them otherwise
            // (data's "/" as "\/", as PHP and NSJSONSerialization do) is registered in every spelling, as any secret.
            let text = String(decoding: bytes, as: UTF8.self)
            let written = Array(bytes)
            if parts.allSatisfy({ Bytes.occurs(Array($0.utf8), in: written) }) {
                redactor.register(document: text)
            } else {
                redactor.register(text)
            }
        }
        return PaymentTokenFile(path: path, bytes: bytes, transactionId: transactionId, version: version)
    }
}

/// The checks, in the order that gives the most specific message first.
private struct Reader {
    let path: String

    /// Every failure here is bad input data (exit 65), naming the file.
    func fail(_ problem: String, hint: String) -> Diagnostic {
        .data("token file \(path) \(problem)", hint: hint)
    }

    var exactBytesHint: String {
        "the file must hold PKPaymentToken.paymentData exactly as PassKit produced it: the UTF-8 JSON {\"data\",\"signature\",\"header\",\"version\"}"
    }

    /// The token's JSON object, after ruling out files that are not one.
    func tokenObject(_ bytes: Data) throws(Diagnostic) -> JSON.Object {
        // Checked on the bytes: a decoder may drop the mark silently, and the bytes sent are the file's.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw fail(
                "starts with a UTF-8 byte-order mark (EF BB BF), which PassKit never writes; an editor added it",
                hint: "save the file without the mark, e.g. `sed -i '1s/^\\xEF\\xBB\\xBF//' \(path)`")
        }
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw fail("is not UTF-8 text", hint: exactBytesHint)
        }
        // A token starts with `{` at once: the whole text is looked at only when it is blank.
        if !text.unicodeScalars.contains(where: { !$0.properties.isWhitespace }) {
            throw fail("is empty", hint: "write the token into it, e.g. `checkout-driver applepay token --out \(path)`")
        }
        let parsed: JSON
        do {
            parsed = try JSON.parse(bytes)
        } catch {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if base64DecodedToken(trimmed) != nil {
                throw fail(
                    "holds the token base64-encoded, not the token JSON",
                    hint:
                        "decode it first (`base64 -d \(path) > token.json`): the bytes must be sent as PassKit produced them, never base64-wrapped"
                )
            }
            if looksTruncated(trimmed) {
                throw fail(
                    "looks truncated: the JSON ends before its last object or string is closed (\(error))",
                    hint: "copy the whole token again; a cut-off token cannot be repaired")
            }
            throw fail("is not JSON (\(error))", hint: exactBytesHint)
        }
        guard case .object(let object) = parsed else {
            // A token JSON-encoded a second time, e.g. copied from a request body: "{\"data\":…}".
            if let inner = parsed.stringValue, case .object(let o)? = try? JSON.parse(inner), o["data"] != nil {
                throw fail(
                    "holds the token as a JSON string (encoded twice)",
                    hint: "unwrap it (`jq -j . \(path) > token.json`) so the file holds the token object itself")
            }
            throw fail("holds \(parsed.kindName), not a JSON object", hint: exactBytesHint)
        }
        try rejectWrappers(object)
        return object
    }

    /// A dump of a whole PKPayment or PKPaymentToken instead of its paymentData.
    func rejectWrappers(_ object: JSON.Object) throws(Diagnostic) {
        let jsonPath: String
        let paymentData: JSON
        if let inner = object["token"]?["paymentData"] {
            (jsonPath, paymentData) = ("token.paymentData", inner)
        } else if let inner = object["paymentData"] {
            (jsonPath, paymentData) = ("paymentData", inner)
        } else {
            return
        }
        let wrapper = jsonPath == "token.paymentData" ? "a whole PKPayment" : "a whole PKPaymentToken"
        if let string = paymentData.stringValue, base64DecodedToken(string) != nil {
            throw fail(
                "holds \(wrapper), and the token is base64-encoded at \(jsonPath)",
                hint:
                    "extract and decode it (`jq -r .\(jsonPath) \(path) | base64 -d > token.json`): the bytes must be sent as PassKit produced them"
            )
        }
        throw fail(
            "holds \(wrapper); the token is the value at \(jsonPath)",
            hint: "save PKPaymentToken.paymentData itself (the UTF-8 bytes PassKit produced), not the object around it")
    }

    /// Required members, version, header members; returns the transaction id and version.
    func checkShape(_ token: JSON.Object) throws(Diagnostic) -> (transactionId: String, version: String) {
        let missing = ["data", "signature", "header", "version"].filter { token[$0] == nil }
        if !missing.isEmpty {
            throw fail("is missing \(list(missing)) — not an Apple Pay payment token", hint: exactBytesHint)
        }
        guard let version = token["version"]?.stringValue else {
            throw fail("has a version that is not a string", hint: exactBytesHint)
        }
        if version == "RSA_v1" {
            throw fail(
                "holds an RSA_v1 token; RSA_v1 is not supported, only EC_v1",
                hint: "use an EC_v1 token (ask for ECC encryption; RSA_v1 is only issued where ECC is unavailable)")
        }
        guard version == "EC_v1" else {
            throw fail(
                "has unknown version '\(version)'; only EC_v1 is supported (RSA_v1 is not supported)",
                hint: exactBytesHint)
        }
        for key in ["data", "signature"] where (token[key]?.stringValue ?? "").isEmpty {
            throw fail("has a '\(key)' that is not a non-empty base64 string", hint: exactBytesHint)
        }
        guard case .object(let header)? = token["header"] else {
            throw fail("has a 'header' that is not an object", hint: exactBytesHint)
        }
        let missingInHeader = ["ephemeralPublicKey", "publicKeyHash", "transactionId"].filter { header[$0] == nil }
        if !missingInHeader.isEmpty {
            throw fail("has a header missing \(list(missingInHeader))", hint: exactBytesHint)
        }
        guard let transactionId = header["transactionId"]?.stringValue, !transactionId.isEmpty else {
            throw fail("has a header.transactionId that is not a non-empty string", hint: exactBytesHint)
        }
        return (transactionId, version)
    }

    /// "`data`", "`data` and `header`", "`data`, `header` and `version`".
    func list(_ names: [String]) -> String {
        let quoted = names.map { "'\($0)'" }
        return quoted.count == 1 ? quoted[0] : quoted.dropLast().joined(separator: ", ") + " and " + quoted.last!
    }

    /// The token JSON, when `text` is base64 (standard or URL alphabet, possibly line-wrapped) of a token,
    /// or of something that wraps one.
    func base64DecodedToken(_ text: String) -> JSON? {
        let compact = text.filter { !$0.isWhitespace }
        guard !compact.isEmpty, !compact.hasPrefix("{") else { return nil }
        var standard = compact.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let decoded = Data(base64Encoded: standard), let json = try? JSON.parse(decoded),
            let object = json.objectValue
        else { return nil }
        let isTokenLike = object["data"] != nil || object["paymentData"] != nil || object["token"] != nil
        return isTokenLike ? json : nil
    }

    /// JSON that opens an object and ends inside a string or with containers still open was cut short.
    func looksTruncated(_ text: String) -> Bool {
        guard text.hasPrefix("{") || text.hasPrefix("[") else { return false }
        var depth = 0
        var scan = JSONTextScan()
        for byte in text.utf8 where scan.read(byte) == .structure {
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1
            default: break
            }
        }
        return scan.inString || depth > 0
    }
}
