import Foundation

extension StringProtocol {
    /// The text without the spaces and tabs around it (Foundation's `CharacterSet.whitespaces`: Unicode's space
    /// separators and the tab), exactly as `trimmingCharacters(in: .whitespaces)` gives it. Text that begins and ends
    /// with a visible ASCII character, as nearly every code, header parameter and duration read does, has nothing to
    /// trim and is returned at once: Foundation's trimming walks it by Unicode properties, which made a run's reading
    /// of its currency cost more than the rest of its amount.
    public func trimmingSpaces() -> String {
        let text = String(self)
        let visible = UInt8(ascii: "!")...UInt8(ascii: "~")
        if let first = text.utf8.first, let last = text.utf8.last, visible.contains(first), visible.contains(last) {
            return text
        }
        return text.trimmingCharacters(in: .whitespaces)
    }
}
