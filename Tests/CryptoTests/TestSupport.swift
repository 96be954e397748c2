import Foundation

/// Hex test-vector literal; crashes the test on a typo rather than testing the wrong bytes.
func hex(_ string: String) -> Data {
    guard let data = Data(hex: string) else { fatalError("bad hex literal: \(string)") }
    return data
}

/// base64url test-vector literal.
func b64u(_ string: String) -> Data {
    guard let data = Data(base64URLEncoded: string) else { fatalError("bad base64url literal: \(string)") }
    return data
}

extension Data {
    /// A copy with one bit flipped at `index`.
    func flippingBit(at index: Int) -> Data {
        var copy = self
        copy[copy.startIndex + index] ^= 0x01
        return copy
    }
}
