/// Where a plain run of a JSON string's bytes ends — at a quote, a backslash or a control character, the bytes a JSON
/// string cannot hold as they are — looked for eight bytes at a time. JSON text is mostly plain runs (a report's step
/// outputs, a GraphQL document), and scanning them a byte at a time was most of what writing (`JSON.quote`) and
/// reading (`JSONParser`) strings cost.
enum JSONStringScan {
    /// The index of the first quote, backslash or byte below 0x20 in `bytes` at or after `start`, else `bytes.count`.
    /// `nonASCII` is set when a byte before it is 0x80 or above (UTF-8 beyond ASCII, which a reader must validate).
    @inline(__always)
    static func plainEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCII: inout Bool) -> Int {
        guard let base = bytes.baseAddress else { return start }
        let count = bytes.count
        var index = start
        var seen: UInt64 = 0
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if holdsSpecial(word) { break }
            seen |= word
            index += 8
        }
        while index < count {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            seen |= UInt64(byte)
            index += 1
        }
        if seen & highBits != 0 { nonASCII = true }
        return index
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether one of the word's eight bytes is a quote, a backslash or below 0x20. Each test is the classic "has a
    /// byte less than n" (`(w - n·ones) & ~w & high`; a quote or backslash is a zero byte of `w ^ c·ones`): exact for
    /// the word as a whole, which is all the scan asks, and a byte of 0x80 or above never counts.
    @inline(__always)
    static func holdsSpecial(_ word: UInt64) -> Bool {
        let control = (word &- ones &* 0x20) & ~word
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let quoted = (quote &- ones) & ~quote
        let escaped = (backslash &- ones) & ~backslash
        return (control | quoted | escaped) & highBits != 0
    }
}

/// Tells, byte by byte, which bytes of JSON text are inside strings: what a look at the text's structure needs (is it
/// cut short, where does an element start) without parsing it.
public struct JSONTextScan {
    public enum Byte: Equatable {
        /// Outside any string: structure, numbers, literals, white space.
        case structure
        /// The quote that opens a string.
        case opening
        /// Inside a string, its escapes included.
        case inString
        /// The quote that closes a string.
        case closing
    }

    public private(set) var inString = false
    private var escaped = false

    public init() {}

    public mutating func read(_ byte: UInt8) -> Byte {
        guard inString else {
            guard byte == UInt8(ascii: "\"") else { return .structure }
            inString = true
            return .opening
        }
        if escaped {
            escaped = false
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            inString = false
            return .closing
        }
        return .inString
    }
}
