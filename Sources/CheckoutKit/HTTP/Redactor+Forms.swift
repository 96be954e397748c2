import Crypto
import Foundation
import WireTypes

/// The spellings of a secret the redactor looks for (`Redactor.register`): as JSON, a URL, a form or base64 would carry
/// it.
extension Redactor {
    /// What a secret's bytes hold that its other spellings depend on (`encodedForms`), by byte: one table lookup each,
    /// in one pass, where asking each spelling's own question of every byte cost more than making the spellings.
    fileprivate struct ByteKinds: OptionSet {
        let rawValue: UInt8
        /// Escaped in a JSON string: `"`, `\` and the control characters.
        static let jsonEscaped = ByteKinds(rawValue: 1)
        /// `/`, which Foundation's JSONSerialization also escapes.
        static let slash = ByteKinds(rawValue: 2)
        /// Percent-encoded by every encoding (not one of RFC 3986's unreserved characters).
        static let notUnreserved = ByteKinds(rawValue: 4)
        /// Percent-encoded in a URL's query too.
        static let notQuery = ByteKinds(rawValue: 8)
        static let space = ByteKinds(rawValue: 16)
        /// A line break, or a byte beyond ASCII (which may be part of one).
        static let lineBreaking = ByteKinds(rawValue: 32)

        static let table: [ByteKinds] = (0...255).map { value in
            let byte = UInt8(value)
            var kinds: ByteKinds = []
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { kinds.insert(.jsonEscaped) }
            if byte == UInt8(ascii: "/") { kinds.insert(.slash) }
            if !PercentEncoding.unreserved.contains(byte) { kinds.insert(.notUnreserved) }
            if !PercentEncoding.query.contains(byte) { kinds.insert(.notQuery) }
            if byte == 0x20 { kinds.insert(.space) }
            if (0x0A...0x0D).contains(byte) || byte >= 0x80 { kinds.insert(.lineBreaking) }
            return kinds
        }
    }

    /// The value as it may appear in an output: as it is, and as JSON, a URL or base64 would carry it (`escaped`: as
    /// JSON or a URL would; a document whose secrets are registered on their own is not, `register(document:)`).
    static func encodedForms(of secret: String, escaped: Bool = true) -> [[UInt8]] {
        let bytes = Array(secret.utf8)
        var forms = [bytes]
        // Most secrets are spelled alike in several of these (a token of letters and digits is its own JSON and
        // percent-encoded form): a spelling is made only where the bytes say it differs, and listed once.
        func add(_ form: [UInt8]) { if !forms.contains(form) { forms.append(form) } }
        guard escaped else {
            let (base64, base64URL) = Self.base64(bytes)
            for form in [base64, base64URL] { add(form) }
            return forms
        }
        var kinds: ByteKinds = []
        bytes.withUnsafeBufferPointer { for byte in $0 { kinds.formUnion(ByteKinds.table[Int(byte)]) } }
        var json = bytes
        if kinds.contains(.jsonEscaped) {
            json = []
            JSON.appendQuoted(secret, to: &json)
            json.removeLast()
            json.removeFirst()
            add(json)
        }
        // Foundation's JSONSerialization also escapes "/".
        if kinds.contains(.slash) {
            add(
                [UInt8](unsafeUninitializedCapacity: json.count * 2) { out, count in
                    count = 0
                    for byte in json {
                        if byte == UInt8(ascii: "/") {
                            out[count] = UInt8(ascii: "\\")
                            count += 1
                        }
                        out[count] = byte
                        count += 1
                    }
                })
        }
        if kinds.contains(.notUnreserved) {
            let encoded = PercentEncoding.encoded(bytes, keeping: PercentEncoding.unreserved)
            add(encoded)
            // Only a secret with a space has a form-encoded spelling of its own: "%20" as "+".
            if kinds.contains(.space) {
                var form: [UInt8] = []
                form.reserveCapacity(encoded.count)
                var i = 0
                while i < encoded.count {
                    if encoded[i] == UInt8(ascii: "%"), i + 2 < encoded.count, encoded[i + 1] == UInt8(ascii: "2"),
                        encoded[i + 2] == UInt8(ascii: "0")
                    {
                        form.append(UInt8(ascii: "+"))
                        i += 3
                    } else {
                        form.append(encoded[i])
                        i += 1
                    }
                }
                add(form)
            }
            if kinds.contains(.notQuery) { add(PercentEncoding.encoded(bytes, keeping: PercentEncoding.query)) }
        }
        let (base64, base64URL) = Self.base64(bytes)
        add(base64)
        add(base64URL)
        // A multi-line secret (a PEM) may be shown line by line; its `-----BEGIN …-----` lines and lines shorter than
        // 16 characters say nothing.
        // Only a secret with a line-breaking byte (or bytes beyond ASCII, which may be one) has lines to look at.
        if kinds.contains(.lineBreaking) {
            let lines = secret.split(whereSeparator: \.isNewline).map(String.init).filter {
                $0.count >= 16 && !$0.hasPrefix("-----")
            }
            if lines.count > 1 { for line in lines { add(Array(line.utf8)) } }
        }
        return forms
    }

    /// `bytes` in base64 (RFC 4648 §4, padded, as Foundation writes it) and in base64url without the padding (§5, as
    /// JOSE writes it), in one pass: a made token registers kilobytes of each.
    static func base64(_ bytes: [UInt8]) -> (base64: [UInt8], base64URL: [UInt8]) {
        let count = (bytes.count + 2) / 3 * 4
        let padded = [UInt8](unsafeUninitializedCapacity: count) { out, written in
            bytes.withUnsafeBufferPointer { input in
                Self.base64Digits.withUnsafeBufferPointer { digits in
                    var i = 0
                    var o = 0
                    while i + 3 <= input.count {
                        let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        out[o] = digits[Int(n >> 18)]
                        out[o + 1] = digits[Int(n >> 12 & 63)]
                        out[o + 2] = digits[Int(n >> 6 & 63)]
                        out[o + 3] = digits[Int(n & 63)]
                        i += 3
                        o += 4
                    }
                    if i < input.count {
                        let second = i + 1 < input.count ? UInt32(input[i + 1]) : 0
                        let n = UInt32(input[i]) << 16 | second << 8
                        out[o] = digits[Int(n >> 18)]
                        out[o + 1] = digits[Int(n >> 12 & 63)]
                        out[o + 2] = i + 1 < input.count ? digits[Int(n >> 6 & 63)] : UInt8(ascii: "=")
                        out[o + 3] = UInt8(ascii: "=")
                    }
                }
            }
            written = count
        }
        let url = [UInt8](unsafeUninitializedCapacity: count) { out, written in
            written = padded.withUnsafeBytes { Data.base64URLDigits(of: $0, into: out) }
        }
        return (padded, url)
    }

    private static let base64Digits = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
}
