import Foundation

extension Data {
    /// Lowercase hex, two digits per byte.
    public var hexString: String {
        let digits: StaticString = "0123456789abcdef"
        // Through the bytes' buffer, not `Data`'s iterator, which costs tens of instructions a byte.
        return withUnsafeBytes { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { out in
                for (i, byte) in bytes.enumerated() {
                    out[2 * i] = digits.utf8Start[Int(byte >> 4)]
                    out[2 * i + 1] = digits.utf8Start[Int(byte & 0x0f)]
                }
                return bytes.count * 2
            }
        }
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
        // Byte by byte through the encoded bytes' buffer — not three passes of Foundation's substring replacement, nor
        // `Data`'s iterator (tens of instructions a byte): JWS signing and the redactor's registration of every token
        // do this on each run of a batch.
        base64EncodedData().withUnsafeBytes { encoded in
            String(unsafeUninitializedCapacity: encoded.count) { Data.base64URLDigits(of: encoded, into: $0) }
        }
    }

    /// base64's digits (`encoded`) written into `out` as base64url's — the same but two, without the padding —
    /// answering how many were written (at most as many as given). The one respelling: JOSE's encoder and the
    /// redactor's spellings of a secret both go through it.
    public static func base64URLDigits(
        of encoded: UnsafeRawBufferPointer, into out: UnsafeMutableBufferPointer<UInt8>
    )
        -> Int
    {
        var count = 0
        for byte in encoded {
            switch byte {
            case UInt8(ascii: "+"): out[count] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): out[count] = UInt8(ascii: "_")
            case UInt8(ascii: "="): continue
            default: out[count] = byte
            }
            count += 1
        }
        return count
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
