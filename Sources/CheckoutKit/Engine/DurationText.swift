import Foundation

/// Durations as flow files and options write them ("1m30s"), and as the engine measures them (seconds, a `Double`).
extension Duration {
    /// Seconds from "1.5" (a bare number is seconds), "250ms", "2s", "1m", "5h", or a sequence of those from the
    /// largest unit down: "1m30s", "2h15m", "1s500ms". Nil for anything else (a sign, a unit twice, "1s1m").
    public static func seconds(from text: String) -> Double? {
        let t = text.trimmingSpaces().lowercased()
        if let plain = Double(t) { return plain >= 0 && plain.isFinite && !t.hasPrefix("+") ? plain : nil }
        let units: [(suffix: String, seconds: Double)] = [("h", 3600), ("ms", 0.001), ("m", 60), ("s", 1)]
        let order = ["h", "m", "s", "ms"]
        var rest = Substring(t)
        var total = 0.0
        var last = -1
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.suffix) }),
                let position = order.firstIndex(of: unit.suffix), position > last
            else { return nil }
            last = position
            rest = rest.dropFirst(unit.suffix.count)
            total += value * unit.seconds
        }
        return last >= 0 && total.isFinite ? total : nil
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
