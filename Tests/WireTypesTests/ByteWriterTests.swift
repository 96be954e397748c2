import Testing

@testable import WireTypes

/// The byte writer behind the JSON serializer and the emulator's response heads.
@Suite struct ByteWriterTests {
    @Test func wholeNumbersAreWrittenInDecimal() {
        for value in [0, 7, 10, 200, 1_000_000, -1, -42, Int.max, Int.min] {
            var out = ByteWriter(capacity: 1)
            out.append(decimal: value)
            #expect(String(decoding: out.bytes, as: UTF8.self) == String(value))
        }
    }

    @Test func piecesAreWrittenInOrderPastTheFirstCapacity() {
        var out = ByteWriter(capacity: 1)
        out.append("HTTP/1.1 ")
        out.append(decimal: 404)
        out.append(0x20)
        out.append(String(repeating: "é", count: 20))
        [UInt8]("\r\n".utf8).withUnsafeBytes { out.append($0) }
        let expected = "HTTP/1.1 404 " + String(repeating: "é", count: 20) + "\r\n"
        #expect(out.count == expected.utf8.count)
        #expect(out.withBytes { Array($0) } == Array(expected.utf8))
    }
}
