import Synchronization

/// Which worker serves each open connection, with connections registered edge-triggered in the shared `epoll` set.
///
/// Edge-triggered, a socket stays in the set while it is served and needs no re-arming system call after each
/// request (a one-shot registration cost one `epoll_ctl` a request). But then a socket can be reported again while a
/// worker serves it — more bytes came — and a report taken from the set may be handled after its connection closed.
/// So a connection's token names a slot here and the slot's generation, and the slot's state says who holds it:
///
/// - `claim(_:)`: a worker with a reported token takes the connection when nobody holds it. When another worker
///   holds it, it marks the slot `again` (and `hungUp`, when the report said the peer closed) and leaves it to the
///   holder; a token of an earlier generation (its connection closed since) is ignored.
/// - `release(_:)`: the holder lets go once it read everything that arrived, unless the slot was marked `again`
///   meanwhile — then it clears the marks and reads once more (the bytes that arrived after its last read, and the
///   close after them when the peer hung up: a close that comes with bytes is reported once).
/// - `empty(_:)`: the holder closed the connection; the slot's next generation may hold another.
///
/// So one worker at a time touches a connection, and no report of new bytes is lost between a holder's last read and
/// its letting go. Described in docs/architecture.md ("The emulator's server").
final class ConnectionSlots: @unchecked Sendable {
    // @unchecked: a slot's connection is written by whoever fills or empties the slot and read by the worker that
    // claimed it; the state's acquire and release order those accesses. The free list is under its lock.
    let capacity: Int
    /// Per slot: the generation in the high 32 bits, `held`, `again` and `hungUp` in the low three.
    private let states: UnsafeMutablePointer<Atomic<UInt64>>
    private let connections: UnsafeMutablePointer<Connection?>
    private let free: Mutex<[UInt32]>

    private static let held: UInt64 = 1
    private static let again: UInt64 = 2
    private static let hungUp: UInt64 = 4
    /// The bit the epoll wait sets in a reported token when the peer hung up (`cepoll_hangup_bit`); not part of the
    /// slot's index.
    static let hangupBit: UInt64 = 1 << 31

    /// What the holder does when it would let go.
    enum Release: Equatable {
        case released
        /// Bytes were reported meanwhile: read again — and on until the close, when the peer hung up.
        case readAgain(hungUp: Bool)
    }

    init(capacity: Int) {
        self.capacity = capacity
        states = .allocate(capacity: capacity)
        connections = .allocate(capacity: capacity)
        for i in 0..<capacity {
            // Generation 1 first: every token is at least 2^32, apart from the pool's own small tokens.
            (states + i).initialize(to: Atomic(1 << 32))
            (connections + i).initialize(to: nil)
        }
        free = Mutex((0..<UInt32(capacity)).reversed())
    }

    deinit {
        connections.deinitialize(count: capacity)
        connections.deallocate()
        states.deinitialize(count: capacity)
        states.deallocate()
    }

    /// Puts the connection `make` builds from its token in a free slot; nil when every slot is taken.
    func fill(_ make: (_ token: UInt64) -> Connection) -> Connection? {
        guard let slot = free.withLock({ $0.popLast() }) else { return nil }
        let index = Int(slot)
        let state = states[index].load(ordering: .relaxed)
        let connection = make((state & ~0xFFFF_FFFF) | UInt64(slot))
        connections[index] = connection
        // Published: a worker that claims the token sees the connection.
        states[index].store(state, ordering: .releasing)
        return connection
    }

    /// Whether a slot is free (asked before closing an idle connection to make room: a newcomer with no slot to take
    /// would be refused all the same).
    var hasRoom: Bool { free.withLock { !$0.isEmpty } }

    /// The connection `token` names, now held by the caller; nil when another worker holds it (it will read again) or
    /// it closed since.
    func claim(_ token: UInt64) -> Connection? {
        let index = Int(token & 0x7FFF_FFFF)
        guard index < capacity else { return nil }
        let hungUp = token & Self.hangupBit != 0 ? Self.hungUp : 0
        var state = states[index].load(ordering: .acquiring)
        while true {
            guard state >> 32 == token >> 32 else { return nil }
            let wanted = state & Self.held == 0 ? state | Self.held : state | Self.again | hungUp
            let (exchanged, actual) = states[index].compareExchange(
                expected: state, desired: wanted, ordering: .acquiringAndReleasing)
            if exchanged { return state & Self.held == 0 ? connections[index] : nil }
            state = actual
        }
    }

    /// Lets go of the connection `token` names, unless new bytes were reported meanwhile (the caller still holds it
    /// and reads again).
    func release(_ token: UInt64) -> Release {
        let index = Int(token & 0x7FFF_FFFF)
        var state = states[index].load(ordering: .relaxed)
        while true {
            let releasing = state & Self.again == 0
            let wanted = releasing ? state & ~Self.held : state & ~(Self.again | Self.hungUp)
            let (exchanged, actual) = states[index].compareExchange(
                expected: state, desired: wanted, ordering: .acquiringAndReleasing)
            if exchanged { return releasing ? .released : .readAgain(hungUp: state & Self.hungUp != 0) }
            state = actual
        }
    }

    /// Frees the slot of a connection its holder closed: reports still carrying the token are ignored from now on. A
    /// connection served outside the set (token 0) has no slot.
    func empty(_ token: UInt64) {
        guard token >> 32 != 0 else { return }
        let index = Int(token & 0x7FFF_FFFF)
        connections[index] = nil
        var generation = (token >> 32) &+ 1
        if generation > 0xFFFF_FFFF { generation = 1 }
        states[index].store(generation << 32, ordering: .releasing)
        free.withLock { $0.append(UInt32(index)) }
    }
}
