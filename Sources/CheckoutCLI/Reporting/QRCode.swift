import CQRencode

/// A QR code symbol of a text, encoded by libqrencode, and drawn for a terminal.
struct QRCode: Equatable {
    /// Modules per side.
    let width: Int
    /// Row by row, true for a dark module.
    let modules: [Bool]

    /// Error correction M (15 %), byte mode: what phone scanners read best from a screen. Nil when the text is too
    /// long for any QR version or libqrencode fails.
    init?(_ text: String) {
        guard let symbol = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(symbol) }
        let width = Int(symbol.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits say what the module is part of.
        modules = (0..<width * width).map { symbol.pointee.data[$0] & 1 == 1 }
        self.width = width
    }

    init(width: Int, modules: [Bool]) {
        self.width = width
        self.modules = modules
    }

    func isDark(_ row: Int, _ column: Int) -> Bool {
        row >= 0 && row < width && column >= 0 && column < width && modules[row * width + column]
    }

    /// The quiet zone a scanner needs around the symbol, in modules (the standard asks for 4).
    static let quietZone = 4

    /// Two module rows per text line with half blocks, dark modules drawn as the terminal's background and light ones
    /// as its foreground ("inverted"), so the code reads on a dark terminal as on paper.
    func terminalLines() -> [String] {
        let range = -Self.quietZone..<(width + Self.quietZone)
        return stride(from: range.lowerBound, to: range.upperBound, by: 2).map { row in
            String(
                range.map { column -> Character in
                    switch (isDark(row, column), isDark(row + 1, column)) {
                    case (false, false): "█"
                    case (false, true): "▀"
                    case (true, false): "▄"
                    case (true, true): " "
                    }
                })
        }
    }
}
