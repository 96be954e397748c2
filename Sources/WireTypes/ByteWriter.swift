/// Bytes written into memory of its own, for the JSON serializer and the emulator's response heads:
/// `Array.append(contentsOf:)` costs about a hundred instructions a call whatever it copies, and a JSON document is
/// written in thousands of short runs — keys, words, indentation — as a head is in a dozen. Here an append is a
/// capacity check and a copy.
public struct ByteWriter: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    public private(set) var count = 0

    public init(capacity: Int = 256) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity { grow(toHold: count + bytes.count) }
        assert(count + bytes.count <= capacity, "grown too little")
        (base + count).initialize(from: source, count: bytes.count)
        count += bytes.count
    }

    public mutating func append(_ text: StaticString) {
        // (Through its buffer: a one-character `StaticString` may be kept as a scalar, with no bytes to point at.)
        text.withUTF8Buffer { append($0) }
    }

    public mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) { append(bytes.assumingMemoryBound(to: UInt8.self)) }

    /// A whole number in decimal, without making a string of it first.
    public mutating func append(decimal value: Int) {
        if value < 0 { append(UInt8(ascii: "-")) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of any Int's magnitude
        withUnsafeMutableBytes(of: &digits) { room in
            var rest = value.magnitude
            var start = room.count
            repeat {
                start -= 1
                room[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            append(UnsafeRawBufferPointer(rebasing: room[start...]))
        }
    }

    /// Room for at least `needed` bytes, the capacity at least doubled so that appends stay amortised constant time.
    private mutating func grow(toHold needed: Int) {
        let grownCapacity = max(capacity * 2, needed)
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: grownCapacity)
        grown.initialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = grownCapacity
    }

    /// What was written, appended to `out` in one copy.
    public func append(to out: inout [UInt8]) { out.append(contentsOf: UnsafeBufferPointer(start: base, count: count)) }

    /// What was written, as an array of its own.
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: base, count: count)) }

    /// What was written, lent to `body` without a copy.
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }
}
