import Foundation
import Testing

@testable import WireTypes

/// The eight-bytes-at-a-time scan for the end of a JSON string's plain run agrees with a byte-by-byte one, wherever the
/// special byte sits in or across a word, and the quoting and parsing built on it keep every string as it was.
@Suite struct JSONStringScanTests {
    /// The bytes around each boundary the word tests draw (0x1F/0x20, the quote, the backslash, 0x7F/0x80).
    static let edges: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xC3, 0xFF]

    static func special(_ byte: UInt8) -> Bool { byte == 0x22 || byte == 0x5C || byte < 0x20 }

    @Test func aWordHoldsASpecialByteExactlyWhenOneOfItsBytesIs() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in
                Bool.random(using: &generator)
                    ? Self.edges.randomElement(using: &generator)! : UInt8.random(in: 0...255)
            }
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            #expect(JSONStringScan.holdsSpecial(word) == bytes.contains(where: Self.special), "\(bytes)")
        }
        // Each edge byte alone among plain letters, at each of the eight places.
        for edge in Self.edges {
            for place in 0..<8 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[place] = edge
                let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
                #expect(JSONStringScan.holdsSpecial(word) == Self.special(edge), "\(edge) at \(place)")
            }
        }
    }

    @Test func thePlainRunEndsWhereAByteByByteScanEndsIt() {
        for length in 0..<40 {
            for place in 0...length {
                for edge in Self.edges {
                    var bytes = [UInt8](repeating: UInt8(ascii: "x"), count: length)
                    if place < length { bytes[place] = edge }
                    for start in [0, min(3, length)] {
                        let expected = bytes[start...].firstIndex(where: Self.special) ?? length
                        var nonASCII = false
                        let end = bytes.withUnsafeBufferPointer {
                            JSONStringScan.plainEnd(in: $0, from: start, nonASCII: &nonASCII)
                        }
                        #expect(end == expected, "\(bytes) from \(start)")
                        #expect(nonASCII == bytes[start..<expected].contains { $0 >= 0x80 }, "\(bytes) from \(start)")
                    }
                }
            }
        }
    }

    @Test func stringsWithEscapesAnywhereRoundTrip() throws {
        let pieces = ["a", "\"", "\\", "\n", "\t", "\u{01}", "\u{1F}", "é", "€", "😀", "/", " ", "abcdefgh"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            let written = JSON.string(text).serialized()
            #expect(try JSON.parse(Data(written.utf8)) == .string(text), "\(written)")
            // Foundation agrees on what was written.
            let foundation = try JSONSerialization.jsonObject(with: Data(written.utf8), options: .fragmentsAllowed)
            #expect(foundation as? String == text)
        }
    }
}
