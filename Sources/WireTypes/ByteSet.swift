/// A set of bytes as 256 flags, for what is asked of every byte of a text: which bytes an encoding keeps as they are,
/// which may stand in an HTTP token. A call through a function value for each byte cost more than the work it decided.
/// Inlinable: asked across modules (the redactor, the server) a call per byte cost as much as the answer.
public struct ByteSet: Sendable {
    @usableFromInline let flags: [Bool]

    public init(_ includes: (UInt8) -> Bool) { flags = (0...255).map { includes(UInt8($0)) } }

    @inlinable public func contains(_ byte: UInt8) -> Bool { flags[Int(byte)] }
}
