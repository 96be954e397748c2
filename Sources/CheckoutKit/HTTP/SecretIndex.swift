import Foundation

/// A secret's bytes, hashed in one call: `[UInt8]`'s own hashing feeds the hasher one byte at a time, which for a made
/// token's few kilobytes in a dozen encodings cost more than the cryptography that made the token.
private struct SecretBytes: Hashable {
    let bytes: [UInt8]

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { Self.combineEnds(of: $0, into: &hasher) }
    }

    /// The length and the first and last 32 bytes: a token's spellings run to kilobytes, and hashing all of each on
    /// every lookup cost more than the lookups. Secrets that differ only in between are told apart by `==`. The ends go
    /// to the hasher folded into one word (a multiply a word): hashing the 64 bytes themselves cost more still, as each
    /// form of a run's secrets is hashed a dozen times between its registration and its run's end.
    static func combineEnds(of all: UnsafeRawBufferPointer, into hasher: inout Hasher) {
        hasher.combine(all.count)
        hasher.combine(folded(ends: all))
    }

    /// The first and last (up to) 32 bytes, eight at a time, folded into one word.
    static func folded(ends bytes: UnsafeRawBufferPointer) -> UInt64 {
        var folded: UInt64 = 0
        func fold(_ word: UInt64) { folded = ((folded ^ word) &* 0x9E37_79B9_7F4A_7C15) ^ (folded >> 29) }
        func word(at offset: Int) -> UInt64 { bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
        guard bytes.count >= 8 else {
            for byte in bytes { fold(UInt64(byte)) }
            return folded
        }
        for offset in stride(from: 0, through: min(bytes.count, 32) - 8, by: 8) { fold(word(at: offset)) }
        for offset in stride(from: bytes.count - 8, through: max(0, bytes.count - 32), by: -8) {
            fold(word(at: offset))
        }
        return folded
    }
}

/// A value as given to `Redactor.register`, hashed as `SecretBytes` is: a String hashes all its bytes, and a made
/// token is registered whole (kilobytes) and looked up again on every later registration.
private struct SecretText: Hashable {
    let text: String

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { SecretBytes.combineEnds(of: UnsafeRawBufferPointer($0), into: &hasher) }
    }

    /// The same bytes, as it is hashed: `String`'s `==` takes two normal forms of one text for the same, and a value
    /// written in the other would be taken for registered, its own spellings never made.
    /// (One `memcmp`: a made token is kilobytes, and a lookup that finds it compares it whole.)
    static func == (a: SecretText, b: SecretText) -> Bool {
        var (x, y) = (a.text, b.text)
        return x.withUTF8 { x in
            y.withUTF8 { y in x.count == y.count && (x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0)
            }
        }
    }
}

/// The secret values a redactor knows, indexed by their first bytes: masking is one pass over the text, looking up each
/// position's first `prefixLength` bytes, so its cost does not grow with the number of secrets (a batch of a thousand
/// runs registers thousands of tokens and keys).
struct SecretIndex {
    /// Every secret is at least this long (shorter ones say nothing and are never registered).
    static let prefixLength = 6

    /// Who keeps a value or a form: the process, for good, or the runs that registered it, until each is forgotten.
    enum Holders {
        case process
        case runs(Set<String>)

        /// Whether registering again for `run` (nil: the process) would change nothing.
        func covers(_ run: String?) -> Bool {
            switch self {
            case .process: true
            case .runs(let runs): run.map(runs.contains) ?? false
            }
        }

        mutating func add(_ run: String?) {
            guard case .runs(var runs) = self, let run else {
                self = .process
                return
            }
            runs.insert(run)
            self = .runs(runs)
        }
    }

    /// Every form known, who holds it, and the generation it was learned at (its place in `ordered`).
    private var known: [SecretBytes: (holders: Holders, generation: Int)] = [:]
    /// The values `Redactor.register` was given, as given, who holds each, and the forms made of it: registering one
    /// again costs a lookup, and for another holder (a run's rotated session token, which the state file then keeps for
    /// the process) its forms as they were made, not made again.
    private var registered: [SecretText: (holders: Holders, forms: [[UInt8]])] = [:]
    /// What each run registered, values and forms, so that forgetting a run costs what it registered, not what the
    /// whole batch did.
    private var byRun: [String: (values: [String], forms: [SecretBytes])] = [:]
    /// The first bytes of every form: most positions of a text start no secret, and one bit test says so without a
    /// dictionary lookup. A million bits stay sparse with the tens of thousands of forms a long batch registers (each
    /// run's tokens, each in a dozen encodings); 65,536 would be a third full by then.
    private var maybe = PrefixFilter(bits: 20)
    /// Secrets by their first bytes, longest first, so that a secret containing another is masked whole.
    private var byPrefix: [UInt64: [[UInt8]]] = [:]

    /// Every form learned, in the order learned, each with its generation: how many forms had been learned before it
    /// (forgotten ones included), so that the generation only grows. A forgotten form stays listed, marked, until they
    /// are half the list (`forms(since:)` passes over them): dropping it at once would cost the whole list for each run
    /// forgotten.
    private var ordered: [(generation: Int, bytes: [UInt8], forgotten: Bool)] = []
    private var forgottenInOrder = 0
    private(set) var generation = 0

    var all: [String] {
        known.keys.map { String(decoding: $0.bytes, as: UTF8.self) }.sorted { $0.utf8.count > $1.utf8.count }
    }

    /// The forms learned at `generation` or later and still known, oldest first.
    func forms(since generation: Int) -> [[UInt8]] {
        ordered[position(of: generation)...].compactMap { $0.forgotten ? nil : $0.bytes }
    }

    /// Where in `ordered` the forms learned at `generation` or later begin.
    private func position(of generation: Int) -> Int {
        var low = 0
        var high = ordered.count
        while low < high {
            let middle = (low + high) / 2
            if ordered[middle].generation < generation { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Registers `value` for `run` (nil: the process) when it was given to `Redactor.register` before, by anyone, with
    /// the forms made of it then: false when it never was, and its forms must be made.
    mutating func registerAgain(_ value: String, for run: String?) -> Bool {
        guard let known = registered[SecretText(text: value)] else { return false }
        if !known.holders.covers(run) { register(value, forms: known.forms, for: run) }
        return true
    }

    /// Notes a value as given to `Redactor.register`, for `run` (nil: the process), and adds its forms.
    mutating func register(_ value: String, forms: [[UInt8]], for run: String?) {
        let key = SecretText(text: value)
        let known = registered[key]
        if let run, !(known?.holders.covers(run) ?? false) { byRun[run, default: ([], [])].values.append(value) }
        var holders = known?.holders ?? .runs([])
        holders.add(run)
        registered[key] = (holders, known?.forms ?? forms)
        for form in forms { insert(form, for: run) }
    }

    mutating func insert(_ bytes: [UInt8], for run: String? = nil) {
        guard bytes.count >= Self.prefixLength else { return }
        let form = SecretBytes(bytes: bytes)
        // One lookup of the form (its hash reads 64 bytes), however it ends: a made token registers a dozen spellings.
        if let at = known.index(forKey: form) {
            if let run, !known.values[at].holders.covers(run) { byRun[run, default: ([], [])].forms.append(form) }
            known.values[at].holders.add(run)
            return
        }
        if let run { byRun[run, default: ([], [])].forms.append(form) }
        known[form] = (run.map { .runs([$0]) } ?? .process, generation)
        ordered.append((generation, bytes, false))
        generation += 1
        let key = PrefixFilter.key(bytes, at: 0)
        maybe.insert(key)
        // Longest first, placed rather than sorted: nearly every prefix has one secret.
        var sharing = byPrefix.removeValue(forKey: key) ?? []
        sharing.insert(bytes, at: sharing.firstIndex { $0.count < bytes.count } ?? sharing.count)
        byPrefix[key] = sharing
    }

    /// Drops the values and forms only `run` held. The bits of the quick test stay: a bit set in vain costs one lookup.
    mutating func forget(_ run: String) {
        guard let mine = byRun.removeValue(forKey: run) else { return }
        for value in mine.values {
            let key = SecretText(text: value)
            guard let known = registered[key], case .runs(let runs) = known.holders, runs.contains(run) else {
                continue
            }
            registered[key] = runs.count == 1 ? nil : (.runs(runs.subtracting([run])), known.forms)
        }
        var gone = 0
        for form in mine.forms {
            guard let entry = known[form], case .runs(let runs) = entry.holders, runs.contains(run) else { continue }
            guard runs.count == 1 else {
                known[form]!.holders = .runs(runs.subtracting([run]))
                continue
            }
            known[form] = nil
            let at = position(of: entry.generation)
            if at < ordered.count && ordered[at].generation == entry.generation {
                ordered[at] = (entry.generation, [], true)
            }
            gone += 1
            let key = PrefixFilter.key(form.bytes, at: 0)
            byPrefix[key]?.removeAll { $0 == form.bytes }
            if byPrefix[key]?.isEmpty == true { byPrefix[key] = nil }
        }
        forgottenInOrder += gone
        if forgottenInOrder * 2 > ordered.count {
            ordered.removeAll { $0.forgotten }
            forgottenInOrder = 0
        }
    }

    /// `text` with each occurrence of a known secret replaced by `mask`, the longest match at each position first; nil
    /// when none occurs in it.
    func masking(_ text: String, with mask: String) -> String? {
        guard !byPrefix.isEmpty, text.utf8.count >= Self.prefixLength else { return nil }
        // Read where the string keeps its bytes (a copy of each string of a report cost a fifth of masking it).
        if let masked = text.utf8.withContiguousStorageIfAvailable({ masking($0, with: mask) }) { return masked }
        return Array(text.utf8).withUnsafeBufferPointer { masking($0, with: mask) }
    }

    private func masking(_ bytes: UnsafeBufferPointer<UInt8>, with mask: String) -> String? {
        let last = bytes.count - Self.prefixLength
        var out: [UInt8] = []
        var copiedUpTo = 0
        var i = 0
        // The key of the bytes at `i`, rolled on by one byte at each step rather than read anew.
        var key = PrefixFilter.key(bytes, at: 0)
        while true {
            if maybe.mayContain(key), let candidates = byPrefix[key],
                let match = candidates.first(where: {
                    i + $0.count <= bytes.count && memcmp(bytes.baseAddress! + i, $0, $0.count) == 0
                })
            {
                if out.isEmpty { out.reserveCapacity(bytes.count) }
                out.append(contentsOf: bytes[copiedUpTo..<i])
                out.append(contentsOf: mask.utf8)
                i += match.count
                copiedUpTo = i
                guard i <= last else { break }
                key = PrefixFilter.key(bytes, at: i)
            } else {
                i += 1
                guard i <= last else { break }
                key = (key << 8 | UInt64(bytes[i + Self.prefixLength - 1])) & PrefixFilter.keyBits
            }
        }
        guard copiedUpTo > 0 else { return nil }
        out.append(contentsOf: bytes[copiedUpTo...])
        return String(decoding: out, as: UTF8.self)
    }

}

/// Which runs of `SecretIndex.prefixLength` bytes (the start of any secret) may occur somewhere: one bit per hash of
/// each, so that "could this secret be here?" is most often answered "no" by one bit test. A bit set may be another
/// run's: a "yes" must be confirmed by a search. Nothing is ever taken out.
struct PrefixFilter {
    private var words: [UInt64]
    private let shift: UInt64

    /// 2^`bits` bits.
    init(bits: Int) {
        words = [UInt64](repeating: 0, count: 1 << (bits - 6))
        shift = UInt64(64 - bits)
    }

    /// The first `SecretIndex.prefixLength` bytes from `start`, as one number.
    static func key<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at start: Int) -> UInt64
    where Bytes.Index == Int {
        var key: UInt64 = 0
        for offset in 0..<SecretIndex.prefixLength { key = key << 8 | UInt64(bytes[start + offset]) }
        return key
    }

    /// The bits a key has: `SecretIndex.prefixLength` bytes' worth.
    static let keyBits: UInt64 = 1 << UInt64(8 * SecretIndex.prefixLength) - 1

    mutating func insert(_ key: UInt64) {
        let bit = self.bit(key)
        words[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Every run of the prefix length in `text`.
    mutating func insertEvery(in text: [UInt8]) {
        let length = SecretIndex.prefixLength
        guard text.count >= length else { return }
        var key: UInt64 = 0
        for (i, byte) in text.enumerated() {
            key = (key << 8 | UInt64(byte)) & Self.keyBits
            if i >= length - 1 { insert(key) }
        }
    }

    func mayContain(_ key: UInt64) -> Bool {
        let bit = self.bit(key)
        return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    /// Whether `form` may occur in a text all of whose runs were inserted (a form shorter than a run: it may).
    /// Every run of a form that occurs is in the text, so its first, its last and two between are looked at: of a
    /// filter a fifth full (a record of spent values grown from 8 members to 200 since its filter was made), one run
    /// answers "may" for a form that is not there one time in five, four runs about one time in six hundred.
    func mayHold(_ form: [UInt8]) -> Bool {
        let length = SecretIndex.prefixLength
        guard form.count >= length else { return true }
        let last = form.count - length
        for part in 0...3 where !mayContain(Self.key(form, at: last * part / 3)) { return false }
        return true
    }

    /// The filter's size, as `init(bits:)` was given it.
    var bits: Int { words.count.trailingZeroBitCount + 6 }

    private func bit(_ key: UInt64) -> Int {
        Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }
}
