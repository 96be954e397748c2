/// A small RFC 8259 parser straight from UTF-8 bytes into `JSON`.
///
/// Foundation's JSONSerialization goes through NSDictionary/NSNumber bridging, which made parsing the
/// largest cost of a flow step (flow files and every response body pass through here); reading bytes
/// directly is several times faster and gives line/column positions in errors.
struct JSONParser {
    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    static func parse(_ bytes: [UInt8]) throws(JSON.ParseError) -> JSON {
        var parser = JSONParser(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    /// Where the plain run of a string's bytes from `start` ends (`JSONStringScan.plainEnd`).
    private func plainEnd(from start: Int, nonASCII: inout Bool) -> Int {
        bytes.withUnsafeBufferPointer { JSONStringScan.plainEnd(in: $0, from: start, nonASCII: &nonASCII) }
    }

    private func error(_ message: String) -> JSON.ParseError {
        var line = 1
        var column = 1
        for b in bytes[..<min(index, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        let atEnd = index >= bytes.count ? " (the text ends early — truncated?)" : ""
        return JSON.ParseError(description: "\(message) at line \(line), column \(column)\(atEnd)")
    }

    private mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    private mutating func value() throws(JSON.ParseError) -> JSON {
        guard index < bytes.count else { throw error("expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSON.ParseError) {
        let n = word.utf8CodeUnitCount
        guard index + n <= bytes.count else { throw error("expected \(word)") }
        for i in 0..<n where bytes[index + i] != word.utf8Start[i] { throw error("expected \(word)") }
        index += n
    }

    private mutating func nest() throws(JSON.ParseError) {
        depth += 1
        if depth > 512 { throw error("nested too deeply") }
    }

    private mutating func object() throws(JSON.ParseError) -> JSON {
        try nest()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // Each object's members read into an array of its own, which becomes the object: members kept on one stack for
        // all open objects were copied out and dropped again through generic code, a few hundred instructions an
        // object.
        var members: [JSON.Object.Member] = []
        members.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a quoted key") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after a key")
            }
            index += 1
            skipWhitespace()
            members.append(JSON.Object.Member(key: key, value: try value()))
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            }
            throw error("expected ',' or '}'")
        }
        return .object(JSON.Object(parsed: members))  // a repeated key: the last one counts
    }

    private mutating func array() throws(JSON.ParseError) -> JSON {
        try nest()
        defer { depth -= 1 }
        index += 1
        var result: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(result)
        }
        while true {
            skipWhitespace()
            result.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw error("expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(result)
            }
            throw error("expected ',' or ']'")
        }
    }

    private mutating func string() throws(JSON.ParseError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes. The plain run is found eight bytes at a time (`JSONStringScan`).
        var nonASCII = false
        index = plainEnd(from: index, nonASCII: &nonASCII)
        if index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                let s = Self.text(bytes[start..<index], ascii: !nonASCII)
                index += 1
                guard let s else { throw error("invalid UTF-8 in a string") }
                return s
            }
            if b < 0x20 { throw error("control character in a string") }
        }
        var ascii = !nonASCII
        var out = Array(bytes[start..<index])
        while index < bytes.count {
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                guard let s = Self.text(out[...], ascii: ascii) else { throw error("invalid UTF-8 in a string") }
                return s
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let e = bytes[index]
                index += 1
                if let plain = JSON.unescaped(e) {
                    out.append(plain)
                    continue
                }
                guard e == UInt8(ascii: "u") else { throw error("invalid escape '\\\(Character(Unicode.Scalar(e)))'") }
                var scalar = try hex4()
                if (0xD800..<0xDC00).contains(scalar), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    index += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw error("invalid surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw error("invalid \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                // A run of plain bytes up to the next quote or escape, copied at once: a GraphQL document sent as a
                // string has an escaped line break every few dozen bytes, and byte-by-byte appends were most of its
                // parse.
                // (What a \u escape writes is valid UTF-8 by construction; only bytes as given need checking.)
                let run = index
                var nonASCII = false
                index = plainEnd(from: index, nonASCII: &nonASCII)
                if nonASCII { ascii = false }
                if index < bytes.count, bytes[index] < 0x20 { throw error("control character in a string") }
                out.append(contentsOf: bytes[run..<index])
            }
        }
        throw error("unterminated string")
    }

    /// UTF-8 bytes as a string; nil when they are not valid UTF-8. Decoding repairs what is invalid with U+FFFD, which
    /// never reads back as the bytes given, so text that reads back unchanged was valid — and text all ASCII (nearly
    /// every key and value) is valid as it is. (The standard library's validating initialiser is not specialised for
    /// this and cost about a thousand instructions a string, a third of a response's parse.)
    private static func text(_ bytes: ArraySlice<UInt8>, ascii: Bool) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        return ascii || text.withUTF8({ written in bytes.withUnsafeBufferPointer { written.elementsEqual($0) } })
            ? text : nil
    }

    private mutating func hex4() throws(JSON.ParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            v = v * 16 + d
            index += 1
        }
        return v
    }

    private mutating func number() throws(JSON.ParseError) -> JSON {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let s = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - s
        }
        let whole = index
        guard digits() > 0 else { throw error("expected digits") }
        // RFC 8259: no leading zeros. The number is kept as written, so it must be written as JSON writes one.
        if bytes[whole] == UInt8(ascii: "0"), index - whole > 1 {
            index = whole
            throw error("a number with a leading zero")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("expected digits after '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { throw error("expected digits in the exponent") }
        }
        // Kept as written (JSON.Number): "12.00" stays "12.00".
        return .number(JSON.Number(checked: String(decoding: bytes[start..<index], as: UTF8.self)))
    }
}
