import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom`): Foundation's `UUID()` opens, reads and
    /// closes `/dev/urandom` for each one, and a checkout makes a dozen (request ids, idempotency keys, run ids).
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let bytes = (generator.next() as UInt64, generator.next() as UInt64)
        var uuid = withUnsafeBytes(of: bytes) { raw in
            (
                raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
            )
        }
        uuid.6 = (uuid.6 & 0x0F) | 0x40  // version 4
        uuid.8 = (uuid.8 & 0x3F) | 0x80  // RFC 4122 variant
        return UUID(uuid: uuid)
    }
}
