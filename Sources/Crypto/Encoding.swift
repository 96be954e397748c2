import Foundation

extension Data {
    /// Lowercase hex, two digits per byte.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hex (either case). Returns nil for odd length or any non-hex character.
    public init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = nibble(chars[index]), let low = nibble(chars[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        self.init(bytes)
    }

    /// base64url without padding (RFC 4648 §5, as JOSE uses it: RFC 7515 §2).
    public func base64URLEncodedString() -> String {
        // Byte by byte, not three passes of Foundation's substring replacement: JWS signing and the redactor's
        // registration of every token do this on each run of a batch.
        var bytes: [UInt8] = []
        bytes.reserveCapacity((count + 2) / 3 * 4)
        for byte in base64EncodedData() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): bytes.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Decodes unpadded base64url. Standard-alphabet characters ("+", "/") and padding
    /// are rejected, so a value in the wrong encoding is noticed rather than half-accepted.
    /// Byte by byte, as the encoder: every JWS, JWT and token the emulator checks is decoded here.
    public init?(base64URLEncoded string: String) {
        // A remainder of 1 can never come out of an encoder.
        guard string.utf8.count % 4 != 1 else { return nil }
        var standard: [UInt8] = []
        standard.reserveCapacity((string.utf8.count + 3) / 4 * 4)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="): return nil
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        standard += repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        self.init(base64Encoded: Data(standard))
    }
}
