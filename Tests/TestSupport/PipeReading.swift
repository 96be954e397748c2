import Foundation

extension FileHandle {
    /// Reads until a line containing `marker` has arrived (or the stream ends) and returns that line.
    /// Background processes print several lines; waiting for the one that matters avoids racing them.
    public func readLine(containing marker: String) -> String? {
        var text = ""
        while true {
            if let line = text.split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
            let chunk = availableData
            if chunk.isEmpty { return nil }
            text += String(decoding: chunk, as: UTF8.self)
        }
    }
}
