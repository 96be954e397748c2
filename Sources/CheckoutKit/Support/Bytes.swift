import Foundation

/// Searches in bytes, for what is looked up often enough that Foundation's `range(of:)` (through `NSData`) costs.
enum Bytes {
    /// Whether `needle` occurs in `haystack`: memchr to each candidate first byte, memcmp for the rest (glibc's memmem
    /// is not in the module). A state file's parts are asked for the secrets learned since, a token file for its parts.
    static func occurs(_ needle: [UInt8], in haystack: [UInt8]) -> Bool {
        guard let first = needle.first, needle.count <= haystack.count else { return needle.isEmpty }
        return needle.withUnsafeBytes { n in
            haystack.withUnsafeBytes { h in
                var offset = 0
                let last = h.count - n.count
                while offset <= last, let hit = memchr(h.baseAddress! + offset, Int32(first), last - offset + 1) {
                    if memcmp(hit, n.baseAddress!, n.count) == 0 { return true }
                    offset = UnsafeRawPointer(hit) - h.baseAddress! + 1
                }
                return false
            }
        }
    }
}
